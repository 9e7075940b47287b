// Shared helpers of the core's unit tests: the emulator on loopback, clients, sinks, temp folders,
// local HTTP servers and the job service wired to real HTTP (nothing is mocked).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GatewayClient, type GatewayClientConfig, type RequestLogEntry } from '../../../src/core/client/client';
import type { ImageSink, ImageWriter } from '../../../src/core/gateway/imageSink';
import type { FundsSnapshot } from '../../../src/core/money/cost';
import type { ImageModel, Usage } from '../../../src/core/gateway/types';
import { ImageJobService } from '../../../src/jobs/imageJobs';
import type { JobDeps, JobEvent } from '../../../src/jobs/jobTypes';
import { DEMO_KEYS, startEmulator, type RunningEmulator } from '../../../tools/emulator';
import type { RecordedRequest } from '../../../tools/emulator/state';

export { DEMO_KEYS, startEmulator, type RunningEmulator };

/** A 1×1 PNG. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** Small explicit pixels: renders in milliseconds. */
export const SMALL = '64x64';

/** A client of the tests: it logs every request it makes in `calls`. */
export type TestClient = GatewayClient & { calls: RequestLogEntry[] };

export function newClient(emu: { url: string }, key: string | null = DEMO_KEYS.unlimited, extra: Partial<GatewayClientConfig> = {}): TestClient {
  const log: RequestLogEntry[] = [];
  const client = new GatewayClient({
    baseUrl: emu.url,
    getApiKey: () => key ?? undefined,
    retryBaseDelayMs: 5,
    freeTimeoutMs: 5_000,
    paidTimeoutMs: 15_000,
    onRequest: (entry) => log.push(entry),
    ...extra,
  });
  return Object.assign(client, { calls: log });
}

export interface GatewaySuiteOptions {
  /** Config of every client the suite makes, under each call's own `extra`. */
  client?: Partial<GatewayClientConfig>;
  /** Prefix of the suite's temp folder; false: no folder. */
  dir?: string | false;
  /** Read the image catalog once, before the tests. */
  models?: boolean;
  /** Reset the emulator's state before each test (default true). */
  reset?: boolean;
}

/** What a describe block against the emulator shares; the fields are there once its `before` ran. */
export interface GatewaySuite {
  readonly emu: RunningEmulator;
  /** The unlimited key's client, made on first use. */
  readonly client: TestClient;
  readonly dir: string;
  readonly models: ImageModel[];
  /** Another client (unlimited key unless given), closed after the suite. */
  newClient(key?: string | null, extra?: Partial<GatewayClientConfig>): TestClient;
}

/**
 * Registers the hooks most suites repeat: the emulator (and a temp folder) before the tests, a reset
 * before each, every client, the emulator and the folder closed after. Call it first in `describe`:
 * mocha runs hooks in the order they are registered, so the block's own hooks see a ready suite.
 */
export function gatewaySuite(options: GatewaySuiteOptions = {}): GatewaySuite {
  let emu: RunningEmulator | undefined;
  let dir: string | undefined;
  let models: ImageModel[] | undefined;
  let main: TestClient | undefined;
  const clients: GatewayClient[] = [];
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`gatewaySuite: no ${name} (used before the suite's before hook, or not asked for)`);
    return value;
  };
  const suite: GatewaySuite = {
    get emu() {
      return ready(emu, 'emulator');
    },
    get client() {
      return (main ??= suite.newClient());
    },
    get dir() {
      return ready(dir, 'temp folder');
    },
    get models() {
      return ready(models, 'models');
    },
    newClient(key: string | null = DEMO_KEYS.unlimited, extra: Partial<GatewayClientConfig> = {}) {
      const client = newClient(suite.emu, key, { ...options.client, ...extra });
      clients.push(client);
      return client;
    },
  };
  before(async () => {
    emu = await startEmulator();
    if (options.dir !== false) dir = await tempDir(options.dir);
    if (options.models) models = await suite.client.imageModels();
  });
  if (options.reset !== false) beforeEach(() => suite.emu.state.reset());
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await emu?.close();
    await removeDir(dir);
  });
  return suite;
}

/** Collects every image in memory. */
export class MemorySink implements ImageSink {
  readonly images = new Map<number, Buffer>();
  readonly aborted: number[] = [];
  open(index: number): ImageWriter {
    const parts: Buffer[] = [];
    return {
      write: (bytes) => void parts.push(Buffer.from(bytes)),
      close: async () => void this.images.set(index, Buffer.concat(parts)),
      abort: async () => void this.aborted.push(index),
    };
  }
}

export const paidRequests = (emu: RunningEmulator): RecordedRequest[] => emu.state.requests.filter((r) => r.paid);

export async function tempDir(prefix = 'gwi-unit-'): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** Every file under `dir`, relative, recursively; [] when it does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)))
      .sort();
  } catch {
    return [];
  }
}

export async function writePng(dir: string, name: string, bytes: Buffer = TINY_PNG): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  return file;
}

export interface ServiceRig {
  service: ImageJobService;
  events: JobEvent[];
  usages: Usage[];
  reconciles: number;
  confirms: number;
}

/** The job service over a real client; funds unknown unless given; never asks for confirmation. */
export function newService(client: GatewayClient, models: ImageModel[], recoveryDir: string, overrides: Partial<JobDeps> = {}): ServiceRig {
  const rig: ServiceRig = { service: undefined as unknown as ImageJobService, events: [], usages: [], reconciles: 0, confirms: 0 };
  rig.service = new ImageJobService({
    api: async () => client,
    models: async () => models,
    funds: (): FundsSnapshot => ({}),
    applyUsage: (usage) => void rig.usages.push(usage),
    reconcile: () => void rig.reconciles++,
    confirm: async () => {
      rig.confirms++;
      return true;
    },
    confirmAbove: () => Number.POSITIVE_INFINITY,
    recoveryDir,
    locale: 'en',
    onEvent: (event) => void rig.events.push(event),
    ...overrides,
  });
  return rig;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

export interface LocalServer {
  url: string;
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** A tiny loopback HTTP server whose answers the test scripts. */
export async function localServer(handler: Handler): Promise<LocalServer> {
  const requests: LocalServer['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      Promise.resolve(handler(req, res, Buffer.concat(chunks))).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs `fn` and returns what it threw (fails when it does not throw). */
export async function caught<T = Error>(fn: () => Promise<unknown>): Promise<T> {
  try {
    await fn();
  } catch (error) {
    return error as T;
  }
  throw new Error('expected a rejection, got success');
}
