// Alerts before the money runs out, as notifications: the figures are judged after each account
// refresh (settled for a second) by moneyAlertCheck.ts, loaded on the first check. An agent's paid
// result in the journal refreshes the account soon: agents' spend counts too.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { Services } from '../../services';
import type * as MoneyAlertCheckModule from './moneyAlertCheck';

let checkCode: typeof MoneyAlertCheckModule | undefined;
/** Loads dist/moneyAlertCheck.js on the first check; esbuild leaves this require alone. */
function moneyAlertCheck(): typeof MoneyAlertCheckModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  checkCode ??= require('./moneyAlertCheck.js') as typeof MoneyAlertCheckModule;
  return checkCode;
}

/** Figures settle this long after a change before they are judged (a refresh reads four parts; a usage comes before its reconcile). */
const CHECK_DELAY_MS = 1_000;

export function registerMoneyAlerts(services: Services): vscode.Disposable {
  // This window's claim when it tells (the shared state's last claim wins: account/alertRecords.ts).
  const windowId = randomUUID();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let checking = Promise.resolve();
  const schedule = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      checking = checking
        .then(() => moneyAlertCheck().checkMoneyAlerts(services, windowId))
        .catch((error: unknown) => services.log.warn(`Money alerts: ${String(error)}`));
    }, CHECK_DELAY_MS);
  };
  const subscriptions = [
    services.account.onDidChange((snapshot) => snapshot.status === 'ready' && !snapshot.switching && schedule()),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('gatewayImages.alerts') && schedule()),
    // The MCP server writes its paid results into this window's journal: the key's figures changed.
    services.history.onDidChange((change) => change.entry?.origin?.kind === 'mcp' && change.entry.costRub !== undefined && services.account.reconcileSoon()),
    vscode.commands.registerCommand('gatewayImages.resumeMoneyAlerts', () => moneyAlertCheck().resumeMoneyAlerts(services, windowId).then(schedule)),
  ];
  return new vscode.Disposable(() => {
    if (timer) clearTimeout(timer);
    for (const s of subscriptions) s.dispose();
  });
}
