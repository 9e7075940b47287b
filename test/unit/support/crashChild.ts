// A process that runs paid jobs as the extension host does (the one job service, the in-flight
// journal, the history on a file) and can be killed with SIGKILL at any moment: the crash tests
// (test/unit/crash.test.ts) start it with fork() and read its progress over IPC.
//   parent: const child = startCrashChild(config); await child.until((m) => m.type === 'sent'); child.kill()
import { fork } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { BatchLine } from '../../../src/core/batchFile';
import { GatewayClient } from '../../../src/core/client';
import type { GenerationRequest } from '../../../src/core/types';
import { runBatch } from '../../../src/jobs/batch';
import { HistoryStore, type KeyValueStore } from '../../../src/jobs/history';
import { ImageJobService } from '../../../src/jobs/imageJobs';
import { InFlightJournal } from '../../../src/jobs/inFlight';
import type { JobEvent } from '../../../src/jobs/jobTypes';

export interface CrashWorld {
  url: string;
  key: string;
  recoveryDir: string;
  inFlightDir: string;
  historyFile: string;
  out: string;
}

export interface CrashChildConfig extends CrashWorld {
  job?: { request: GenerationRequest; pattern: string };
  batch?: { file: string; lines: BatchLine[]; concurrency: number };
}

export type CrashMessage =
  | { type: 'ready' }
  | { type: 'event'; event: Exclude<JobEvent, { type: 'outcome-unknown' } | { type: 'sending' }> | { type: 'sending' | 'outcome-unknown' } }
  | { type: 'line'; line: number; status: string }
  | { type: 'done'; error?: string };

/** The history on a file, each change written whole under a temporary name and renamed (as a Memento would be kept). */
export class FileStore implements KeyValueStore {
  private data: Record<string, unknown>;
  constructor(private readonly file: string) {
    try {
      this.data = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      this.data = {};
    }
  }
  get<T>(key: string): T | undefined {
    return this.data[key] as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.data[key] = value;
    writeFileSync(`${this.file}.tmp`, JSON.stringify(this.data));
    renameSync(`${this.file}.tmp`, this.file);
    return Promise.resolve();
  }
}

/** The job service as src/services.ts builds it, over these folders. */
export function crashService(
  world: CrashWorld,
  onEvent?: (event: JobEvent) => void,
): { service: ImageJobService; history: HistoryStore; client: GatewayClient } {
  const client = new GatewayClient({ baseUrl: world.url, getApiKey: () => world.key, paidTimeoutMs: 60_000 });
  const service = new ImageJobService({
    api: async () => client,
    models: () => client.imageModels(),
    funds: () => ({}),
    applyUsage: () => undefined,
    reconcile: () => undefined,
    confirm: async () => true,
    confirmAbove: () => Number.POSITIVE_INFINITY,
    recoveryDir: world.recoveryDir,
    inFlight: new InFlightJournal(world.inFlightDir),
    locale: 'en',
    onEvent,
  });
  return { service, history: new HistoryStore(new FileStore(world.historyFile)), client };
}

/** Records a finished line as Generate Images from File does (batchFromFile.ts). */
export function recordLine(history: HistoryStore, file: string) {
  return async (line: BatchLine, result: { files: string[]; model: string; usage?: { cost_rub?: number } }) => {
    if (!result.files.length) return;
    const { input_references: _refs, ...request } = line.request;
    await history.add({ request, model: result.model, files: result.files, costRub: result.usage?.cost_rub, batch: { file, line: line.line, key: line.key } });
  };
}

export interface CrashChild {
  pid: number;
  messages: CrashMessage[];
  /** Resolves with the first message (seen so far or to come) that `test` accepts. */
  until(test: (message: CrashMessage) => boolean, timeoutMs?: number): Promise<CrashMessage>;
  /** SIGKILL, then resolves once the process is gone. */
  kill(): Promise<void>;
  exited: Promise<void>;
}

export function startCrashChild(config: CrashChildConfig): CrashChild {
  const child = fork(__filename, [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages: CrashMessage[] = [];
  const waiters: { test: (m: CrashMessage) => boolean; resolve: (m: CrashMessage) => void }[] = [];
  child.on('message', (message: CrashMessage) => {
    messages.push(message);
    for (const w of [...waiters]) if (w.test(message)) w.resolve(message);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid!,
    messages,
    exited,
    until: (test, timeoutMs = 30_000) => {
      const seen = messages.find(test);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the child did not report that within ${timeoutMs} ms: ${JSON.stringify(messages)}`)), timeoutMs);
        const waiter = {
          test,
          resolve: (m: CrashMessage) => {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(waiter), 1);
            resolve(m);
          },
        };
        waiters.push(waiter);
        void exited.then(() => {
          clearTimeout(timer);
          if (waiters.includes(waiter)) reject(new Error(`the child exited before reporting that: ${JSON.stringify(messages)}`));
        });
      });
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as CrashChildConfig;
  const send = (message: CrashMessage) => process.send?.(message);
  const { service, history } = crashService(config, (event) => {
    const plain = event.type === 'sending' || event.type === 'outcome-unknown' ? { type: event.type } : event;
    send({ type: 'event', event: plain });
  });
  send({ type: 'ready' });
  try {
    if (config.job) await service.run({ request: config.job.request, output: { directory: config.out, pattern: config.job.pattern } });
    if (config.batch) {
      const { file, lines, concurrency } = config.batch;
      await runBatch(lines, {
        jobs: service,
        output: { directory: config.out, pattern: '{slug}-{index}' },
        concurrency,
        confirmedReservations: lines.map(() => Number.POSITIVE_INFINITY),
        file,
        record: recordLine(history, file),
        onProgress: (outcome) => send({ type: 'line', line: outcome.line, status: outcome.status }),
      });
    }
    finish({ type: 'done' });
  } catch (error) {
    finish({ type: 'done', error: error instanceof Error ? error.message : String(error) });
  }
}

/** The last message, then the process ends (the IPC channel and keep-alive sockets would hold it). */
function finish(message: CrashMessage): void {
  if (!process.send) process.exit(0);
  process.send(message, () => process.exit(0));
}

if (require.main === module) void main();
