// Lines of a prompt file that a re-run does not send by itself, once the resume (planResume) has
// skipped the lines done (images in the workspace or the recovery folder):
// - a line whose newest result is `interrupted` (its request was in flight when the extension host
//   died, see interrupted.ts) and left no whole image: held until the user says, it may have been
//   charged;
// - a line with an in-flight record now (its request runs in this or another window, or a dead
//   host left it and it is not settled yet): not sent.
// No vscode import.
import * as l10n from '@vscode/l10n';
import type { BatchLine } from '../core/batchFile';
import type { LineOutcome } from './batch';
import { batchKey, type BatchTag, type ResultsIndex, type ResultSummary } from './resultsIndex';

export interface HeldLine {
  line: BatchLine;
  /** Its newest result, interrupted; absent when the line's request is in flight now. */
  entry?: ResultSummary;
}

/** Splits the lines to send into those that go and those held (see above); `inFlight`: the batch tags of the in-flight records on disk. */
export function holdInterruptedLines(
  file: string,
  lines: readonly BatchLine[],
  index: Pick<ResultsIndex, 'findBatch'>,
  inFlight: readonly BatchTag[],
): { send: BatchLine[]; held: HeldLine[] } {
  const running = new Set(inFlight.map(batchKey));
  const send: BatchLine[] = [];
  const held: HeldLine[] = [];
  for (const line of lines) {
    const tag = { file, line: line.line, key: line.key };
    const entry = index.findBatch(tag).at(-1);
    if (running.has(batchKey(tag))) held.push({ line });
    else if (entry?.interrupted) held.push({ line, entry });
    else send.push(line);
  }
  return { send, held };
}

/** A held line in the report. */
export function heldOutcome({ line, entry }: HeldLine): LineOutcome {
  const base = { line: line.line, prompt: line.request.prompt, model: entry?.model ?? line.request.model, files: [] };
  if (!entry) return { ...base, status: 'not-sent', error: l10n.t('a request of this line is in flight (in this or another window): not sent again') };
  if (entry.outcomeUnknown)
    return { ...base, status: 'outcome-unknown', error: l10n.t('in flight when the window closed: it may have been charged, so it was not sent again') };
  return {
    ...base,
    status: 'failed',
    error: l10n.t('charged when the window closed, and no whole image of it was kept: it was not sent again (Recover Unsaved Images lists what arrived)'),
  };
}
