// A process that runs paid jobs as the extension host does (the one job service, the in-flight
// records, the results journal on a file, each result recorded before its in-flight record goes)
// and can be killed with SIGKILL at any moment: the crash tests (test/unit/crash.test.ts) start it
// with fork() and read its progress over IPC.
//   parent: const child = startCrashChild(config); await child.until((m) => m.type === 'sent'); child.kill()
import { fork } from 'node:child_process';
import type { BatchLine } from '../../../src/core/requests/batchFile';
import { GatewayClient } from '../../../src/core/client/client';
import type { GenerationRequest } from '../../../src/core/gateway/types';
import { runBatch } from '../../../src/jobs/promptFiles/batch';
import { HistoryStore } from '../../../src/jobs/results/history';
import { JobHistoryRecord, recordFailure, recordResult } from '../../../src/jobs/jobRecord';
import { ImageJobService } from '../../../src/jobs/imageJobs';
import { InFlightJournal } from '../../../src/jobs/inFlight';
import type { ImageJob, JobEvent } from '../../../src/jobs/jobTypes';
import * as resultsCode from '../../../src/jobs/results/resultsBundle';

export interface CrashWorld {
  url: string;
  key: string;
  recoveryDir: string;
  inFlightDir: string;
  /** The results journal (results.jsonl in the workspace storage). */
  resultsFile: string;
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

/** The job service as src/services.ts builds it, over these folders, and the results journal with its code loaded in-process. */
export function crashService(
  world: CrashWorld,
  onEvent?: (event: JobEvent) => void,
): { service: ImageJobService; history: HistoryStore; client: GatewayClient; inFlight: InFlightJournal } {
  const client = new GatewayClient({ baseUrl: world.url, getApiKey: () => world.key, paidTimeoutMs: 60_000 });
  const inFlight = new InFlightJournal(world.inFlightDir);
  const service = new ImageJobService({
    api: async () => client,
    models: () => client.imageModels(),
    funds: () => ({}),
    applyUsage: () => undefined,
    reconcile: () => undefined,
    confirm: async () => true,
    confirmAbove: () => Number.POSITIVE_INFINITY,
    recoveryDir: world.recoveryDir,
    inFlight,
    resultsJournal: world.resultsFile,
    locale: 'en',
    onEvent,
  });
  return { service, history: new HistoryStore(world.resultsFile, { load: () => resultsCode }), client, inFlight };
}

/** Runs a prompt file's lines as Generate Images from File does (batchFromFile.ts). */
export function runLines(
  service: ImageJobService,
  history: HistoryStore,
  world: CrashWorld,
  file: string,
  lines: BatchLine[],
  concurrency: number,
  onLine?: (line: number, status: string) => void,
) {
  return runBatch(lines, {
    jobs: service,
    output: { directory: world.out, pattern: '{slug}-{index}' },
    concurrency,
    confirmedReservations: lines.map(() => Number.POSITIVE_INFINITY),
    history: {
      promptFile: file,
      record: (details, result) => recordResult(history, details, result),
      recordFailure: (details, failure) => recordFailure(history, details, failure),
      warn: (message) => console.warn(message),
    },
    onProgress: (outcome) => onLine?.(outcome.line, outcome.status),
  });
}

/** Runs one job as Generate does (jobRunner.ts): each saved image joins the journal at once, the result before the in-flight record goes. */
async function runOne(service: ImageJobService, history: HistoryStore, job: ImageJob): Promise<void> {
  const record = new JobHistoryRecord(history, { request: job.request, model: job.request.model });
  await service.run(job, {
    onEvent: (event) => {
      if (event.type === 'image-saved') void record.saved(event.file);
    },
    settle: (result) => record.finish(result),
  });
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
    if (config.job) await runOne(service, history, { request: config.job.request, output: { directory: config.out, pattern: config.job.pattern } });
    if (config.batch) {
      const { file, lines, concurrency } = config.batch;
      await runLines(service, history, config, file, lines, concurrency, (line, status) => send({ type: 'line', line, status }));
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
