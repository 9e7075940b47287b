// The money alerts' check, loaded on the first check (dist/moneyAlertCheck.js, not at activation):
// the account's figures are judged (core/money/alerts.ts) and a crossing not told yet is told once, in
// one window of the profile (account/alertRecords.ts), with Show Account and "Don't warn again for this key".
import * as vscode from 'vscode';
import { alertFactsOf } from '../../account/alertFacts';
import { AlertRecords } from '../../account/alertRecords';
import { messageText } from '../../core/common/markdownText';
import { describeAlert, type MoneyAlert, weekSpendOf, weekWindow } from '../../core/money/alerts';
import { readAlertSettings } from '../../host/settings';
import type { Services } from '../../services';

/** Judges the account's figures now and tells what was not told yet. `windowId`: this window's claim. */
export async function checkMoneyAlerts(services: Services, windowId: string): Promise<void> {
  const records = new AlertRecords(services.context.globalState, windowId);
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
export async function resumeMoneyAlerts(services: Services, windowId: string): Promise<void> {
  const records = new AlertRecords(services.context.globalState, windowId);
  const identity = services.account.snapshot.identity;
  if (!identity) {
    await vscode.window.showInformationMessage(vscode.l10n.t('Set an API key first: money alerts are kept per key.'));
    return;
  }
  await records.setMuted(identity, false);
  void vscode.window.showInformationMessage(vscode.l10n.t('Money alerts are on again for this key.'));
}
