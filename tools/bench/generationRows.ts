// The generation rows of the worker (forked by run.ts): the physical limit (drain and decode, no
// parsing), the naive json() client, the extension's own job service, the catalog from a warm
// cache, and the check of the saved images against what the emulator sent.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { CatalogCache } from '../../src/core/gateway/catalogCache';
import type { GatewayClient } from '../../src/core/client/client';
import { parseImageModels } from '../../src/core/gateway/catalog';
import type { ImageModel } from '../../src/core/gateway/types';
import { buildITXtChunk, IEND_CHUNK, readPngTextChunk } from '../../src/core/files/pngText';
import { ImageJobService } from '../../src/jobs/imageJobs';
import { PROVENANCE_KEYWORD } from '../../src/jobs/provenance';
import { Base64ToFile } from './base64ToFile';
import type { WorkerResult, WorkerTask } from './workerTypes';

/**
 * SHA-256 of an image as the gateway sent it. The extension's rows run with provenance on (the
 * default of gatewayImages.embedProvenance): their PNGs carry an iTXt chunk just before IEND, which
 * must be exactly the chunk the text rebuilds. That chunk is left out of the hash.
 */
export async function sha256AsSent(file: string): Promise<{ sha256: string; provenance: boolean; size: number }> {
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

export function generationBody(task: WorkerTask): string {
  return JSON.stringify({ model: task.model, prompt: task.prompt, n: task.n, size: task.size, seed: task.seed });
}

export function headers(task: WorkerTask): Record<string, string> {
  return { authorization: `Bearer ${task.apiKey}`, 'content-type': 'application/json', 'user-agent': 'gateway-images-bench' };
}

export async function fetchModels(task: WorkerTask): Promise<ImageModel[]> {
  const response = await request(`${task.baseUrl}/public/gateway/models/images`, { method: 'GET' });
  return parseImageModels(await response.body.json());
}

/** The physical limit: drain the body and base64-decode it into one file, no JSON parsing (Base64ToFile). */
export async function limitRow(task: WorkerTask, fileName = 'limit.bin'): Promise<Partial<WorkerResult>> {
  const handle = await fs.open(path.join(task.workDir, fileName), 'w');
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
export async function naiveRow(task: WorkerTask): Promise<Partial<WorkerResult>> {
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

export function jobService(task: WorkerTask, client: GatewayClient, models: ImageModel[]): ImageJobService {
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
export async function extensionRow(task: WorkerTask, service: ImageJobService): Promise<Partial<WorkerResult>> {
  const result = await service.run({
    request: { model: task.model!, prompt: task.prompt!, n: task.n, size: task.size, seed: task.seed },
    references: task.references,
    transport: task.transport,
    output: { directory: path.join(task.workDir, 'workspace', 'generated-images'), pattern: '{date}-{slug}-{model}-{index}' },
  });
  if (result.recovered) throw new Error(`images left in the recovery folder: ${result.recovered.reason}`);
  return { files: result.files.length, _files: result.files } as Partial<WorkerResult>;
}

export async function catalogRow(task: WorkerTask): Promise<Partial<WorkerResult>> {
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

/** Files named …-<index>.<ext>: numeric order. */
export function byIndexSuffix(a: string, b: string): number {
  const index = (f: string) => Number(/-(\d+)\.[a-z]+$/.exec(f)?.[1] ?? 0);
  return index(a) - index(b);
}
