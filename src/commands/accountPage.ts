// The Account and Usage page (dist/accountPage.js, loaded by account.ts when the page is first
// shown): the account's and key's figures as a table, then the spend chart of this workspace.
import * as vscode from 'vscode';
import { type AccountSnapshot } from '../account/accountModel';
import { runwayLines } from '../account/runway';
import { formatRubles } from '../core/money/cost';
import { dailySpend, type SpendRecord, spendChartMarkdown, spendWindowBounds } from '../core/money/spendChart';
import { type LedgerRecord, spendLedger } from '../jobs/results/spendLedger';
import { spendLedgerMarkdown } from '../jobs/results/spendLedgerMarkdown';

export { spendWindowBounds } from '../core/money/spendChart';
export { exportResultsCsv } from './resultsCsvExport';

/** The journal's results the page needs: the chart's local days and the ledger's 30 × 24 hours before the gateway's figures were read. */
export function accountWindow(s: AccountSnapshot, now: Date): { from: Date; to: Date } {
  const chart = spendWindowBounds(now);
  const ledgerFrom = new Date((s.statsAt ?? now.getTime()) - 30 * 86_400_000);
  return { from: ledgerFrom < chart.from ? ledgerFrom : chart.from, to: chart.to > now ? chart.to : now };
}

export function renderAccount(s: AccountSnapshot, locale: string, history: readonly (SpendRecord & LedgerRecord)[] = [], now = new Date()): string {
  const rub = (v?: number | null) => (typeof v === 'number' ? formatRubles(v, locale) : '—');
  const date = (iso?: string) => (iso ? new Date(iso).toLocaleString(locale) : '—');
  const cell = (text: string) => text.replace(/[|\\<>]/g, (c) => `\\${c}`);
  const rows: [string, string][] = [
    [vscode.l10n.t('Account'), s.user ? `${s.user.email} (id ${s.user.id})` : '—'],
    [vscode.l10n.t('Balance'), rub(s.balance)],
    [vscode.l10n.t('Key'), s.key?.name ?? vscode.l10n.t('(unnamed)')],
  ];
  if (s.key?.budget) {
    rows.push([vscode.l10n.t('Budget remaining / initial'), `${rub(s.budget ?? s.key.budget.remaining)} / ${rub(s.key.budget.initial)}`]);
    if (s.key.budget.reset_interval)
      rows.push([vscode.l10n.t('Budget resets'), `${s.key.budget.reset_interval}, ${vscode.l10n.t('next')} ${date(s.key.budget.reset_at)}`]);
  }
  if (s.key?.expires_at) rows.push([vscode.l10n.t('Key expires'), date(s.key.expires_at)]);
  const st = s.stats;
  if (st) {
    rows.push(
      [vscode.l10n.t('Today'), `${rub(st.today_spend)}, ${vscode.l10n.t('{0} requests', st.today_requests)}`],
      [vscode.l10n.t('Last 30 days'), `${rub(st.month_spend)}, ${vscode.l10n.t('{0} requests', st.month_requests)}`],
      [vscode.l10n.t('Daily average'), rub(st.avg_daily_spend)],
      [vscode.l10n.t('Top model by spend'), st.top_model_by_spend ? `${st.top_model_by_spend} (${rub(st.top_model_by_spend_value)})` : '—'],
      [vscode.l10n.t('Top model by requests'), st.top_model_by_requests ? `${st.top_model_by_requests} (${st.top_model_by_requests_value ?? 0})` : '—'],
    );
  }
  const runway = runwayLines(s, locale);
  if (runway.length) rows.push([vscode.l10n.t('Runway at the 30-day pace'), runway.join('; ')]);
  const updated = s.updatedAt ? vscode.l10n.t('Updated {0}.', new Date(s.updatedAt).toLocaleString(locale)) : '';
  const table = [
    `# ${vscode.l10n.t('Gateway Images: Account and Usage')}`,
    '',
    `| | |`,
    `|---|---|`,
    ...rows.map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`),
    '',
    updated,
    '',
  ];
  const stats = s.stats && s.statsAt !== undefined ? { summary: s.stats, at: new Date(s.statsAt), ...(s.identity ? { identity: s.identity } : {}) } : undefined;
  return [...table, spendLedgerMarkdown(spendLedger(history, now, stats), locale), spendChartMarkdown(dailySpend(history, now), locale)].join('\n');
}
