// What a row's process knows of itself on Linux: RSS and its peak (VmHWM, reset at idle), the
// CPU time of each thread and the time the main thread waited for a CPU (schedstat), and a wait
// until the process is idle. Used by worker.ts around the row it measures.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { WorkerResult } from './workerTypes';

export const MB = 1024 * 1024;

export function rssMb(): number {
  return process.memoryUsage.rss() / MB;
}

/** Resets the kernel's peak-RSS mark of this process to its current RSS (Linux >= 4.0). */
export function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return vmHwmMb() !== undefined;
  } catch {
    return false;
  }
}

/** A thread's schedstat (Linux) in ms: [time on a CPU, time runnable but waiting for one]. */
export function schedstatMs(thread: string | number): [number, number] {
  const [onCpu, waiting] = readFileSync(`/proc/self/task/${thread}/schedstat`, 'latin1').split(' ').map(Number);
  return [onCpu! / 1e6, waiting! / 1e6];
}

/** The time the main thread has waited on a run queue (runnable, not running), in ms; undefined when unknown. */
export function runqueueWaitMs(): number | undefined {
  try {
    const wait = schedstatMs(process.pid)[1];
    return Number.isFinite(wait) ? wait : undefined;
  } catch {
    return undefined;
  }
}

export function vmHwmMb(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+)\s*kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (ms) of each thread of this process, from /proc (Linux); undefined elsewhere. */
export function threadCpuMs(): Map<string, number> | undefined {
  try {
    const times = new Map<string, number>();
    for (const thread of readdirSync('/proc/self/task')) {
      times.set(thread, schedstatMs(thread)[0]);
    }
    return times;
  } catch {
    return undefined;
  }
}

/** The main thread's CPU and the other threads' (libuv's pool, V8's helpers) between two readings. */
export function threadSplit(before: Map<string, number> | undefined, after: Map<string, number> | undefined): WorkerResult['threadCpuMs'] {
  if (!before || !after) return undefined;
  let other = 0;
  for (const [thread, ms] of after) if (thread !== String(process.pid)) other += ms - (before.get(thread) ?? 0);
  return { main: after.get(String(process.pid))! - before.get(String(process.pid))!, other };
}

/**
 * Waits (at most 3 s) until this process uses no CPU on any thread: after the warm-up's first
 * responses V8 compiles undici's llhttp WASM with TurboFan in the background, ~100-150 ms of CPU
 * that otherwise landed inside the first row's clock on a 2-core machine. An extension host has
 * done that long before a user's first job.
 */
export async function settle(): Promise<number> {
  const started = performance.now();
  for (;;) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const used = process.cpuUsage(before);
    if ((used.user + used.system) / 1000 < 5 || performance.now() - started > 3000) return performance.now() - started;
  }
}
