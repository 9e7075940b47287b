// A batch of prompt-file lines through the ONE job service: resume (skip lines that already have
// results), a bounded number of lines at a time, cancel (lines not started are never sent), and the
// outcome of every line for the report. No vscode import.
import { type BatchLine } from '../core/batchFile';
import { fromKopecks, toKopecks } from '../core/cost';
import { GatewayError, refusedBeforeSending } from '../core/errors';
import { type HistoryEntry } from './history';
import { type ImageJobService } from './imageJobs';
import type { JobResult } from './jobTypes';
import { runBounded } from './pool';

export type LineStatus = 'done' | 'skipped' | 'failed' | 'outcome-unknown' | 'not-sent';

export interface LineOutcome {
  line: number;
  prompt: string;
  model: string;
  status: LineStatus;
  files: string[];
  costRub?: number;
  error?: string;
}

/** Where a history entry came from, when it was a line of a prompt file. */
export type BatchTag = NonNullable<HistoryEntry['batch']>;

export interface ResumePlan {
  todo: BatchLine[];
  /** Lines whose result is already in the history, with files still on disk. */
  skipped: LineOutcome[];
}

/** Splits the lines into those to send and those already done (same file, line and request; a file still there). */
export function planResume(file: string, lines: readonly BatchLine[], history: readonly HistoryEntry[], exists: (path: string) => boolean): ResumePlan {
  const todo: BatchLine[] = [];
  const skipped: LineOutcome[] = [];
  for (const line of lines) {
    const entry = history.find((e) => e.batch?.file === file && e.batch.line === line.line && e.batch.key === line.key && e.files.some(exists));
    if (entry)
      skipped.push({
        line: line.line,
        prompt: line.request.prompt,
        model: entry.model,
        status: 'skipped',
        files: entry.files.filter(exists),
        costRub: entry.costRub,
      });
    else todo.push(line);
  }
  return { todo, skipped };
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
  /** Keeps a finished line (the history), before its in-flight record goes (RunOptions.settle). */
  record?: (line: BatchLine, result: JobResult) => Promise<void>;
  /** The prompt file: each line's in-flight record names it (a crash mid-batch is then settled per line). */
  file?: string;
}

export async function runBatch(lines: readonly BatchLine[], options: BatchRunOptions): Promise<LineOutcome[]> {
  let finished = 0;
  let spentKopecks = 0;
  const outcomes = await runBounded(
    lines,
    options.concurrency,
    async (line, index) => {
      const outcome = await runLine(line, options.confirmedReservations[index], options);
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
  try {
    const { record, file } = options;
    const result = await options.jobs.run(
      { request: line.request, output: options.output },
      {
        signal: options.signal,
        confirmedReservation,
        ...(file ? { batch: { file, line: line.line, key: line.key } } : {}),
        ...(record ? { settle: (done: JobResult) => record(line, done) } : {}),
      },
    );
    const files = [...result.files, ...(result.recovered?.files ?? [])];
    return { ...base, model: result.model, status: 'done', files, costRub: result.usage?.cost_rub };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof GatewayError && error.outcomeUnknown) return { ...base, status: 'outcome-unknown', files: [], error: message };
    if (refusedBeforeSending(error)) return { ...base, status: 'not-sent', files: [], error: message };
    return { ...base, status: 'failed', files: [], error: message };
  }
}

export function summarize(outcomes: readonly LineOutcome[]): Record<LineStatus, number> & { spent: number } {
  const counts = { done: 0, skipped: 0, failed: 0, 'outcome-unknown': 0, 'not-sent': 0 };
  let spent = 0;
  for (const o of outcomes) {
    counts[o.status]++;
    if (o.status !== 'skipped' && o.costRub !== undefined) spent += toKopecks(o.costRub);
  }
  return { ...counts, spent: fromKopecks(spent) };
}
