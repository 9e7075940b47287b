// One benchmark row, run in its own process (forked by run.ts) so that its peak RSS and event-loop
// delay are its own. Receives a WorkerTask as JSON in argv[2]; sends back one WorkerResult over IPC.
// The emulator runs in the parent process, never here.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { GatewayClient } from '../../src/core/client/client';
import { concurrentLimitRow, concurrentRow } from './concurrent';
import { firstImageExtensionRow, firstImageLimitRow } from './firstImage';
import { byIndexSuffix, catalogRow, extensionRow, fetchModels, jobService, limitRow, naiveRow, sha256AsSent } from './generationRows';
import { MB, resetPeakRss, rssMb, runqueueWaitMs, settle, threadCpuMs, threadSplit, vmHwmMb } from './procStats';
import { uploadLimitRow } from './uploadLimit';
import type { WorkerResult, WorkerTask } from './workerTypes';

export type { RowKind, WorkerResult, WorkerTask } from './workerTypes';

const LOOP_RESOLUTION_MS = 10;

async function main(): Promise<WorkerResult> {
  const arg = process.argv[2];
  if (arg === undefined) throw new Error('usage: worker <task JSON>');
  const task = JSON.parse(arg) as WorkerTask;
  await fs.mkdir(task.workDir, { recursive: true });
  if (task.kind === 'catalog') {
    const r = await catalogRow(task);
    return { ok: true, wallMs: 0, idleRssMb: rssMb(), peakRssMb: process.resourceUsage().maxRSS / 1024, maxLoopDelayMs: 0, probeLagMs: 0, ...r };
  }

  // Same warm-up for every row: undici loaded, one connection to the emulator, the catalog fetched.
  const client = new GatewayClient({ baseUrl: task.baseUrl, getApiKey: () => task.apiKey });
  const models = await client.imageModels();
  await fetchModels(task);
  const apiClient = task.uploadUrl ? new GatewayClient({ baseUrl: task.uploadUrl, getApiKey: () => task.apiKey }) : client;
  const service = jobService(task, apiClient, models);
  if (task.warm && task.kind === 'upload') await extensionRow({ ...task, workDir: path.join(task.workDir, 'warm-up') }, service);
  if (task.warm && task.kind === 'upload-limit') await uploadLimitRow(task, { start: () => undefined });
  (globalThis as { gc?: () => void }).gc?.();
  const settleMs = await settle();
  const idleRssMb = rssMb();
  const peakReset = resetPeakRss();

  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  let probeLagMs = 0;
  let selfLagMs = 0;
  let sampledPeakRssMb = idleRssMb;
  let last = performance.now();
  const waitAtStart = runqueueWaitMs();
  let lastWait = waitAtStart;
  const probe = setInterval(() => {
    const now = performance.now();
    const lag = now - last - 5;
    probeLagMs = Math.max(probeLagMs, lag);
    const wait = lastWait === undefined ? undefined : runqueueWaitMs();
    if (wait !== undefined && lastWait !== undefined) selfLagMs = Math.max(selfLagMs, lag - (wait - lastWait));
    lastWait = wait;
    last = now;
    sampledPeakRssMb = Math.max(sampledPeakRssMb, rssMb());
  }, 5);
  // BENCH_TRACE=1: memory samples every ms on stderr when RSS grows (for investigating a row).
  let traceMax = 0;
  const traceStart = performance.now();
  const trace = process.env.BENCH_TRACE
    ? setInterval(() => {
        const m = process.memoryUsage();
        if (m.rss <= traceMax) return;
        traceMax = m.rss;
        process.stderr.write(
          `${(performance.now() - traceStart).toFixed(0)} ms: rss ${(m.rss / MB).toFixed(0)} heap ${(m.heapUsed / MB).toFixed(0)}/${(m.heapTotal / MB).toFixed(0)} ab ${(m.arrayBuffers / MB).toFixed(0)}\n`,
        );
      }, 1)
    : undefined;
  histogram.enable();
  let started = performance.now();
  let cpuBefore = process.cpuUsage();
  let threadsBefore = threadCpuMs();
  // The upload limit builds its bytes first: its clock (wall, CPU, loop delay) starts when it starts sending.
  const clock = {
    start: () => {
      started = performance.now();
      cpuBefore = process.cpuUsage();
      histogram.reset();
      threadsBefore = threadCpuMs();
    },
  };
  const elapsed = () => performance.now() - started;
  let outcome: Partial<WorkerResult> & { _files?: string[] };
  let error: string | undefined;
  try {
    if (task.kind === 'limit') outcome = await limitRow(task);
    else if (task.kind === 'naive') outcome = await naiveRow(task);
    else if (task.kind === 'upload-limit') outcome = await uploadLimitRow(task, clock);
    else if (task.kind === 'first-limit') outcome = await firstImageLimitRow(task, elapsed);
    else if (task.kind === 'first-extension') outcome = await firstImageExtensionRow(task, service, elapsed);
    else if (task.kind === 'concurrent') outcome = await concurrentRow(task, service);
    else if (task.kind === 'concurrent-limit') outcome = await concurrentLimitRow(task);
    else outcome = await extensionRow(task, service);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    error = `${err.code ? `${err.code}: ` : ''}${err.message ?? String(e)}`;
    outcome = {};
  }
  const wallMs = performance.now() - started;
  const threadCpu = threadSplit(threadsBefore, threadCpuMs());
  const cpu = process.cpuUsage(cpuBefore);
  const waitAtEnd = runqueueWaitMs();
  const runqueue = waitAtStart !== undefined && waitAtEnd !== undefined ? { selfLagMs, runqueueWaitMs: waitAtEnd - waitAtStart } : {};
  histogram.disable();
  clearInterval(probe);
  if (trace) clearInterval(trace);
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  const hwm = peakReset ? vmHwmMb() : undefined;
  const peakRssMb = hwm ?? maxRssMb;
  const peakSource = hwm !== undefined ? 'VmHWM' : 'maxRSS';
  const rawLoopMaxMs = histogram.max / 1e6;
  const maxLoopDelayMs = Math.max(0, rawLoopMaxMs - LOOP_RESOLUTION_MS);
  const p99LoopDelayMs = Math.max(0, histogram.percentile(99) / 1e6 - LOOP_RESOLUTION_MS);
  await client.close();
  if (apiClient !== client) await apiClient.close();

  // Verification, after the clock stopped.
  const { _files, ...rest } = outcome;
  let sha256: string[] | undefined;
  let bytesWritten = rest.bytesWritten;
  if (_files && task.kind !== 'upload') {
    sha256 = [];
    bytesWritten = 0;
    const sorted = task.kind === 'extension' || task.kind === 'first-extension' ? [..._files].sort(byIndexSuffix) : _files;
    // The extension's own rows must have measured the default path, provenance included.
    const byService = task.kind === 'extension' || task.kind === 'first-extension' || task.kind === 'concurrent';
    for (const file of sorted) {
      const asSent = await sha256AsSent(file);
      if (byService && !asSent.provenance) error ??= `${path.basename(file)} has no provenance chunk (the default path was not measured)`;
      sha256.push(asSent.sha256);
      bytesWritten += asSent.size;
    }
  }
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return {
    ok: error === undefined,
    error,
    wallMs,
    cpuMs,
    threadCpuMs: threadCpu,
    idleRssMb,
    peakRssMb,
    peakSource,
    maxRssMb,
    sampledPeakRssMb,
    maxLoopDelayMs,
    rawLoopMaxMs,
    p99LoopDelayMs,
    probeLagMs,
    ...runqueue,
    settleMs,
    ...rest,
    bytesWritten,
    sha256,
  };
}

main().then(
  (result) => process.send!(result, () => process.exit(0)),
  (error) => {
    process.send!({ ok: false, error: String((error as Error)?.stack ?? error), wallMs: 0, idleRssMb: 0, peakRssMb: 0, maxLoopDelayMs: 0, probeLagMs: 0 }, () =>
      process.exit(1),
    );
  },
);
