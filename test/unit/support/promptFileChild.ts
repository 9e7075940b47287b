// A process that runs a prompt file as Generate Images from File does by arguments (the real run of
// jobs/promptFiles/promptFileRun.ts: the claim across processes, the resume planned from the results journal, each
// line checked again right before it is sent, the claim confirmed before each request), against the
// emulator. Started with fork() by the tests of several runs at once and of paused runs; it reports
// its outcome, or the refusal, over IPC.
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { BatchLine } from '../../../src/core/requests/batchFile';
import { heldOutcome, resendable } from '../../../src/jobs/promptFiles/heldLines';
import { PromptFileClaims, RunInProgressError } from '../../../src/jobs/promptFiles/promptFileClaim';
import { runPromptFile, type PromptFileOutcome } from '../../../src/jobs/promptFiles/promptFileRun';
import { crashService, type CrashWorld } from './crashChild';

export interface PromptFileTask extends CrashWorld {
  promptFile: string;
  lines: BatchLine[];
  claimsDir: string;
  window: string;
  concurrency: number;
  resendInterrupted?: boolean;
  /** The claim's stale time (every process of a test must use the same); the lease's default when absent. */
  staleMs?: number;
}

export type PromptFileReport = { ok: true; outcome: PromptFileOutcome } | { ok: false; refused?: { message: string; window?: string }; error?: string };

/**
 * A window's folders under `root` (output, recovery, in-flight records, claims, its results journal)
 * and an empty prompt file there, as a task for `lines`; `rest` sets the window, concurrency and more.
 */
export function promptFileWorld(root: string, gateway: { url: string; key: string }, lines: BatchLine[], rest: Partial<PromptFileTask> = {}): PromptFileTask {
  for (const sub of ['out', 'recovery', 'in-flight', 'claims']) mkdirSync(path.join(root, sub), { recursive: true });
  const promptFile = path.join(root, 'prompts.jsonl');
  writeFileSync(promptFile, '');
  return {
    ...gateway,
    recoveryDir: path.join(root, 'recovery'),
    inFlightDir: path.join(root, 'in-flight'),
    resultsFile: path.join(root, 'results.jsonl'),
    out: path.join(root, 'out'),
    claimsDir: path.join(root, 'claims'),
    promptFile,
    lines,
    window: 'window A',
    concurrency: 1,
    ...rest,
  };
}

/** The run as the command makes it, without its UI: held lines go only with `resendInterrupted`, the cost needs no confirmation. */
export function runFileAsCommand(task: PromptFileTask, claims = new PromptFileClaims(task.claimsDir, undefined, task.staleMs)): Promise<PromptFileOutcome> {
  const { service, history, inFlight } = crashService(task);
  return runPromptFile(task.promptFile, {
    claims,
    who: { window: task.window, startedBy: 'arguments' },
    locale: 'en',
    history,
    inFlight,
    jobs: service,
    warn: () => undefined,
    prepare: async () => ({ lines: task.lines, output: { directory: task.out, pattern: '{slug}-line-{index}' }, concurrency: task.concurrency }),
    decideHeld: async (send, held) => {
      const again = task.resendInterrupted ? held.filter(resendable) : [];
      return { todo: [...send, ...again.map((h) => h.line)].sort((a, b) => a.line - b.line), kept: held.filter((h) => !again.includes(h)).map(heldOutcome) };
    },
    confirm: async (todo) => todo.map(() => Number.POSITIVE_INFINITY),
    sending: (send) => send({}),
  }).finally(() => history.close());
}

if (require.main === module) {
  process.once('message', (task: PromptFileTask) => {
    const report = (message: PromptFileReport) => process.send!(message, () => process.exit(0));
    runFileAsCommand(task).then(
      (outcome) => report({ ok: true, outcome }),
      (error: unknown) =>
        report(
          error instanceof RunInProgressError
            ? { ok: false, refused: { message: error.message, window: error.owner?.window } }
            : { ok: false, error: String(error instanceof Error ? error.stack : error) },
        ),
    );
  });
}

/** Starts the run in its own process; resolves with what it reports. */
export function runFileInProcess(task: PromptFileTask): Promise<PromptFileReport> {
  return startFileRun(task).report;
}

/** Starts the run in its own process: its pid (a test may pause it), and what it reports. */
export function startFileRun(task: PromptFileTask): { pid: number; report: Promise<PromptFileReport> } {
  const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const report = new Promise<PromptFileReport>((resolve, reject) => {
    child.once('message', (message: PromptFileReport) => resolve(message));
    child.once('exit', (code, signal) => code !== 0 && reject(new Error(`the run's process exited with ${code ?? signal}`)));
  });
  child.send(task);
  return { pid: child.pid!, report };
}
