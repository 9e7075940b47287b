// Generate Images from File, run again: the lines paid for without their images (in flight when a
// window closed, or failed after the gateway charged or may have charged, here or in a run of another
// window) go again only when the user says so; a line in flight now, here or elsewhere, never does.
import * as vscode from 'vscode';
import type { BatchLine } from '../../core/requests/batchFile';
import { trPlural } from '../../core/common/plural';
import type { LineOutcome } from '../../jobs/promptFiles/batch';
import type { HeldLine } from '../../jobs/promptFiles/heldLines';
import { type Services } from '../../services';

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
  const askable = held.filter(services.results().resendable);
  const again = askable.length > 0 && (resend === 'ask' ? await askResend(services, name, askable) : resend) ? askable : [];
  const todo = [...send, ...again.map((h) => h.line)].sort((a, b) => a.line - b.line);
  return { todo, kept: held.filter((h) => !again.includes(h)).map(services.results().heldOutcome) };
}

/** Asks whether the lines paid for without their images go again (sending them may pay twice). */
async function askResend(services: Services, name: string, held: HeldLine[]): Promise<boolean> {
  const again = vscode.l10n.t('Send Again');
  const numbers = held.map((h) => h.line.line).join(', ');
  const why = held.map(
    (h) =>
      `${h.line.line}: ${
        h.elsewhere
          ? services.results().heldOutcome(h).error
          : (h.entry?.failed ?? (h.entry?.outcomeUnknown ? vscode.l10n.t('in flight when the window closed') : vscode.l10n.t('charged when the window closed')))
      }`,
  );
  const answer = await vscode.window.showWarningMessage(
    trPlural(
      held.length,
      {
        one: '{0} line of {1} was paid for, or may have been, and its images did not arrive (line {2}). Send it again and pay again?',
        other: '{0} lines of {1} were paid for, or may have been, and their images did not arrive (lines {2}). Send them again and pay again?',
      },
      held.length,
      name,
      numbers,
    ),
    {
      modal: true,
      detail: [...why, '', vscode.l10n.t('Gateway Images: Recover Unsaved Images lists what arrived of them. The other lines are sent as usual.')].join('\n'),
    },
    again,
  );
  return answer === again;
}
