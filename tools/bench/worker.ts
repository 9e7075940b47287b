// One benchmark row, run in its own process (forked by run.ts) so that its peak RSS and event-loop
// delay are its own. Receives a WorkerTask as JSON in argv[2]; sends back one WorkerResult over IPC.
// The emulator runs in the parent process, never here.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { request } from 'undici';
import { CatalogCache } from '../../src/core/catalogCache';
import { GatewayClient } from '../../src/core/client';
import { parseImageModels } from '../../src/core/catalog';
import type { ImageModel } from '../../src/core/types';
import { buildITXtChunk, IEND_CHUNK, readPngTextChunk } from '../../src/core/pngText';
import { ImageJobService } from '../../src/jobs/imageJobs';
import { PROVENANCE_KEYWORD } from '../../src/jobs/provenance';
import type { EditTransport } from '../../src/jobs/jobTypes';
import { Base64ToFile } from './base64ToFile';
import { concurrentRow } from './concurrent';
import { firstImageExtensionRow, firstImageLimitRow } from './firstImage';
import { uploadLimitRow } from './uploadLimit';

export type RowKind = 'limit' | 'naive' | 'extension' | 'upload' | 'catalog' | 'upload-limit' | 'first-limit' | 'first-extension' | 'concurrent';

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

const MB = 1024 * 1024;
const LOOP_RESOLUTION_MS = 10;

function rssMb(): number {
  return process.memoryUsage.rss() / MB;
}

/** Resets the kernel's peak-RSS mark of this process to its current RSS (Linux >= 4.0). */
function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return vmHwmMb() !== undefined;
  } catch {
    return false;
  }
}

/** A thread's schedstat (Linux) in ms: [time on a CPU, time runnable but waiting for one]. */
function schedstatMs(thread: string | number): [number, number] {
  const [onCpu, waiting] = readFileSync(`/proc/self/task/${thread}/schedstat`, 'latin1').split(' ').map(Number);
  return [onCpu! / 1e6, waiting! / 1e6];
}

/** The time the main thread has waited on a run queue (runnable, not running), in ms; undefined when unknown. */
function runqueueWaitMs(): number | undefined {
  try {
    const wait = schedstatMs(process.pid)[1];
    return Number.isFinite(wait) ? wait : undefined;
  } catch {
    return undefined;
  }
}

function vmHwmMb(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+)\s*kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * SHA-256 of an image as the gateway sent it. The extension's rows run with provenance on (the
 * default of gatewayImages.embedProvenance): their PNGs carry an iTXt chunk just before IEND, which
 * must be exactly the chunk the text rebuilds. That chunk is left out of the hash.
 */
async function sha256AsSent(file: string): Promise<{ sha256: string; provenance: boolean; size: number }> {
  const hash = createHash('sha256');
  const size = (await fs.stat(file)).size;
  const text = await readPngTextChunk(file, PROVENANCE_KEYWORD).catch(() => undefined);
  if (text === undefined) {
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
    return { sha256: hash.digest('hex'), provenance: false, size };
  }
  const chunk = buildITXtChunk(PROVENANCE_KEYWORD, text);
  const chunkAt = size - IEND_CHUNK.length - chunk.length;
  const handle = await fs.open(file, 'r');
  try {
    const end = Buffer.alloc(chunk.length + IEND_CHUNK.length);
    await handle.read(end, 0, end.length, chunkAt);
    if (!end.equals(Buffer.concat([chunk, IEND_CHUNK]))) throw new Error(`${path.basename(file)}: the provenance chunk is not just before IEND`);
  } finally {
    await handle.close();
  }
  if (chunkAt > 0) for await (const part of createReadStream(file, { start: 0, end: chunkAt - 1, highWaterMark: 1024 * 1024 })) hash.update(part as Buffer);
  hash.update(IEND_CHUNK);
  return { sha256: hash.digest('hex'), provenance: true, size };
}

function generationBody(task: WorkerTask): string {
  return JSON.stringify({ model: task.model, prompt: task.prompt, n: task.n, size: task.size, seed: task.seed });
}

function headers(task: WorkerTask): Record<string, string> {
  return { authorization: `Bearer ${task.apiKey}`, 'content-type': 'application/json', 'user-agent': 'gateway-images-bench' };
}

async function fetchModels(task: WorkerTask): Promise<ImageModel[]> {
  const response = await request(`${task.baseUrl}/public/gateway/models/images`, { method: 'GET' });
  return parseImageModels(await response.body.json());
}

/** The physical limit: drain the body and base64-decode it into one file, no JSON parsing (Base64ToFile). */
async function limitRow(task: WorkerTask): Promise<Partial<WorkerResult>> {
  const handle = await fs.open(path.join(task.workDir, 'limit.bin'), 'w');
  const decoder = new Base64ToFile(handle);
  try {
    const response = await request(`${task.baseUrl}/v1/images/generations`, { method: 'POST', headers: headers(task), body: generationBody(task) });
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${await response.body.text()}`);
    for await (const chunk of response.body) await decoder.push(chunk as Buffer);
    await decoder.flush(true);
  } finally {
    await handle.close();
  }
  return { bytesWritten: decoder.written };
}

/** What most clients do: json(), then Buffer.from(b64, 'base64'), then writeFile per image. */
async function naiveRow(task: WorkerTask): Promise<Partial<WorkerResult>> {
  const response = await request(`${task.baseUrl}/v1/images/generations`, { method: 'POST', headers: headers(task), body: generationBody(task) });
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${await response.body.text()}`);
  const json = (await response.body.json()) as { data: { b64_json: string }[] };
  const files: string[] = [];
  let written = 0;
  for (let i = 0; i < json.data.length; i++) {
    const bytes = Buffer.from(json.data[i]!.b64_json, 'base64');
    const file = path.join(task.workDir, `naive-${i}.png`);
    await fs.writeFile(file, bytes);
    files.push(file);
    written += bytes.length;
  }
  return { bytesWritten: written, files: files.length, _files: files } as Partial<WorkerResult>;
}

function jobService(task: WorkerTask, client: GatewayClient, models: ImageModel[]): ImageJobService {
  return new ImageJobService({
    api: async () => client,
    models: async () => models,
    funds: () => ({}),
    applyUsage: () => undefined,
    reconcile: () => undefined,
    confirm: async () => true,
    confirmAbove: () => Number.POSITIVE_INFINITY,
    recoveryDir: path.join(task.workDir, 'global-storage', 'recovery'),
    // As users run it: gatewayImages.embedProvenance is on by default.
    provenance: () => true,
  });
}

/** The extension's real code path: ImageJobService.run -> GatewayClient -> StagingSink (provenance written with the image) -> linkWithoutOverwrite. */
async function extensionRow(task: WorkerTask, service: ImageJobService): Promise<Partial<WorkerResult>> {
  const result = await service.run({
    request: { model: task.model!, prompt: task.prompt!, n: task.n, size: task.size, seed: task.seed },
    references: task.references,
    transport: task.transport,
    output: { directory: path.join(task.workDir, 'workspace', 'generated-images'), pattern: '{date}-{slug}-{model}-{index}' },
  });
  if (result.recovered) throw new Error(`images left in the recovery folder: ${result.recovered.reason}`);
  return { files: result.files.length, _files: result.files } as Partial<WorkerResult>;
}

async function catalogRow(task: WorkerTask): Promise<Partial<WorkerResult>> {
  const models = await fetchModels(task);
  const snapshot = { models, fetchedAt: Date.now() };
  // A warm cache: what the extension has in globalState after any earlier session.
  let started = performance.now();
  const cache = new CatalogCache(() => Promise.reject(new Error('the network must not be used')), { load: () => snapshot, save: () => undefined });
  const first = await cache.get();
  const firstMs = performance.now() - started;
  if (first.length !== models.length) throw new Error('the cache lost models');
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    started = performance.now();
    await cache.get();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { catalog: { firstMs, medianMs: samples[samples.length >> 1]!, maxMs: samples[samples.length - 1]!, samples: samples.length } };
}

/** CPU time (ms) of each thread of this process, from /proc (Linux); undefined elsewhere. */
function threadCpuMs(): Map<string, number> | undefined {
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
function threadSplit(before: Map<string, number> | undefined, after: Map<string, number> | undefined): WorkerResult['threadCpuMs'] {
  if (!before || !after) return undefined;
  let other = 0;
  for (const [thread, ms] of after) if (thread !== String(process.pid)) other += ms - (before.get(thread) ?? 0);
  return { main: after.get(String(process.pid))! - before.get(String(process.pid))!, other };
}

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

/**
 * Waits (at most 3 s) until this process uses no CPU on any thread: after the warm-up's first
 * responses V8 compiles undici's llhttp WASM with TurboFan in the background, ~100-150 ms of CPU
 * that otherwise landed inside the first row's clock on a 2-core machine. An extension host has
 * done that long before a user's first job.
 */
async function settle(): Promise<number> {
  const started = performance.now();
  for (;;) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const used = process.cpuUsage(before);
    if ((used.user + used.system) / 1000 < 5 || performance.now() - started > 3000) return performance.now() - started;
  }
}

/** Files named …-<index>.<ext>: numeric order. */
function byIndexSuffix(a: string, b: string): number {
  const index = (f: string) => Number(/-(\d+)\.[a-z]+$/.exec(f)?.[1] ?? 0);
  return index(a) - index(b);
}

main().then(
  (result) => process.send!(result, () => process.exit(0)),
  (error) => {
    process.send!({ ok: false, error: String((error as Error)?.stack ?? error), wallMs: 0, idleRssMb: 0, peakRssMb: 0, maxLoopDelayMs: 0, probeLagMs: 0 }, () =>
      process.exit(1),
    );
  },
);
