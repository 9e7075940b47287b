// Lines of a prompt file that a re-run does not send by itself, once the resume (planResume) has
// skipped the lines done (images in the workspace or the recovery folder):
// - a line whose newest result is a paid request without its images: its request was in flight when
//   the extension host died (`interrupted`, see interrupted.ts), or it failed after the gateway
//   charged or may have charged (`failed`, see jobRecord.ts). Held until the user says: sending it
//   again may pay twice.
// - a line with an in-flight record now (its request runs in this or another window, or a dead
//   host left it and it is not settled yet): not sent.
// - a line that the marks beside the claim (lineMarks.ts) show in flight in another run, or paid
//   there without its images: a window of another workspace cannot read that run's journal.
// No vscode import.
import * as l10n from '@vscode/l10n';
import type { BatchLine } from '../../core/requests/batchFile';
import type { LineOutcome } from './batch';
import { isLive, type LineMark, markKey } from './lineMarks';
import { batchKey, type BatchTag, type ResultsIndex, type ResultSummary } from '../results/resultsIndex';

export interface HeldLine {
  line: BatchLine;
  /** Its newest result, paid without its images; absent when the line's request is in flight now. */
  entry?: ResultSummary;
  /** Its mark beside the claim, of another run: in flight there (`live`: that run may still be going on), or paid there without its images. */
  elsewhere?: { mark: LineMark; live: boolean };
}

/** Whether the user may send a held line again (paying again, perhaps): not while its request is in flight. */
export const resendable = (held: HeldLine): boolean => !!held.entry || (!!held.elsewhere && !held.elsewhere.live);

/**
 * The marks beside the claim, read by the window that plans the run (it may be of another workspace
 * than the run that wrote them): a line done there with its files on disk is skipped; one in flight in
 * another run, or paid there without its images, is held. The others go on to the journal's checks.
 */
export function holdMarkedLines(
  lines: readonly BatchLine[],
  marks: ReadonlyMap<string, LineMark>,
  exists: (file: string) => boolean,
  ownRun: string,
): { send: BatchLine[]; skipped: LineOutcome[]; held: HeldLine[] } {
  const send: BatchLine[] = [];
  const skipped: LineOutcome[] = [];
  const held: HeldLine[] = [];
  for (const line of lines) {
    const mark = marks.get(markKey(line));
    const files = mark?.state === 'done' ? (mark.files ?? []).filter(exists) : [];
    if (mark?.state === 'done' && files.length)
      skipped.push({ line: line.line, prompt: line.request.prompt, model: line.request.model, status: 'skipped', files, skipReason: 'files' });
    else if (mark && mark.run !== ownRun && (mark.state === 'in-flight' || mark.state === 'paid-without-images'))
      held.push({ line, elsewhere: { mark, live: isLive(mark, ownRun) } });
    else send.push(line);
  }
  return { send, skipped, held };
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
export function heldOutcome({ line, entry, elsewhere }: HeldLine): LineOutcome {
  const base = { line: line.line, prompt: line.request.prompt, model: entry?.model ?? line.request.model };
  if (elsewhere) return markedOutcome(base, elsewhere);
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

/** A line held by its mark of another run (see holdMarkedLines). */
function markedOutcome(base: Pick<LineOutcome, 'line' | 'prompt' | 'model'>, { mark, live }: NonNullable<HeldLine['elsewhere']>): LineOutcome {
  if (mark.state === 'in-flight' && live)
    return { ...base, status: 'not-sent', files: [], error: l10n.t('its request is in flight in another window ({0}): not sent again', mark.window) };
  if (mark.state === 'in-flight')
    return {
      ...base,
      status: 'outcome-unknown',
      files: [],
      error: l10n.t('its request was in flight in another window ({0}) when that run stopped: it may have been charged, so it was not sent again', mark.window),
    };
  const why = mark.error ?? '';
  return mark.outcomeUnknown
    ? {
        ...base,
        status: 'outcome-unknown',
        files: [],
        error: l10n.t('its last request, in another window ({0}), may have been charged ({1}): not sent again', mark.window, why),
      }
    : {
        ...base,
        status: 'failed',
        files: [],
        error: l10n.t('its last request, in another window ({0}), was charged and its images did not arrive ({1}): not sent again', mark.window, why),
      };
}
