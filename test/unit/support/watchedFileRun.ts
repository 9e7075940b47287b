// A run of a prompt file in a process of its own, as promptFileChild.ts runs one (the real
// jobs/promptFiles/promptFileRun.ts: the claim across processes, the resume plan, each line checked
// again right before it is sent), that also tells the parent, over IPC, each event of each request it
// makes (the prompt, the event, this machine's time) and the loss of its claim. So the several-actors
// soak can stop it (SIGSTOP) while the gateway holds its requests, and count what it sent after it
// woke. A short claim stale time comes with the task.
import { fork } from 'node:child_process';
import { GatewayError } from '../../../src/core/gateway/errors';
import type { ImageJobService } from '../../../src/jobs/imageJobs';
import type { JobEvent } from '../../../src/jobs/jobTypes';
import { heldOutcome } from '../../../src/jobs/promptFiles/heldLines';
import { PromptFileClaims, RunInProgressError } from '../../../src/jobs/promptFiles/promptFileClaim';
import { type PromptFileOutcome, runPromptFile } from '../../../src/jobs/promptFiles/promptFileRun';
import { crashService } from './crashChild';
import type { PromptFileTask } from './promptFileChild';

export interface WatchedFileTask extends PromptFileTask {
  /** The claim's stale time, ms: a run stopped this long loses its claim to the next start. */
  claimStaleMs: number;
}

/** One event of one request of the run, when it happened. */
export interface RequestEvent {
  prompt: string;
  event: JobEvent['type'];
  at: number;
}

export type WatchedFileReport =
  | { ok: true; outcome: PromptFileOutcome }
  | { ok: false; refused?: { message: string; window?: string }; error?: { kind?: string; message: string; stack?: string } };

type Message = { type: 'request'; request: RequestEvent } | { type: 'lost'; message: string; at: number } | { type: 'report'; report: WatchedFileReport };

if (require.main === module) {
  process.once('message', (task: WatchedFileTask) => {
    const tell = (message: Message, then: () => void = () => undefined) => process.send!(message, then);
    const { service, history, inFlight } = crashService(task);
    // The real service, its events told on the way: each request named by its prompt.
    const jobs = Object.create(service) as ImageJobService;
    jobs.run = (job, options = {}) =>
      service.run(job, {
        ...options,
        onEvent: (event) => {
          tell({ type: 'request', request: { prompt: job.request.prompt, event: event.type, at: Date.now() } });
          options.onEvent?.(event);
        },
      });
    const claims = new PromptFileClaims(task.claimsDir, (_file, error) => tell({ type: 'lost', message: error.message, at: Date.now() }), task.claimStaleMs);
    const finish = (report: WatchedFileReport) => tell({ type: 'report', report }, () => process.exit(0));
    runPromptFile(task.promptFile, {
      claims,
      who: { window: task.window, startedBy: 'arguments' },
      locale: 'en',
      history,
      inFlight,
      jobs,
      warn: () => undefined,
      prepare: async () => ({ lines: task.lines, output: { directory: task.out, pattern: '{slug}-line-{index}' }, concurrency: task.concurrency }),
      // As promptFileChild.ts's run by arguments: held lines stay held, the cost needs no confirmation.
      decideHeld: async (send, held) => ({ todo: send, kept: held.map(heldOutcome) }),
      confirm: async (todo) => todo.map(() => Number.POSITIVE_INFINITY),
      sending: (send) => send({}),
    })
      .finally(() => history.close())
      .then(
        (outcome) => finish({ ok: true, outcome }),
        (error: unknown) =>
          finish(
            error instanceof RunInProgressError
              ? { ok: false, refused: { message: error.message, window: error.owner?.window } }
              : {
                  ok: false,
                  error: {
                    kind: error instanceof GatewayError ? error.kind : undefined,
                    message: error instanceof Error ? error.message : String(error),
                    stack: error instanceof Error ? error.stack : undefined,
                  },
                },
          ),
      );
  });
}

export interface WatchedFileRun {
  window: string;
  pid: number;
  /** Each request's events so far, in order. */
  requests: RequestEvent[];
  /** When and why its claim was found lost (told by the claim), if it was. */
  lost?: { message: string; at: number };
  report: Promise<WatchedFileReport>;
  /** Resolves true once `test` holds for the events so far, false when the run reports first. */
  until(test: (requests: readonly RequestEvent[]) => boolean): Promise<boolean>;
  /** Ends the process (SIGKILL; SIGCONT first, should it be stopped), when a test fails midway. */
  kill(): void;
}

/** Starts the run in its own process. */
export function startWatchedFileRun(task: WatchedFileTask): WatchedFileRun {
  const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiters = new Set<() => void>();
  let reported = false;
  const run: WatchedFileRun = {
    window: task.window,
    pid: child.pid!,
    requests: [],
    report: new Promise((resolve, reject) => {
      child.on('message', (message: Message) => {
        if (message.type === 'request') run.requests.push(message.request);
        else if (message.type === 'lost') run.lost ??= { message: message.message, at: message.at };
        else {
          reported = true;
          resolve(message.report);
        }
        for (const waiter of [...waiters]) waiter();
      });
      child.once('exit', (code, signal) => {
        if (!reported) reject(new Error(`the run of ${task.window} exited (${code ?? signal}) without its report`));
        for (const waiter of [...waiters]) waiter();
      });
    }),
    until: (test) =>
      new Promise((resolve) => {
        const check = () => {
          const met = test(run.requests);
          if (!met && !reported && child.exitCode === null && child.signalCode === null) return;
          waiters.delete(check);
          resolve(met);
        };
        waiters.add(check);
        check();
      }),
    kill: () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    },
  };
  run.report.catch(() => undefined);
  child.send(task);
  return run;
}
