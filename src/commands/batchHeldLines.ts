// Generate Images from File, run again after a window closed mid-run: the lines that were in flight
// then (it is unknown whether they were charged, or they were and nothing whole arrived) go again
// only when the user says so; a line in flight now never does.
import * as vscode from 'vscode';
import type { BatchLine } from '../core/batchFile';
import { trPlural } from '../core/plural';
import type { LineOutcome } from '../jobs/batch';
import type { HeldLine } from '../jobs/heldLines';
import { type Services } from '../services';

/**
 * The lines to send (those not held, and the held ones the user sends again, in file order) and the
 * report's outcomes of the lines kept back. `resend`: ask the user (the UI), or what the arguments say.
 */
export async function decideHeldLines(
  services: Services,
  name: string,
  send: readonly BatchLine[],
  held: readonly HeldLine[],
  resend: 'ask' | boolean,
): Promise<{ todo: BatchLine[]; kept: LineOutcome[] }> {
  const askable = held.filter((h) => h.entry);
  const again = askable.length > 0 && (resend === 'ask' ? await askResend(name, askable) : resend) ? askable : [];
  const todo = [...send, ...again.map((h) => h.line)].sort((a, b) => a.line - b.line);
  return { todo, kept: held.filter((h) => !again.includes(h)).map(services.results().heldOutcome) };
}

/** Asks whether the lines in flight when the window closed go again (they may have been charged). */
async function askResend(name: string, held: HeldLine[]): Promise<boolean> {
  const again = vscode.l10n.t('Send Again');
  const numbers = held.map((h) => h.line.line).join(', ');
  const answer = await vscode.window.showWarningMessage(
    trPlural(
      held.length,
      {
        one: '{0} line of {1} was in flight when the window closed (line {2}): it may have been charged. Send it again?',
        other: '{0} lines of {1} were in flight when the window closed (lines {2}): they may have been charged. Send them again?',
      },
      held.length,
      name,
      numbers,
    ),
    { modal: true, detail: vscode.l10n.t('Gateway Images: Recover Unsaved Images lists what arrived of them. The other lines are sent as usual.') },
    again,
  );
  return answer === again;
}
