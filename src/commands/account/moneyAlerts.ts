// Alerts before the money runs out, as notifications: after each account refresh the figures are
// judged (core/money/alerts.ts) and a crossing not told yet is told once, in one window of the
// profile (account/alertRecords.ts), with Show Account and "Don't warn again for this key".
// An agent's paid result in the journal refreshes the account soon: agents' spend counts too.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { alertFactsOf } from '../../account/alertFacts';
import { AlertRecords } from '../../account/alertRecords';
import { messageText } from '../../core/common/markdownText';
import { describeAlert, type MoneyAlert, weekSpendOf, weekWindow } from '../../core/money/alerts';
import { readAlertSettings } from '../../host/settings';
import type { Services } from '../../services';

/** Figures settle this long after a change before they are judged (a refresh reads four parts; a usage comes before its reconcile). */
const CHECK_DELAY_MS = 1_000;

export function registerMoneyAlerts(services: Services): vscode.Disposable {
  const records = new AlertRecords(services.context.globalState, randomUUID());
  let timer: ReturnType<typeof setTimeout> | undefined;
  let checking = Promise.resolve();
  const schedule = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      checking = checking.then(() => check(services, records)).catch((error: unknown) => services.log.warn(`Money alerts: ${String(error)}`));
    }, CHECK_DELAY_MS);
  };
  const subscriptions = [
    services.account.onDidChange((snapshot) => snapshot.status === 'ready' && !snapshot.switching && schedule()),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('gatewayImages.alerts') && schedule()),
    // The MCP server writes its paid results into this window's journal: the key's figures changed.
    services.history.onDidChange((change) => change.entry?.origin?.kind === 'mcp' && change.entry.costRub !== undefined && services.account.reconcileSoon()),
    vscode.commands.registerCommand('gatewayImages.resumeMoneyAlerts', () => resume(services, records).then(schedule)),
  ];
  return new vscode.Disposable(() => {
    if (timer) clearTimeout(timer);
    for (const s of subscriptions) s.dispose();
  });
}

async function check(services: Services, records: AlertRecords): Promise<void> {
  const snapshot = services.account.snapshot;
  const identity = snapshot.identity;
  if (snapshot.status !== 'ready' || snapshot.switching || !identity || records.isMuted(identity)) return;
  const settings = readAlertSettings();
  const now = new Date();
  // This week's pace needs the journal: read only when the runway is watched.
  const weekSpend = settings.runwayDays > 0 ? await recentSpend(services, identity, now) : undefined;
  // The key or gateway may have changed while the journal was read.
  if (services.account.snapshot.identity !== identity) return;
  const alerts = await records.tellOnce(identity, settings, alertFactsOf(snapshot, now, weekSpend));
  for (const alert of alerts) void tell(services, records, identity, alert);
}

async function recentSpend(services: Services, identity: string, now: Date): Promise<number | undefined> {
  try {
    const { from, to } = weekWindow(now);
    return weekSpendOf((await services.history.index()).createdBetween(from, to), identity, now);
  } catch (error) {
    services.log.warn(`Money alerts: the results journal could not be read for this week's spend: ${String(error)}`);
    return undefined;
  }
}

async function tell(services: Services, records: AlertRecords, identity: string, alert: MoneyAlert): Promise<void> {
  const text = describeAlert(alert, services.locale);
  services.log.warn(`Money alert (${alert.kind}): ${text}`);
  const show = vscode.l10n.t('Show Account');
  const mute = vscode.l10n.t("Don't Warn Again for This Key");
  const choice = await vscode.window.showWarningMessage(messageText(text), show, mute);
  if (choice === show) await vscode.commands.executeCommand('gatewayImages.showAccount');
  else if (choice === mute) {
    await records.setMuted(identity, true);
    services.log.info('Money alerts muted for this key (Gateway Images: Turn Money Alerts Back On for This Key resumes them).');
  }
}

/** Alerts told while muted were not recorded: those in force are told at the check that follows. */
async function resume(services: Services, records: AlertRecords): Promise<void> {
  const identity = services.account.snapshot.identity;
  if (!identity) {
    await vscode.window.showInformationMessage(vscode.l10n.t('Set an API key first: money alerts are kept per key.'));
    return;
  }
  await records.setMuted(identity, false);
  void vscode.window.showInformationMessage(vscode.l10n.t('Money alerts are on again for this key.'));
}
