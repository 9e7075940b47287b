// What run.ts asks of a row's process (worker.ts) and what the row sends back.
import type { EditTransport } from '../../src/jobs/jobTypes';

export type RowKind =
  'limit' | 'naive' | 'extension' | 'upload' | 'catalog' | 'upload-limit' | 'first-limit' | 'first-extension' | 'concurrent' | 'concurrent-limit';

export interface WorkerTask {
  kind: RowKind;
  baseUrl: string;
  apiKey: string;
  /** A fresh empty folder owned by this run. */
  workDir: string;
  /** Generation rows. */
  model?: string;
  prompt?: string;
  n?: number;
  size?: string;
  seed?: number;
  /** Upload rows. */
  references?: string[];
  transport?: EditTransport;
  /** Upload rows: send the paid request here (a draining server) instead of baseUrl. */
  uploadUrl?: string;
  /** Upload rows: one whole upload before the clock starts, so the measured one is the second of the process. */
  warm?: boolean;
  /** Upload limit: send the bytes read from the files (the target), or prepared in memory (the send alone). */
  limitFrom?: 'files' | 'memory';
  /** Upload limit: return the SHA-256 of the body it sent (computed after the clock). */
  verifyBytes?: boolean;
  /** Concurrent row: how many jobs at once. */
  jobs?: number;
}

export interface WorkerResult {
  ok: boolean;
  /** The error of a failed row (its code first, e.g. ERR_STRING_TOO_LONG). */
  error?: string;
  wallMs: number;
  idleRssMb: number;
  /**
   * Peak RSS while the row ran: VmHWM, reset at idle through /proc/self/clear_refs. Not
   * resourceUsage().maxRSS, which in a forked child also counts the parent's peak (Linux carries
   * the pre-exec peak into the new image), so it reads the emulator's memory, not the row's.
   */
  peakRssMb: number;
  /** How peakRssMb was measured: 'VmHWM' (reset at idle) or 'maxRSS' (fallback, includes the parent's peak). */
  peakSource?: string;
  /** process.resourceUsage().maxRSS at the end, for reference. */
  maxRssMb?: number;
  /** The largest RSS seen by the 5 ms probe (a cross-check of the peak). */
  sampledPeakRssMb?: number;
  /** User + system CPU time of this process while the row ran. */
  cpuMs?: number;
  /** Upload limit with verifyBytes: SHA-256 of the body it meant to send. */
  bodySha256?: string;
  /** The row's CPU split by thread: the main (JavaScript) thread, and all others together. */
  threadCpuMs?: { main: number; other: number };
  /**
   * The longest the event loop was late while the request ran, in ms: monitorEventLoopDelay's max
   * minus its 10 ms resolution. The histogram records the whole interval between its timer's runs,
   * so an idle process reads ~10-12 ms there, not ~0.
   */
  maxLoopDelayMs: number;
  /** The histogram's own max (the interval, resolution included), in ms. */
  rawLoopMaxMs?: number;
  /** The 99th percentile of the same histogram, resolution subtracted, in ms. */
  p99LoopDelayMs?: number;
  /** Max lateness of a setInterval(…, 5) probe beyond its 5 ms, in ms. */
  probeLagMs: number;
  /**
   * The same lateness minus the time the main thread spent runnable but waiting for a CPU in that
   * interval (/proc/self/task/<pid>/schedstat): the delay the row's own work caused, without the
   * delay a loaded machine adds. Undefined where schedstat is unavailable.
   */
  selfLagMs?: number;
  /** Total time the main thread waited for a CPU while the row ran, in ms. */
  runqueueWaitMs?: number;
  /** SHA-256 of each saved image, in index order (generation rows except limit). */
  sha256?: string[];
  /** Bytes written to disk. */
  bytesWritten?: number;
  files?: number;
  /** Catalog row: latencies of CatalogCache.get() with a warm cache. */
  catalog?: { firstMs: number; medianMs: number; maxMs: number; samples: number };
  /** First-image rows: ms from sending until the first image was complete (limit) or saved (extension). */
  firstImageMs?: number;
  /** How long the process waited after its warm-up until no thread used the CPU. */
  settleMs?: number;
}
