// At start-up: paid requests whose extension host died while they were in flight (a crash, a reload,
// an update) left their in-flight records (jobs/inFlight.ts). Each is settled (jobs/interrupted.ts:
// images in the workspace stay, the rest goes to the recovery folder with a manifest), recorded in
// the history as interrupted with its request id, and then its record goes. The account is read
// again from the gateway, and one notification says what happened, offers Recover Unsaved Images
// when something waits, and says when it is unknown whether the gateway charged.
import * as vscode from 'vscode';
import type * as InterruptedModule from '../../jobs/interrupted';
import { type Services } from '../../services';
import { messageText } from '../../core/common/markdownText';
import { finishInterruptedRegionEdits } from './regionRecoveryStart';

type InterruptedJob = InterruptedModule.InterruptedJob;
let interrupted: typeof InterruptedModule | undefined;

/** dist/interrupted.js (esbuild.mjs), loaded only when a dead extension host left records; esbuild leaves this require alone. */
function load(): typeof InterruptedModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a chunk of its own, loaded on first use
  interrupted ??= require('./interrupted.js') as typeof InterruptedModule;
  return interrupted;
}

/** Settles what a dead extension host left in flight; resolves with what it found (also when nothing). */
export async function settleInterruptedJobs(services: Services): Promise<InterruptedJob[]> {
  const records = await services.inFlight.leftBehind();
  const settled: InterruptedJob[] = [];
  if (!records.length) return settled;
  const { settleRecord } = load();
  for (const record of records) {
    try {
      const outcome = await settleRecord(services.history, record);
      await services.inFlight.remove(record.id);
      if (outcome.kind === 'finished') {
        // It ended with its result; only its history entry may have been lost with the window.
        if (outcome.restored) services.log.warn(`Job ${record.id} had finished, but its history entry was lost with the window: restored`);
        continue;
      }
      services.log.warn(
        `Interrupted job ${record.id}: ${JSON.stringify({ ...outcome.job, record: undefined, requestId: record.requestId })}; recorded in the history as interrupted`,
      );
      settled.push(outcome.job);
    } catch (error) {
      // The record stays: the next start tries again.
      services.log.error(`Could not settle the interrupted job ${record.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (settled.length) void tell(services, settled);
  return settled;
}

async function tell(services: Services, jobs: InterruptedJob[]): Promise<void> {
  const change = await services.account.reconcile().catch(() => undefined);
  const { text, waiting } = load().describeInterrupted(jobs, change?.after.balance, services.locale);
  const recover = vscode.l10n.t('Recover Unsaved Images');
  const log = vscode.l10n.t('Show Log');
  const choice = await vscode.window.showWarningMessage(messageText(text), ...(waiting ? [recover] : []), log);
  if (choice === recover) await vscode.commands.executeCommand('gatewayImages.recoverImages');
  else if (choice === log) services.log.show(true);
}

/** How often, and how many times, records of a process still alive are looked at again (an old window's host shutting down). */
const RECHECK_MS = 2_000;
const RECHECKS = 30;

/** Runs after activation, off its path (activation does no file I/O), and again while another host's records remain. */
export function registerInterruptedJobs(services: Services): vscode.Disposable {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let checks = 0;
  const check = async () => {
    await settleInterruptedJobs(services);
    // Once a start, after the jobs' own records: their entries may be the region edits to finish.
    if (checks === 0) await finishInterruptedRegionEdits(services).catch((error: unknown) => services.log.error(`Interrupted region edits: ${String(error)}`));
    const others = (await services.inFlight.list()).filter((r) => r.pid !== process.pid);
    if (others.length && ++checks < RECHECKS) timer = setTimeout(() => void check().catch(logError), RECHECK_MS);
  };
  const logError = (error: unknown) => services.log.error(`Interrupted jobs: ${String(error)}`);
  timer = setTimeout(() => void check().catch(logError), 0);
  return { dispose: () => clearTimeout(timer) };
}
