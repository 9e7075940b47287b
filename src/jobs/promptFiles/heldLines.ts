// Lines of a prompt file that a re-run does not send by itself, once the resume (planResume) has
// skipped the lines done (images in the workspace or the recovery folder):
// - a line whose newest result is a paid request without its images: its request was in flight when
//   the extension host died (`interrupted`, see interrupted.ts), or it failed after the gateway
//   charged or may have charged (`failed`, see jobRecord.ts). Held until the user says: sending it
//   again may pay twice.
// - a line with an in-flight record now (its request runs in this or another window, or a dead
//   host left it and it is not settled yet): not sent.
// No vscode import.
import * as l10n from '@vscode/l10n';
import type { BatchLine } from '../../core/requests/batchFile';
import type { LineOutcome } from './batch';
import { batchKey, type BatchTag, type ResultsIndex, type ResultSummary } from '../results/resultsIndex';

export interface HeldLine {
  line: BatchLine;
  /** Its newest result, paid without its images; absent when the line's request is in flight now. */
  entry?: ResultSummary;
}

/** Whether a result is a paid request whose images did not arrive (nothing of it counts as done). */
export const paidWithoutImages = (entry: ResultSummary | undefined): entry is ResultSummary =>
  !!entry && (entry.interrupted === true || entry.failed !== undefined);

/** Splits the lines to send into those that go and those held (see above); `inFlight`: the batch tags of the in-flight records on disk. */
export function holdPaidLines(
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
    else if (paidWithoutImages(entry)) held.push({ line, entry });
    else send.push(line);
  }
  return { send, held };
}

/** A held line in the report: why it was not sent, and where what arrived of it waits. */
export function heldOutcome({ line, entry }: HeldLine): LineOutcome {
  const base = { line: line.line, prompt: line.request.prompt, model: entry?.model ?? line.request.model };
  if (!entry)
    return { ...base, status: 'not-sent', files: [], error: l10n.t('a request of this line is in flight (in this or another window): not sent again') };
  const kept = [...(entry.recovered?.files ?? []), ...(entry.recovered?.answer ? [entry.recovered.answer] : [])];
  const waiting = kept.length ? { files: kept, recovered: true } : { files: [] };
  if (entry.failed !== undefined) {
    return entry.outcomeUnknown
      ? { ...base, ...waiting, status: 'outcome-unknown', error: l10n.t('its last request may have been charged ({0}): not sent again', entry.failed) }
      : {
          ...base,
          ...waiting,
          status: 'failed',
          error: kept.length
            ? l10n.t(
                'its last request was charged, and its images did not arrive ({0}): not sent again. What arrived waits in the recovery folder (Recover Unsaved Images)',
                entry.failed,
              )
            : l10n.t('its last request was charged, and its images did not arrive ({0}): not sent again', entry.failed),
        };
  }
  if (entry.outcomeUnknown)
    return {
      ...base,
      ...waiting,
      status: 'outcome-unknown',
      error: l10n.t('in flight when the window closed: it may have been charged, so it was not sent again'),
    };
  return {
    ...base,
    ...waiting,
    status: 'failed',
    error: l10n.t('charged when the window closed, and no whole image of it was kept: it was not sent again (Recover Unsaved Images lists what arrived)'),
  };
}
