// The status bar item: balance and the key's remaining budget at all times, a rich tooltip, and
// a click menu. It renders the account model; it never fetches by itself.
import * as vscode from 'vscode';
import { formatAmount, formatRubles } from '../core/money/cost';
import { readSettings } from '../host/settings';
import { type AccountModel, type AccountSnapshot, budgetLow, expiresWithin } from './accountModel';
import { budgetRunsOutBeforeReset, runwayLines } from './runway';
import { trPlural } from '../core/common/plural';
import { markdownText } from '../core/common/markdownText';

export const STATUS_ITEM_ID = 'gateway-images.status';
const TOOLTIP_COMMANDS = ['gatewayImages.refreshAccount', 'gatewayImages.openStudio', 'gatewayImages.setApiKey', 'gatewayImages.showAccount'];

export class AccountStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    account: AccountModel,
    private readonly locale: string,
  ) {
    this.item = vscode.window.createStatusBarItem(STATUS_ITEM_ID, vscode.StatusBarAlignment.Right, 100);
    this.item.name = vscode.l10n.t('Gateway Images Balance');
    this.subscriptions.push(
      account.onDidChange((snapshot) => this.render(snapshot)),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('gatewayImages.lowBalanceWarning') && this.render(account.snapshot)),
    );
    this.render(account.snapshot);
    this.item.show();
  }

  render(snapshot: AccountSnapshot): void {
    const item = this.item;
    item.backgroundColor = undefined;
    item.command = 'gatewayImages.statusMenu';
    switch (snapshot.status) {
      case 'no-url':
        item.text = `$(gear) ${vscode.l10n.t('Gateway: set address')}`;
        item.tooltip = vscode.l10n.t('Set the gateway address (gatewayImages.baseUrl) to start.');
        item.command = { title: vscode.l10n.t('Open Settings'), command: 'workbench.action.openSettings', arguments: ['gatewayImages.baseUrl'] };
        return;
      case 'no-key':
        item.text = `$(key) ${vscode.l10n.t('Set API key')}`;
        item.tooltip = vscode.l10n.t('Gateway Images has no API key yet. Click to set it.');
        item.command = 'gatewayImages.setApiKey';
        return;
      case 'invalid-key':
      case 'expired-key':
        item.text = `$(error) ${snapshot.status === 'expired-key' ? vscode.l10n.t('API key expired') : vscode.l10n.t('API key rejected')}`;
        item.tooltip = snapshot.error?.message ?? '';
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        item.command = 'gatewayImages.setApiKey';
        return;
      case 'loading':
        if (snapshot.balance === undefined) {
          item.text = `$(sync~spin) ₽ …`;
          // After a switch the old key's figures are gone: say why the balance is being read again.
          item.tooltip = snapshot.switching ? vscode.l10n.t('The API key or gateway changed: reading the new balance…') : vscode.l10n.t('Reading the balance…');
          return;
        }
        break;
      case 'offline':
        item.text = `$(cloud-offline) ${snapshot.balance === undefined ? vscode.l10n.t('Gateway offline') : this.figures(snapshot)}`;
        item.tooltip = this.tooltip(snapshot);
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        return;
    }
    item.text = this.figures(snapshot);
    item.tooltip = this.tooltip(snapshot);
    if (this.needsWarning(snapshot)) item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  }

  private figures(snapshot: AccountSnapshot): string {
    const balance = snapshot.balance === undefined ? '…' : formatAmount(snapshot.balance, this.locale);
    const budget = snapshot.budget === undefined ? '' : ` · ${vscode.l10n.t('budget')} ${formatAmount(snapshot.budget, this.locale)}`;
    return `₽ ${balance}${budget}`;
  }

  private needsWarning(snapshot: AccountSnapshot): boolean {
    const low = snapshot.balance !== undefined && snapshot.balance < readSettings().lowBalanceWarning;
    return low || budgetLow(snapshot) || expiresWithin(snapshot, 3) || budgetRunsOutBeforeReset(snapshot);
  }

  private tooltip(snapshot: AccountSnapshot): vscode.MarkdownString {
    const rub = (value?: number | null) => (typeof value === 'number' ? formatRubles(value, this.locale) : '—');
    const date = (iso?: string) => (iso ? new Date(iso).toLocaleString(this.locale) : '—');
    const md = new vscode.MarkdownString(undefined, true);
    md.isTrusted = { enabledCommands: TOOLTIP_COMMANDS };
    md.supportThemeIcons = true;
    const lines: string[] = [`**${vscode.l10n.t('Gateway Images')}**`, ''];
    if (snapshot.user) lines.push(`$(account) ${escape(snapshot.user.email)}`, '');
    lines.push(`${vscode.l10n.t('Balance')}: **${rub(snapshot.balance)}**`);
    const key = snapshot.key;
    if (key) {
      lines.push('', `$(key) ${vscode.l10n.t('Key')}: ${escape(key.name ?? vscode.l10n.t('(unnamed)'))}`);
      if (key.budget) {
        lines.push(`${vscode.l10n.t('Budget')}: ${rub(snapshot.budget ?? key.budget.remaining)} / ${rub(key.budget.initial)}`);
        if (key.budget.reset_interval)
          lines.push(`${vscode.l10n.t('Resets')}: ${escape(key.budget.reset_interval)}, ${vscode.l10n.t('next')} ${date(key.budget.reset_at)}`);
      }
      if (key.expires_at) lines.push(`${vscode.l10n.t('Expires')}: ${date(key.expires_at)}`);
    }
    const stats = snapshot.stats;
    if (stats) {
      lines.push(
        '',
        `${vscode.l10n.t('Today')}: ${rub(stats.today_spend)} · ${requests(stats.today_requests)}`,
        `${vscode.l10n.t('30 days')}: ${rub(stats.month_spend)} · ${requests(stats.month_requests)}`,
        `${vscode.l10n.t('Daily average')}: ${rub(stats.avg_daily_spend)}`,
      );
      if (stats.top_model_by_spend)
        lines.push(`${vscode.l10n.t('Top model by spend')}: ${escape(stats.top_model_by_spend)} (${rub(stats.top_model_by_spend_value)})`);
      if (stats.top_model_by_requests)
        lines.push(`${vscode.l10n.t('Top model by requests')}: ${escape(stats.top_model_by_requests)} (${stats.top_model_by_requests_value ?? 0})`);
    }
    const runway = runwayLines(snapshot, this.locale);
    if (runway.length) lines.push('', ...runway.map((line, i) => `${i === 0 ? '$(watch) ' : ''}${escape(line)}`));
    if (snapshot.status === 'offline') lines.push('', `$(cloud-offline) ${vscode.l10n.t('Offline')}: ${escape(snapshot.error?.message ?? '')}`);
    // A refresh that read only some parts: the others show their last figures, and which failed is said.
    else if (snapshot.failedParts?.length)
      lines.push('', `$(warning) ${vscode.l10n.t('Not read this time: {0} ({1})', snapshot.failedParts.join(', '), escape(snapshot.error?.message ?? ''))}`);
    if (snapshot.updatedAt) lines.push('', `_${vscode.l10n.t('Updated {0}', new Date(snapshot.updatedAt).toLocaleTimeString(this.locale))}_`);
    lines.push(
      '',
      `[$(refresh) ${vscode.l10n.t('Refresh')}](command:gatewayImages.refreshAccount) · [$(graph) ${vscode.l10n.t('Account')}](command:gatewayImages.showAccount) · [$(paintcan) ${vscode.l10n.t('Open Studio')}](command:gatewayImages.openStudio) · [$(key) ${vscode.l10n.t('Set Key')}](command:gatewayImages.setApiKey)`,
    );
    md.appendMarkdown(lines.join('  \n'));
    return md;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

/** The window's focus as the refresh schedule sees it: VS Code's window, or a test's. */
export interface WindowFocus {
  readonly focused: boolean;
  readonly onDidChange: vscode.Event<vscode.WindowState>;
}

const vscodeWindowFocus = (): WindowFocus => ({
  get focused() {
    return vscode.window.state.focused;
  },
  onDidChange: vscode.window.onDidChangeWindowState,
});

/** Keeps the account fresh: at start, when the key or address changes, and on a timer while focused. */
export function scheduleAccountRefresh(
  account: AccountModel,
  keysChanged: vscode.Event<void>,
  windowFocus: WindowFocus = vscodeWindowFocus(),
): vscode.Disposable {
  let timer: ReturnType<typeof setInterval> | undefined;
  let focused = windowFocus.focused;
  const restartTimer = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
    const minutes = readSettings().balanceRefreshMinutes;
    if (minutes > 0 && focused) timer = setInterval(() => void account.refresh(), minutes * 60_000);
  };
  // First read after activation has returned: activate() itself makes no network call.
  const first = setTimeout(() => void account.refresh(), 0);
  restartTimer();
  const subscriptions = [
    // Another key or gateway: the old figures go at once (also for a key changed in another window).
    keysChanged(() => void account.switchIdentity().catch(() => undefined)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('gatewayImages.baseUrl')) void account.switchIdentity().catch(() => undefined);
      if (e.affectsConfiguration('gatewayImages.balanceRefreshMinutes')) restartTimer();
    }),
    windowFocus.onDidChange((state) => {
      // The event also fires when the window's activity (`active`) changes, as after a while without
      // input: only a change of focus starts or stops the timer.
      if (state.focused === focused) return;
      focused = state.focused;
      restartTimer();
      // Coming back after a while: catch up at once.
      const minutes = readSettings().balanceRefreshMinutes;
      const stale = !account.snapshot.updatedAt || Date.now() - account.snapshot.updatedAt > minutes * 60_000;
      if (focused && stale && minutes > 0) void account.refresh();
    }),
  ];
  return new vscode.Disposable(() => {
    clearTimeout(first);
    if (timer) clearInterval(timer);
    for (const s of subscriptions) s.dispose();
  });
}

/** "1 request", "5 requests". */
function requests(count: number): string {
  return trPlural(count, { one: '{0} request', other: '{0} requests' }, count);
}

/** Text from the gateway (an e-mail address, a key's or a model's name, a message) as plain text in the tooltip. */
function escape(text: string): string {
  return markdownText(text, { themeIcons: true });
}
