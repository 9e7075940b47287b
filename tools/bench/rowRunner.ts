// Running one bench row in its own process (worker.js, so that its peak RSS and event-loop delay
// are its own) and summarising a row's runs. The emulator's images are tapped as it pads them, for
// checking what a row saved against what was sent.
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { median } from './scenario';
import type { WorkerResult, WorkerTask } from './workerTypes';

const WORKER = path.join(__dirname, 'worker.js');
/** The workers run the product's HTTP code from out/ with undici mended, as the bundle has it. */
const UNDICI_MEND = path.resolve(__dirname, '..', '..', '..', 'scripts', 'undiciMendRegister.cjs');

// ---- the emulator's images, for verification ----
//
// The emulator picks random pictures for models without seed support, so the expected bytes are
// taken from the emulator itself: its padding helper is wrapped (CommonJS exports are plain
// properties) and the parts of every padded image are kept. They are hashed after the row, never
// while the emulator is streaming.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pngModule = require('../emulator/png') as { paddedPngParts: (png: Buffer, total: number) => Buffer[] };

const tapped: Buffer[][] = [];

const originalPadded = pngModule.paddedPngParts;
pngModule.paddedPngParts = (png, total) => {
  const parts = originalPadded(png, total);
  tapped.push(parts);
  return parts;
};

export function takeExpected(): string[] {
  const hashes = tapped.map((parts) => {
    const hash = createHash('sha256');
    for (const part of parts) hash.update(part);
    return hash.digest('hex');
  });
  tapped.length = 0;
  return hashes;
}

// ---- running one row ----

export function runWorker(task: WorkerTask, timeoutMs = 180_000): Promise<WorkerResult> {
  return new Promise((resolve) => {
    const child = fork(WORKER, [JSON.stringify(task)], { execArgv: ['--expose-gc', '--require', UNDICI_MEND], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: WorkerResult | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('message', (m) => (result = m as WorkerResult));
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(
        result ?? {
          ok: false,
          error: `worker exited (${signal ?? code}) without a result`,
          wallMs: 0,
          idleRssMb: 0,
          peakRssMb: 0,
          maxLoopDelayMs: 0,
          probeLagMs: 0,
        },
      );
    });
  });
}

export interface RowStats {
  label: string;
  runs: WorkerResult[];
  ok: boolean;
  error?: string;
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  idleRssMb: number;
  maxLoopDelayMs: number;
  /** The longest interval between two ticks of the 10 ms loop-delay timer (maxLoopDelayMs + 10 ms). */
  rawLoopMaxMs: number;
  p99LoopDelayMs: number;
  probeLagMs: number;
  selfLagMs?: number;
  runqueueWaitMs?: number;
  /** Every successful run's images matched the emulator's (generation rows except limit). */
  verified?: boolean;
  verifyNote?: string;
}

export function summarise(label: string, runs: WorkerResult[], checks: (string | undefined)[]): RowStats {
  const good = runs.filter((r) => r.ok);
  const failures = checks.filter((c): c is string => c !== undefined && c !== 'ok');
  const verified = checks.some((c) => c !== undefined) ? failures.length === 0 && checks.every((c) => c !== undefined) : undefined;
  const source = good.length ? good : runs;
  return {
    label,
    runs,
    ok: good.length === runs.length,
    error: runs.find((r) => !r.ok)?.error,
    wallMs: median(source.map((r) => r.wallMs)),
    cpuMs: median(source.map((r) => r.cpuMs ?? 0)),
    p99LoopDelayMs: median(source.map((r) => r.p99LoopDelayMs ?? 0)),
    peakRssMb: median(source.map((r) => r.peakRssMb)),
    idleRssMb: median(source.map((r) => r.idleRssMb)),
    maxLoopDelayMs: median(source.map((r) => r.maxLoopDelayMs)),
    rawLoopMaxMs: median(source.map((r) => r.rawLoopMaxMs ?? NaN)),
    probeLagMs: median(source.map((r) => r.probeLagMs)),
    selfLagMs: source.every((r) => r.selfLagMs !== undefined) ? median(source.map((r) => r.selfLagMs!)) : undefined,
    runqueueWaitMs: source.every((r) => r.runqueueWaitMs !== undefined) ? median(source.map((r) => r.runqueueWaitMs!)) : undefined,
    verified,
    verifyNote: failures[0],
  };
}

export function compareHashes(result: WorkerResult, expected: string[]): string {
  if (!result.sha256) return 'no hashes';
  if (result.sha256.length !== expected.length) return `${result.sha256.length} files saved, ${expected.length} images sent`;
  const bad = result.sha256.findIndex((h, i) => h !== expected[i]);
  return bad === -1 ? 'ok' : `image ${bad + 1}: SHA-256 differs from the emulator's`;
}
