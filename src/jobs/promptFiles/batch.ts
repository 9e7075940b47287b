// A batch of prompt-file lines through the ONE job service: resume (skip lines that already have
// results), a bounded number of lines at a time, cancel (lines not started are never sent), and the
// outcome of every line for the report. No vscode import.
import { type BatchLine } from '../../core/requests/batchFile';
import { fromKopecks, toKopecks } from '../../core/money/cost';
import { GatewayError, refusedBeforeSending } from '../../core/gateway/errors';
import type { BatchTag } from '../results/resultTypes';
import type { JobDetails, RecordedResult } from '../jobRecord';
import { type ImageJobService } from '../imageJobs';
import type { ImageJob, JobResult, PaidFailure } from '../jobTypes';
import type { ResultsIndex, ResultSummary } from '../results/resultsIndex';
import { runBounded } from '../pool';
import { settleBy } from '../settle';

export type LineStatus = 'done' | 'skipped' | 'failed' | 'outcome-unknown' | 'not-sent';

/** Why a line was not sent again: its images are in the workspace, in the recovery folder, or found by their PNG provenance. */
export type SkipReason = 'files' | 'recovery' | 'provenance';

export interface LineOutcome {
  line: number;
  prompt: string;
  model: string;
  status: LineStatus;
  files: string[];
  costRub?: number;
  error?: string;
  /** Set on skipped lines. */
  skipReason?: SkipReason;
  /** Set on lines whose images (or paid answer) wait in the recovery folder. */
  recovered?: boolean;
  /** Skipped when it was about to be sent: something else (another run, another window) did it meanwhile. */
  meanwhile?: boolean;
  /** Not sent: the run lost its claim on the file (another window took the run over while this one was paused). */
  takenOver?: boolean;
}

export interface ResumePlan {
  todo: BatchLine[];
  /** Lines already paid for, with their images still on disk. */
  skipped: LineOutcome[];
}

export const batchTag = (file: string, line: BatchLine): BatchTag => ({ file, line: line.line, key: line.key });

/**
 * Splits the lines into those to send and those already paid for (same file, line and request):
 * a result whose files are still in the workspace, else one whose images still wait in the
 * recovery folder. A line whose files were all deleted is sent again.
 */
export function planResume(file: string, lines: readonly BatchLine[], index: Pick<ResultsIndex, 'findBatch'>, exists: (path: string) => boolean): ResumePlan {
  const todo: BatchLine[] = [];
  const skipped: LineOutcome[] = [];
  for (const line of lines) {
    const results = index.findBatch(batchTag(file, line)).reverse();
    const skip = (reason: SkipReason, files: string[], entry: (typeof results)[number]) =>
      skipped.push({ line: line.line, prompt: line.request.prompt, model: entry.model, status: 'skipped', files, costRub: entry.costRub, skipReason: reason });
    const inWorkspace = results.find((e) => e.files.some(exists));
    const inRecovery = inWorkspace ? undefined : results.find((e) => e.recovered?.files.some(exists) || waitsForDownload(e, exists));
    if (inWorkspace) skip('files', inWorkspace.files.filter(exists), inWorkspace);
    else if (inRecovery) skip('recovery', inRecovery.recovered!.files.filter(exists), inRecovery);
    else todo.push(line);
  }
  return { todo, skipped };
}

/**
 * A result whose images wait at an address in the recovery folder (a download that failed: Recover
 * downloads them again): they are not on disk yet, but its manifest is. A paid failure is held instead
 * (heldLines.ts), also when what it kept is listed by a manifest.
 */
function waitsForDownload(entry: ResultSummary, exists: (path: string) => boolean): boolean {
  return (
    entry.failed === undefined &&
    !entry.interrupted &&
    !!entry.recovered?.files.length &&
    !!entry.recovered.manifestPath &&
    exists(entry.recovered.manifestPath)
  );
}

/** Moves the lines whose images were found by their PNG provenance (line number → files) from `todo` to `skipped`. */
export function skipFoundByProvenance(plan: ResumePlan, found: ReadonlyMap<number, string[]>): ResumePlan {
  if (!found.size) return plan;
  const todo = plan.todo.filter((line) => !found.has(line.line));
  const skipped = plan.todo
    .filter((line) => found.has(line.line))
    .map((line): LineOutcome => ({
      line: line.line,
      prompt: line.request.prompt,
      model: line.request.model,
      status: 'skipped',
      files: found.get(line.line)!,
      skipReason: 'provenance',
    }));
  return { todo, skipped: [...plan.skipped, ...skipped].sort((a, b) => a.line - b.line) };
}

export interface BatchProgress {
  finished: number;
  total: number;
  /** Rubles charged so far (actual costs of the finished lines). */
  spent: number;
}

export interface BatchRunOptions {
  jobs: ImageJobService;
  output: { directory: string; pattern: string };
  concurrency: number;
  /** What was confirmed for each line, in order (the run's total was): a line that would now reserve more is not sent. */
  confirmedReservations: readonly number[];
  signal?: AbortSignal;
  /** Called after each line, before the next one starts. */
  onProgress?: (outcome: LineOutcome, progress: BatchProgress) => void;
  /**
   * Right before a line is sent: its outcome when it must not be sent after all (done meanwhile, or
   * in flight elsewhere); undefined sends it.
   */
  beforeSend?: (line: BatchLine) => Promise<LineOutcome | undefined>;
  /** The claim's fence (runFence.ts): the last word right before a line's request goes, and each such line's end. */
  fence?: BatchFence;
  /** Where finished lines are recorded, as lines of this prompt file. */
  history?: {
    promptFile: string;
    /** recordResult() on the workspace's history (passed in: this module loads apart from the history's). */
    record(details: JobDetails, result: RecordedResult): Promise<void>;
    /** recordFailure(): a line paid for (or perhaps) whose images did not arrive. */
    recordFailure(details: JobDetails, failure: PaidFailure): Promise<void>;
    warn: (message: string) => void;
  };
}

export interface BatchFence {
  /** Right before the request goes (its in-flight record written): rejects to send nothing. */
  beforeRequest(line: BatchLine, job: string): Promise<void>;
  /** The outcome of a line whose request the fence refused, or undefined for any other error. */
  refused(line: BatchLine, error: unknown): LineOutcome | undefined;
  /** A line ended (whatever its outcome), before the next one starts. */
  ended(line: BatchLine, outcome: LineOutcome): Promise<void>;
}

export async function runBatch(lines: readonly BatchLine[], options: BatchRunOptions): Promise<LineOutcome[]> {
  let finished = 0;
  let spentKopecks = 0;
  const outcomes = await runBounded(
    lines,
    options.concurrency,
    async (line, index) => {
      const outcome = await runLine(line, options.confirmedReservations[index], options);
      await options.fence?.ended(line, outcome);
      finished++;
      if (outcome.costRub !== undefined) spentKopecks += toKopecks(outcome.costRub);
      options.onProgress?.(outcome, { finished, total: lines.length, spent: fromKopecks(spentKopecks) });
      return outcome;
    },
    options.signal,
  );
  // Lines the pool never started after a cancel.
  return lines.map((line, i) => outcomes[i] ?? { line: line.line, prompt: line.request.prompt, model: line.request.model, status: 'not-sent', files: [] });
}

async function runLine(line: BatchLine, confirmedReservation: number | undefined, options: BatchRunOptions): Promise<LineOutcome> {
  const base = { line: line.line, prompt: line.request.prompt, model: line.request.model };
  const history = options.history;
  const batch = history && batchTag(history.promptFile, line);
  try {
    const instead = await options.beforeSend?.(line);
    if (instead) return instead;
    const { references = [], output, record: style } = line.styled ?? {};
    const job: ImageJob = {
      request: line.request,
      ...(references.length ? { references } : {}),
      // A line's style may name its own folder and pattern.
      output: { directory: output?.directory ?? options.output.directory, pattern: output?.pattern ?? options.output.pattern },
      batch,
      ...(style ? { style } : {}),
    };
    // Paid: recorded even when every image went to the recovery folder, so a re-run never pays again;
    // recorded before the line's in-flight record goes.
    const origin = history && { kind: 'promptFile' as const, file: history.promptFile, line: line.line };
    const details = (model: string) => ({
      request: line.request,
      model,
      batch,
      origin,
      ...(references.length ? { references } : {}),
      ...(style ? { style } : {}),
    });
    const settle = history && settleBy((done: JobResult) => history.record(details(done.model), done), history.warn, `Line ${line.line}`);
    // Paid without its images: recorded as paid, so a re-run holds the line instead of paying again.
    const settleFailure =
      history && settleBy((failure: PaidFailure) => history.recordFailure(details(failure.model), failure), history.warn, `Line ${line.line} (paid, failed)`);
    const fence = options.fence;
    const beforeRequest = fence && ((jobId: string) => fence.beforeRequest(line, jobId));
    const result = await options.jobs.run(job, { signal: options.signal, confirmedReservation, settle, settleFailure, beforeRequest });
    const files = [...result.files, ...(result.recovered?.files ?? [])];
    return { ...base, model: result.model, status: 'done', files, costRub: result.usage?.cost_rub, ...(result.recovered ? { recovered: true } : {}) };
  } catch (error) {
    const refused = options.fence?.refused(line, error);
    if (refused) return refused;
    const message = error instanceof Error ? error.message : String(error);
    // What arrived of a paid line before it failed: saved images, and what waits in the recovery folder.
    const kept = error instanceof GatewayError && error.recovered ? { files: error.recovered.files, recovered: true } : { files: [] };
    if (error instanceof GatewayError && error.outcomeUnknown) return { ...base, ...kept, status: 'outcome-unknown', error: message };
    if (refusedBeforeSending(error)) return { ...base, status: 'not-sent', files: [], error: message };
    return { ...base, ...kept, status: 'failed', error: message };
  }
}

export function summarize(outcomes: readonly LineOutcome[]): Record<LineStatus, number> & { spent: number; skippedBy: Record<SkipReason, number> } {
  const counts = { done: 0, skipped: 0, failed: 0, 'outcome-unknown': 0, 'not-sent': 0 };
  const skippedBy = { files: 0, recovery: 0, provenance: 0 };
  let spent = 0;
  for (const o of outcomes) {
    counts[o.status]++;
    if (o.skipReason) skippedBy[o.skipReason]++;
    if (o.status !== 'skipped' && o.costRub !== undefined) spent += toKopecks(o.costRub);
  }
  return { ...counts, spent: fromKopecks(spent), skippedBy };
}
