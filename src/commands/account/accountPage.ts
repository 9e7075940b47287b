// The Account and Usage page (dist/accountPage.js, loaded by account.ts when the page is first
// shown): the account's and key's figures as a table, then the spend chart of this workspace.
import * as vscode from 'vscode';
import { type AccountSnapshot } from '../../account/accountModel';
import { runwayLines } from '../../account/runway';
import { markdownText } from '../../core/common/markdownText';
import { formatRubles } from '../../core/money/cost';
import { dailySpend, type SpendRecord, spendChartMarkdown, spendWindowBounds } from '../../core/money/spendChart';
import { type LedgerRecord, spendLedger } from '../../jobs/results/spendLedger';
import { spendLedgerMarkdown } from '../../jobs/results/spendLedgerMarkdown';

export { spendWindowBounds } from '../../core/money/spendChart';
export { exportResultsCsv } from '../results/resultsCsvExport';

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
  // The gateway's words (an e-mail address, a key's or a model's name): plain text, no link (bare URLs too).
  const outside = (text: string) => markdownText(text);
  /** A label and its value, both Markdown: this extension's words through `cell`, the gateway's through `outside`. */
  const rows: [string, string][] = [
    [vscode.l10n.t('Account'), s.user ? `${outside(s.user.email)} (id ${outside(String(s.user.id))})` : '—'],
    [vscode.l10n.t('Balance'), cell(rub(s.balance))],
    [vscode.l10n.t('Key'), s.key?.name ? outside(s.key.name) : cell(vscode.l10n.t('(unnamed)'))],
  ];
  if (s.key?.budget) {
    rows.push([vscode.l10n.t('Budget remaining / initial'), cell(`${rub(s.budget ?? s.key.budget.remaining)} / ${rub(s.key.budget.initial)}`)]);
    if (s.key.budget.reset_interval)
      rows.push([
        vscode.l10n.t('Budget resets'),
        `${outside(s.key.budget.reset_interval)}, ${cell(`${vscode.l10n.t('next')} ${date(s.key.budget.reset_at)}`)}`,
      ]);
  }
  if (s.key?.expires_at) rows.push([vscode.l10n.t('Key expires'), cell(date(s.key.expires_at))]);
  const st = s.stats;
  if (st) {
    rows.push(
      [vscode.l10n.t('Today'), cell(`${rub(st.today_spend)}, ${vscode.l10n.t('{0} requests', st.today_requests)}`)],
      [vscode.l10n.t('Last 30 days'), cell(`${rub(st.month_spend)}, ${vscode.l10n.t('{0} requests', st.month_requests)}`)],
      [vscode.l10n.t('Daily average'), cell(rub(st.avg_daily_spend))],
      [vscode.l10n.t('Top model by spend'), st.top_model_by_spend ? `${outside(st.top_model_by_spend)} ${cell(`(${rub(st.top_model_by_spend_value)})`)}` : '—'],
      [
        vscode.l10n.t('Top model by requests'),
        st.top_model_by_requests ? `${outside(st.top_model_by_requests)} ${cell(`(${st.top_model_by_requests_value ?? 0})`)}` : '—',
      ],
    );
  }
  const runway = runwayLines(s, locale);
  if (runway.length) rows.push([vscode.l10n.t('Runway at the 30-day pace'), cell(runway.join('; '))]);
  const updated = s.updatedAt ? vscode.l10n.t('Updated {0}.', new Date(s.updatedAt).toLocaleString(locale)) : '';
  const table = [
    `# ${vscode.l10n.t('Gateway Images: Account and Usage')}`,
    '',
    `| | |`,
    `|---|---|`,
    ...rows.map(([k, v]) => `| ${cell(k)} | ${v} |`),
    '',
    updated,
    '',
  ];
  const stats = s.stats && s.statsAt !== undefined ? { summary: s.stats, at: new Date(s.statsAt), ...(s.identity ? { identity: s.identity } : {}) } : undefined;
  return [...table, spendLedgerMarkdown(spendLedger(history, now, stats), locale), spendChartMarkdown(dailySpend(history, now), locale)].join('\n');
}
