// At start-up: paid requests whose extension host died while they were in flight (a crash, a reload,
// an update) left their in-flight records (jobs/inFlight.ts). Each is settled (jobs/interrupted.ts:
// images in the workspace stay, the rest goes to the recovery folder with a manifest), recorded in
// the history as interrupted with its request id, and then its record goes. The account is read
// again from the gateway, and one notification says what happened, offers Recover Unsaved Images
// when something waits, and says when it is unknown whether the gateway charged.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatRubles } from '../core/cost';
import { trPlural } from '../core/plural';
import { type InterruptedJob, recordInterrupted, settleInterrupted } from '../jobs/interrupted';
import { type Services } from '../services';

/** Settles what a dead extension host left in flight; resolves with what it found (also when nothing). */
export async function settleInterruptedJobs(services: Services): Promise<InterruptedJob[]> {
  const records = await services.inFlight.leftBehind();
  const settled: InterruptedJob[] = [];
  for (const record of records) {
    try {
      const job = await settleInterrupted(record);
      await recordInterrupted(services.history, job);
      await services.inFlight.remove(record.id);
      services.log.warn(
        `Interrupted job ${record.id} (${record.request.model}, ${record.requestId ?? 'no request id'}): ${job.charged ? 'charged' : 'outcome unknown'}; ` +
          `${job.placed.length} image(s) in the workspace, ${job.kept ? `${job.kept.images} whole and ${job.kept.incomplete} incomplete kept in ${job.kept.manifestPath}` : 'nothing kept'}; recorded in the history as interrupted`,
      );
      settled.push(job);
    } catch (error) {
      // The record stays: the next start tries again.
      services.log.error(`Could not settle the interrupted job ${record.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (settled.length) void tell(services, settled);
  return settled;
}

async function tell(services: Services, jobs: InterruptedJob[]): Promise<void> {
  const unknown = jobs.filter((j) => !j.charged).length;
  const placed = jobs.reduce((n, j) => n + j.placed.length, 0);
  const waiting = jobs.reduce((n, j) => n + (j.kept ? j.kept.images + j.kept.incomplete + j.kept.answers : 0), 0);
  const change = await services.account.reconcile().catch(() => undefined);
  const balance = change?.after.balance;
  const parts = [
    trPlural(
      jobs.length,
      { one: 'The window closed while {0} paid request was in flight.', other: 'The window closed while {0} paid requests were in flight.' },
      jobs.length,
    ),
    placed ? trPlural(placed, { one: '{0} image had been saved into the workspace.', other: '{0} images had been saved into the workspace.' }, placed) : '',
    waiting
      ? trPlural(
          waiting,
          { one: '{0} file waits in the recovery folder ({1}).', other: '{0} files wait in the recovery folder ({1}).' },
          waiting,
          path.dirname(jobs.find((j) => j.kept)!.kept!.manifestPath),
        )
      : '',
    unknown
      ? trPlural(
          unknown,
          {
            one: 'For {0} request it is unknown whether the gateway charged: nothing is sent again by itself.',
            other: 'For {0} requests it is unknown whether the gateway charged: nothing is sent again by itself.',
          },
          unknown,
        )
      : '',
    balance !== undefined ? vscode.l10n.t('The balance was read again from the gateway: {0}.', formatRubles(balance, services.locale)) : '',
  ].filter(Boolean);
  const recover = vscode.l10n.t('Recover Unsaved Images');
  const log = vscode.l10n.t('Show Log');
  const choice = await vscode.window.showWarningMessage(parts.join(' '), ...(waiting ? [recover] : []), log);
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
    const others = (await services.inFlight.list()).filter((r) => r.pid !== process.pid);
    if (others.length && ++checks < RECHECKS) timer = setTimeout(() => void check().catch(logError), RECHECK_MS);
  };
  const logError = (error: unknown) => services.log.error(`Interrupted jobs: ${String(error)}`);
  timer = setTimeout(() => void check().catch(logError), 0);
  return { dispose: () => clearTimeout(timer) };
}
