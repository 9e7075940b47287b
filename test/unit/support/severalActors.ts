// The actors of the soak with several actors (test/unit/severalActors.test.ts), on one emulator
// account: a person's window (the job service, account model, results journal and outcome checks
// composed as src/services.ts composes them, each job recorded as commands/images/jobRunner.ts records it),
// an agent through the real MCP server process, and top-ups from outside. The prompt file's runs are
// processes of their own (watchedFileRun.ts); the actors paused past a lease's stale time are in
// pausedActors.ts. Cancels and top-ups wait on the emulator's request log (a state), never on time.
import * as path from 'node:path';
import { AccountModel } from '../../../src/account/accountModel';
import { GatewayClient } from '../../../src/core/client/client';
import { GatewayError } from '../../../src/core/gateway/errors';
import type { GenerationRequest, ImageModel } from '../../../src/core/gateway/types';
import { HistoryStore } from '../../../src/jobs/results/history';
import { ImageJobService } from '../../../src/jobs/imageJobs';
import { InFlightJournal } from '../../../src/jobs/inFlight';
import { JobHistoryRecord } from '../../../src/jobs/jobRecord';
import type { EditTransport, JobEvent, JobResult, PaidFailure } from '../../../src/jobs/jobTypes';
import { type OutcomeChecks, outcomeChecksFor } from '../../../src/jobs/outcomeCheck';
import * as resultsCode from '../../../src/jobs/results/resultsBundle';
import { settleBy } from '../../../src/jobs/settle';
import type { RecordedRequest } from '../../../tools/emulator/state';
import type { EmulatorProcess } from './emulatorProcess';
import { launch, type ToolResult } from './mcp';

/** How often a wait on the emulator's request log reads it again. */
const POLL_MS = 15;

/**
 * The emulator's request log, read again (over IPC) while someone waits on it: waits for what the
 * gateway holds (a request it reserved for and still works on, a number of requests reached).
 */
export class RequestLogWatch {
  private waiters: { test: (log: readonly RecordedRequest[]) => boolean; resolve: (met: boolean) => void }[] = [];
  private polling = false;
  private stopped = false;

  constructor(private readonly emu: EmulatorProcess) {}

  /** Resolves true once `test` holds for the log, false when `abandon` settles first or the watch stops. */
  until(test: (log: readonly RecordedRequest[]) => boolean, abandon?: Promise<unknown>): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = { test, resolve };
      this.waiters.push(waiter);
      const drop = () => {
        if (!this.waiters.includes(waiter)) return;
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      };
      abandon?.then(drop, drop);
      void this.poll();
    });
  }

  /** Gives up every wait. */
  stop(): void {
    this.stopped = true;
    for (const waiter of this.waiters) waiter.resolve(false);
    this.waiters = [];
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.waiters.length && !this.stopped) {
        const log = await this.emu.get('requests');
        for (const waiter of [...this.waiters]) {
          if (!waiter.test(log)) continue;
          this.waiters = this.waiters.filter((w) => w !== waiter);
          waiter.resolve(true);
        }
        if (this.waiters.length) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } finally {
      this.polling = false;
    }
  }
}

/** The folders of one workspace and the extension's global storage, shared by every actor as one user's windows share them. */
export interface SoakFolders {
  workspace: string;
  /** Global storage: recovery folder, prompt-file claims. */
  storage: string;
  /** Workspace storage: the results journal and the in-flight records. */
  workspaceStorage: string;
}

/** A workspace of the same user: its folder, its results journal and in-flight records. */
export interface OtherWorkspace {
  workspace: string;
  journal: string;
  inFlight: string;
}

export const foldersOf = (
  root: string,
): SoakFolders & { recovery: string; journal: string; inFlight: string; claims: string; second: OtherWorkspace; third: OtherWorkspace } => {
  const storage = path.join(root, 'global-storage');
  const workspaceStorage = path.join(root, 'workspace-storage');
  const other = (n: number): OtherWorkspace => ({
    workspace: path.join(root, `workspace-${n}`),
    journal: path.join(root, `workspace-storage-${n}`, 'results.jsonl'),
    inFlight: path.join(root, `workspace-storage-${n}`, 'in-flight'),
  });
  return {
    workspace: path.join(root, 'workspace'),
    storage,
    workspaceStorage,
    recovery: path.join(storage, 'recovery'),
    claims: path.join(storage, 'prompt-file-runs'),
    journal: path.join(workspaceStorage, 'results.jsonl'),
    inFlight: path.join(workspaceStorage, 'in-flight'),
    // A window of another workspace that holds the prompt file too; and a workspace whose journal a writer compacts.
    second: other(2),
    third: other(3),
  };
};

/** A person's window: the services of src/services.ts over the shared folders, without the UI. */
export interface PersonWindow {
  client: GatewayClient;
  account: AccountModel;
  service: ImageJobService;
  history: HistoryStore;
  outcomes: OutcomeChecks;
  out: string;
  /** What the window's log would say (outcome checks, journal warnings). */
  log: string[];
  close(): Promise<void>;
}

/** A deadline of the outcome check: the emulator returns a reservation as soon as the connection drops, so a short one is past its work. */
export const OUTCOME_DEADLINE_MS = 1_000;

export async function personWindow(emu: EmulatorProcess, key: string, root: string, models: ImageModel[]): Promise<PersonWindow> {
  const folders = foldersOf(root);
  const client = new GatewayClient({ baseUrl: emu.url, getApiKey: () => key, paidTimeoutMs: 30_000, freeTimeoutMs: 10_000 });
  const account = new AccountModel(async () => client);
  const log: string[] = [];
  // As the window's journal: it follows the other processes' changes as they happen.
  const history = new HistoryStore(folders.journal, { load: () => resultsCode, warn: (message) => log.push(message), watch: true });
  const service = new ImageJobService({
    api: async () => client,
    models: async () => models,
    funds: () => account.currentFunds(),
    applyUsage: (usage, identity) => account.applyUsage(usage, identity),
    fundsRefused: () => void account.refresh().catch(() => undefined),
    reconcile: () => account.reconcileSoon(100),
    confirm: async () => true,
    confirmAbove: () => Number.POSITIVE_INFINITY,
    // Off, so that a saved PNG is byte-equal to what the gateway sent (its SHA-256 is in the emulator's record).
    provenance: () => false,
    recoveryDir: folders.recovery,
    inFlight: new InFlightJournal(folders.inFlight),
    resultsJournal: folders.journal,
    locale: 'en',
  });
  const outcomes = outcomeChecksFor(account, {
    history,
    deadlineMs: () => OUTCOME_DEADLINE_MS,
    log: (message) => log.push(message),
  });
  await account.refresh();
  return {
    client,
    account,
    service,
    history,
    outcomes,
    out: path.join(folders.workspace, 'person'),
    log,
    close: async () => {
      outcomes.dispose();
      account.dispose();
      await history.close();
      await client.close();
    },
  };
}

/** Where a person's cancel is meant to land. */
export type CancelPoint = 'none' | 'before-send' | 'held' | 'answer-began';
/** Where it landed, by the job's own events when the cancel came. */
export type CancelStage = 'before the body left' | 'while the gateway held it' | 'after the answer began';

export interface PersonJob {
  id: number;
  request: GenerationRequest;
  references?: string[];
  transport?: EditTransport;
  cancelAt: CancelPoint;
}

export interface PersonOutcome {
  job: PersonJob;
  /** The job's events, in order. */
  events: JobEvent['type'][];
  cancelled?: CancelStage;
  result?: JobResult;
  error?: GatewayError;
  /** Not a GatewayError: a defect. */
  untyped?: string;
  /** What settleFailure recorded as a paid request without its images. */
  paidFailure?: PaidFailure;
}

/**
 * One job as Generate Image runs it (commands/images/jobRunner.ts): each saved image joins the journal at
 * once, the result is settled into the journal before the in-flight record goes, a paid request
 * without its images is recorded as paid and its unknown outcome checked after the deadline. The
 * cancel lands where the job says: at its 'sending' event, once the emulator holds its request (it
 * reserved, and works), or at its 'answered' event.
 */
export async function runPersonJob(person: PersonWindow, job: PersonJob, requestLog: RequestLogWatch): Promise<PersonOutcome> {
  const outcome: PersonOutcome = { job, events: [] };
  const controller = new AbortController();
  const cancel = () => {
    if (controller.signal.aborted) return;
    outcome.cancelled = !outcome.events.includes('sent')
      ? 'before the body left'
      : !outcome.events.includes('answered')
        ? 'while the gateway held it'
        : 'after the answer began';
    controller.abort();
  };
  const warn = (message: string) => person.log.push(message);
  const record = new JobHistoryRecord(person.history, { request: job.request, references: job.references, model: job.request.model });
  const onEvent = (event: JobEvent) => {
    outcome.events.push(event.type);
    if (event.type === 'image-saved') void record.saved(event.file).catch((error: unknown) => warn(`History: ${String(error)}`));
    if ((job.cancelAt === 'before-send' && event.type === 'sending') || (job.cancelAt === 'answer-began' && event.type === 'answered')) cancel();
  };
  const settle = settleBy((done: JobResult) => record.finish(done), warn, 'The result');
  const settleFailure = settleBy(
    async (failure: PaidFailure) => {
      outcome.paidFailure = failure;
      await record.failed(failure);
      person.outcomes.watch(failure);
    },
    warn,
    'The paid request',
  );
  const running = person.service.run(
    { request: job.request, references: job.references, transport: job.transport, output: { directory: person.out, pattern: `{model}-job-${job.id}-{index}` } },
    { signal: controller.signal, onEvent, settle, settleFailure },
  );
  if (job.cancelAt === 'held') {
    const held = (log: readonly RecordedRequest[]) =>
      log.some((r) => r.prompt === job.request.prompt && r.reservedRub > 0 && r.status === 0 && !r.clientAborted);
    if (
      await requestLog.until(
        held,
        running.catch(() => undefined),
      )
    )
      cancel();
  }
  try {
    outcome.result = await running;
  } catch (error) {
    if (error instanceof GatewayError) outcome.error = error;
    else outcome.untyped = String(error instanceof Error ? error.stack : error);
  }
  return outcome;
}

/** Runs the jobs, `workers` at a time (a person who starts a second job while the first runs). */
export async function runPerson(person: PersonWindow, jobs: PersonJob[], requestLog: RequestLogWatch, workers: number): Promise<PersonOutcome[]> {
  const outcomes: PersonOutcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < jobs.length) outcomes.push(await runPersonJob(person, jobs[next++]!, requestLog));
    }),
  );
  return outcomes.sort((a, b) => a.job.id - b.job.id);
}

export interface McpCall {
  prompt: string;
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
}

export interface McpSession {
  calls: McpCall[];
  /** The server's stderr. */
  stderr: string;
}

/**
 * An agent's session: the real MCP server (dist/mcp.js) under a session cap, `workers` generate_image
 * calls at a time, until the cap refuses one (then the calls in flight end, and the session closes).
 */
export async function runMcpSession(
  env: Record<string, string>,
  argsOf: (call: number) => { prompt: string } & Record<string, unknown>,
  workers: number,
  maxCalls: number,
): Promise<McpSession> {
  const { client, output } = await launch(env);
  const calls: McpCall[] = [];
  let made = 0;
  let refused = false;
  try {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (!refused && made < maxCalls) {
          const args = argsOf(++made);
          const result = (await client.callTool({ name: 'generate_image', arguments: args })) as ToolResult;
          const structured = result.structuredContent ?? {};
          const text = result.content.flatMap((c) => (c.type === 'text' && c.text ? [c.text] : [])).join('\n');
          calls.push({ prompt: args.prompt, isError: result.isError === true, text, structured });
          if (structured.refusedBy === 'maxCostPerSession') refused = true;
        }
      }),
    );
  } finally {
    await client.close();
  }
  return { calls, stderr: output.stderr };
}

/**
 * Top-ups from outside: each waits until the gateway has reached `after` paid requests (of every
 * actor), then adds its amount in one step. Ends once every top-up is made, or the watch stops.
 */
export async function topUpsFromOutside(emu: EmulatorProcess, requestLog: RequestLogWatch, plan: { after: number; rub: number }[]): Promise<number[]> {
  const made: number[] = [];
  for (const { after, rub } of plan) {
    if (!(await requestLog.until((log) => log.filter((r) => r.reservedRub > 0).length >= after))) break;
    await emu.call('topUp', rub);
    made.push(rub);
  }
  return made;
}
