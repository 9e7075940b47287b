// What the scenarios of the newer bench rows (upload limit, first image, concurrent jobs) get from
// run.ts and give back: run.ts owns the worker processes, the emulator and the report.
import type { RunningEmulator } from '../emulator';
import type { WorkerResult, WorkerTask } from './workerTypes';

export interface BenchTarget {
  name: string;
  value: string;
  target: string;
  /** undefined: information, or a row not asked for (its value says which); false also when a row asked for was not measured. */
  pass: boolean | undefined;
  /**
   * A speed target (a ratio to a baseline of the same run, or the catalog's milliseconds): `--quick`
   * prints its verdict in brackets and does not judge it, since its small sizes and single run are not
   * what the bound was chosen for. Memory, size and correctness targets are judged in every mode.
   */
  time?: true;
}

export interface BenchContext {
  emulator: RunningEmulator;
  /** A work folder owned by this bench run. */
  tmp: string;
  runs: number;
  /** Small sizes: a smoke run of every row in seconds (figures not comparable with a full run). */
  quick: boolean;
  runWorker(task: WorkerTask, timeoutMs?: number): Promise<WorkerResult>;
  /** SHA-256 of every image the emulator padded since the last call, in the order it built them. */
  takeExpected(): string[];
  log(line: string): void;
}

export interface ScenarioReport {
  lines: string[];
  targets: BenchTarget[];
  json: unknown;
}

export const MiB = 1024 * 1024;

/**
 * Loop delay of the generation rows, judged against the limit row of the same scenario and run: the
 * extension's longest gap between two ticks of monitorEventLoopDelay's 10 ms timer over the limit's
 * (a slower machine stretches both). The 20 jobs at once have their own bound (concurrent.ts).
 */
export const TARGET_LOOP_GAP_RATIO = 1.5;

/**
 * Runs of a row whose single runs swing too much on a busy machine for the default count: at least
 * `least`, unless --quick (a smoke run of the bench itself).
 */
export const runsAtLeast = (ctx: BenchContext, least: number): number => (ctx.quick ? ctx.runs : Math.max(ctx.runs, least));

export function median(values: number[]): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
export const fmtMs = (ms: number) => `${ms.toFixed(0)} ms`;
export const pad = (s: string, n: number) => (s.length >= n ? s + ' ' : s + ' '.repeat(n - s.length));
export const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

/** One line about a failed run, for the progress log. */
export function runNote(result: WorkerResult, ok: (r: WorkerResult) => string): string {
  return result.ok ? ok(result) : `failed: ${result.error?.split('\n')[0]!.slice(0, 120)}`;
}
