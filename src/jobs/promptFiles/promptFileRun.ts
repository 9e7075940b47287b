// Which lines of a prompt file a run sends (Generate Images from File), decided twice: once when the
// run is planned, and again for each line right before it is sent, since another run, window or agent
// may have finished it, or be sending it, meanwhile. Both read this workspace's results journal and
// in-flight records, and the marks beside the file's claim that every window sees (lineMarks.ts). A
// line is never paid twice: what is done is skipped, what was paid without its images or is in flight
// elsewhere is held (heldLines.ts), and a run that lost its claim sends no more (runFence.ts). No
// vscode import.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import type { BatchLine } from '../../core/requests/batchFile';
import { CancelledError } from '../../core/gateway/errors';
import { type BatchProgress, batchTag, type LineOutcome, planResume, runBatch, skipFoundByProvenance } from './batch';
import { existsWith, filesIn, findLinesByProvenance } from './batchProvenance';
import type { HistoryStore } from '../results/history';
import { type HeldLine, heldOutcome, holdMarkedLines, holdPaidLines, resendable } from './heldLines';
import type { ImageJobService } from '../imageJobs';
import type { InFlightJournal } from '../inFlight';
import { recordFailure, recordResult } from '../jobRecord';
import type { PaidFailure } from '../jobTypes';
import type { PromptFileClaims, RunOwner } from './promptFileClaim';
import { type LineMark, type LineMarks, markKey } from './lineMarks';
import { RunFence, type TakenOver } from './runFence';
import { batchKey } from '../results/resultsIndex';

export interface PromptFileSources {
  history: HistoryStore;
  inFlight: InFlightJournal;
  /** The marks beside the file's claim (PromptFileClaim.lines): what other windows' runs did. */
  marks?: LineMarks;
  log?: (message: string) => void;
}

export interface PromptFilePlan {
  send: BatchLine[];
  held: HeldLine[];
  /** Lines already paid for, with their images on disk. */
  skipped: LineOutcome[];
}

/**
 * Lines already paid for: from the results journal, then from the provenance of unknown PNGs in the
 * output folder, then from the marks beside the claim (done in another window). Of the rest, the
 * lines paid without their images, or in flight now (here or in another window), are held.
 */
export async function planPromptFileResume(promptFile: string, lines: BatchLine[], directory: string, sources: PromptFileSources): Promise<PromptFilePlan> {
  const index = await sources.history.index();
  const listing = await filesIn(directory);
  const plan = planResume(promptFile, lines, index, existsWith(directory, listing, existsSync));
  const found = await findLinesByProvenance(listing, promptFile, plan.todo, (f) => !!index.findByFile(f));
  if (found.size) sources.log?.(`${found.size} line(s) of ${path.basename(promptFile)} were found done by the provenance of their PNGs in ${directory}.`);
  const resumed = skipFoundByProvenance(plan, found);
  const marks = sources.marks ? await sources.marks.read() : new Map<string, LineMark>();
  const marked = holdMarkedLines(resumed.todo, marks, existsSync, sources.marks?.run.id ?? '');
  // In flight in another window: held whatever the journal says. Paid there without images: held
  // unless the journal holds it too (its entry knows what arrived).
  const inFlightThere = marked.held.filter((h) => !resendable(h));
  const paidThere = marked.held.filter(resendable);
  const inFlight = (await sources.inFlight.list()).flatMap((r) => (r.batch ? [r.batch] : []));
  const local = holdPaidLines(promptFile, [...marked.send, ...paidThere.map((h) => h.line)], index, inFlight);
  const heldHere = new Set(local.held.map((h) => h.line.line));
  const byLine = <T>(items: T[], line: (item: T) => number) => items.sort((a, b) => line(a) - line(b));
  return {
    skipped: byLine([...resumed.skipped, ...marked.skipped], (o) => o.line),
    send: local.send.filter((l) => !paidThere.some((h) => h.line === l)),
    held: byLine([...inFlightThere, ...local.held, ...paidThere.filter((h) => !heldHere.has(h.line.line))], (h) => h.line.line),
  };
}

/**
 * The check right before a line is sent (BatchRunOptions.beforeSend), made for the lines a run sends
 * right after it planned them: the journal as it is now (with what other writers added) and the
 * requests in flight now. Resolves to the line's outcome when it must not be sent: done meanwhile
 * (skipped), paid meanwhile without its images, or in flight elsewhere. A line's own newest result
 * as planned (a held line the user sends again) does not stop it.
 */
export async function lineRecheck(
  promptFile: string,
  lines: readonly BatchLine[],
  sources: PromptFileSources,
): Promise<(line: BatchLine) => Promise<LineOutcome | undefined>> {
  const planned = await sources.history.index();
  const newestAsPlanned = new Map(lines.map((line) => [line.line, planned.findBatch(batchTag(promptFile, line)).at(-1)?.id]));
  const marksAsPlanned = sources.marks ? await sources.marks.read() : new Map<string, LineMark>();
  return async (line) => {
    const index = await sources.history.index();
    const done = planResume(promptFile, [line], index, existsSync).skipped[0];
    if (done) return { ...done, meanwhile: true };
    const meanwhile = sources.marks && (await markedMeanwhile(line, sources.marks, marksAsPlanned));
    if (meanwhile) return meanwhile;
    const tag = batchKey(batchTag(promptFile, line));
    if ((await sources.inFlight.list()).some((r) => r.batch && batchKey(r.batch) === tag))
      return {
        ...heldOutcome({ line }),
        error: l10n.t('a request of this line was sent meanwhile by another run (in this or another window): not sent again'),
      };
    const newest = index.findBatch(batchTag(promptFile, line)).at(-1);
    if (!newest || newest.id === newestAsPlanned.get(line.line)) return undefined;
    const { held } = holdPaidLines(promptFile, [line], index, []);
    return held[0] && { ...heldOutcome(held[0]), meanwhile: true };
  };
}

/** A mark another run wrote for the line since the plan (a run that lost its claim, ending its lines): its outcome, when it must not be sent. */
async function markedMeanwhile(line: BatchLine, marks: LineMarks, asPlanned: ReadonlyMap<string, LineMark>): Promise<LineOutcome | undefined> {
  const mark = (await marks.read()).get(markKey(line));
  if (!mark || mark.run === marks.run.id || sameMark(mark, asPlanned.get(markKey(line)))) return undefined;
  const { skipped, held } = holdMarkedLines([line], new Map([[markKey(line), mark]]), existsSync, marks.run.id);
  if (skipped[0]) return { ...skipped[0], meanwhile: true };
  if (mark.state === 'in-flight')
    return {
      ...heldOutcome({ line }),
      error: l10n.t('a request of this line was sent meanwhile by another run (in this or another window): not sent again'),
    };
  return held[0] && { ...heldOutcome(held[0]), meanwhile: true };
}

const sameMark = (a: LineMark, b: LineMark | undefined) => !!b && a.run === b.run && a.at === b.at && a.state === b.state;

/** What a run of a prompt file needs from whoever starts it (the command, or a test's process). */
export interface PromptFileRunPorts extends PromptFileSources {
  claims: PromptFileClaims;
  who: Pick<RunOwner, 'window' | 'startedBy'>;
  locale: string;
  jobs: ImageJobService;
  warn(message: string): void;
  /** The file's lines, checked, and where their images go (the UI asks for a style or model here): under the claim. */
  prepare(): Promise<PreparedLines>;
  /** Which held lines go again (the user says, or `resendInterrupted`), and the report's outcomes of the others. */
  decideHeld(send: BatchLine[], held: HeldLine[]): Promise<{ todo: BatchLine[]; kept: LineOutcome[] }>;
  /**
   * The funds check and the confirmation of the lines to send, with the lines skipped: the reservation
   * confirmed for each line, in order; undefined when the cost was not confirmed.
   */
  confirm(todo: BatchLine[], skipped: LineOutcome[]): Promise<number[] | undefined>;
  /** Runs the sending (with a progress and its Cancel in the UI). */
  sending<T>(send: (control: SendingControl) => Promise<T>): Promise<T>;
  /** A paid line without its images was recorded (the host checks an unknown outcome later). */
  onPaidFailure?(failure: PaidFailure): void;
}

export interface PreparedLines {
  lines: BatchLine[];
  output: { directory: string; pattern: string };
  concurrency: number;
}

export interface SendingControl {
  signal?: AbortSignal;
  onProgress?: (outcome: LineOutcome, progress: BatchProgress) => void;
}

export interface PromptFileOutcome {
  /** Every line's outcome: skipped, held, and sent, in that order. */
  lines: LineOutcome[];
  /** Whether any line was sent. */
  sent: boolean;
  /** The run lost its claim while it sent (this window was paused, another took the run over): it stopped sending. */
  takenOver?: TakenOver;
}

/**
 * One run of a prompt file, start to end, holding the file's claim: a second start (another window, an
 * agent beside a person, a double click) is refused at once with RunInProgressError and sends
 * nothing. The resume is planned under the claim, and each line is checked again right before it
 * goes. Rejects with CancelledError when the cost was not confirmed.
 */
export async function runPromptFile(promptFile: string, ports: PromptFileRunPorts): Promise<PromptFileOutcome> {
  const claim = await ports.claims.claim(promptFile, ports.who, ports.locale);
  try {
    const sources = { ...ports, marks: claim.lines };
    const { lines, output, concurrency } = await ports.prepare();
    await claim.lines.compact(lines).catch((error: unknown) => ports.warn(`The marks of ${path.basename(promptFile)} were not compacted: ${String(error)}`));
    const { send, held, skipped } = await planPromptFileResume(promptFile, lines, output.directory, sources);
    const { todo, kept } = await ports.decideHeld(send, held);
    if (!todo.length) return { lines: [...skipped, ...kept], sent: false };
    const confirmed = await ports.confirm(todo, skipped);
    if (!confirmed) throw new CancelledError(l10n.t('Not sent: the cost was not confirmed.'));
    const recheck = await lineRecheck(promptFile, todo, sources);
    const fence = new RunFence(claim, (message) => ports.warn(message));
    await claim.progress(0, todo.length);
    const outcomes = await ports.sending(({ signal, onProgress }) =>
      runBatch(todo, {
        jobs: ports.jobs,
        output,
        concurrency: Math.min(6, Math.max(1, Math.trunc(concurrency) || 1)),
        // Confirmed as a whole: the lines do not ask one by one, and none sends more than it showed.
        confirmedReservations: confirmed,
        signal,
        beforeSend: async (line) => fence.stopped(line) ?? (await recheck(line)),
        fence,
        history: {
          promptFile,
          record: (details, result) => recordResult(ports.history, details, result),
          recordFailure: async (details, failure) => {
            if (details.batch) fence.paidFailure(details.batch.line, failure.charged);
            await recordFailure(ports.history, details, failure);
            ports.onPaidFailure?.(failure);
          },
          warn: (message) => ports.warn(message),
        },
        onProgress: (outcome, progress) => {
          void claim.progress(progress.finished, progress.total);
          onProgress?.(outcome, progress);
        },
      }),
    );
    const takenOver = await fence.takenOver(promptFile, outcomes);
    return { lines: [...skipped, ...kept, ...outcomes], sent: true, ...(takenOver ? { takenOver } : {}) };
  } finally {
    await claim.release();
  }
}
