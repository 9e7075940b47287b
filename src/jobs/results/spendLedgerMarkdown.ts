// The "Where the money went" section of Account and Usage: the gateway's figures beside what this
// workspace recorded, then spend by who made each result (a bar chart, and the same figures as a table
// a screen reader reads) and by model, for today, 7 and 30 days. Theme colours. Names from outside (an
// MCP client's, a model's) are plain text there (markdownText). Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { formatRubles } from '../../core/money/cost';
import { markdownText } from '../../core/common/markdownText';
import { trPlural } from '../../core/common/plural';
import { originKeyLabel } from './resultOrigin';
import { type GatewayComparison, LEDGER_PERIODS, type LedgerRow, type SpendLedger } from './spendLedger';

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
/**
 * Text inside the chart's elements: as HTML, and as Markdown should a renderer read it inline after
 * all (markdownText's references are both; it makes one line, so the HTML block never ends early).
 */
const svgText = (text: string) => markdownText(text);
const cell = (text: string) => text.replace(/[|\\<>]/g, (c) => `\\${c}`);

export function spendLedgerMarkdown(ledger: SpendLedger, locale: string): string {
  const rub = (amount: number) => formatRubles(amount, locale);
  const periods = [l10n.t('Today (UTC)'), l10n.t('7 days'), l10n.t('30 days')];
  const figures = (row: LedgerRow) => LEDGER_PERIODS.map((p) => `${rub(row.amount[p])} (${row.results[p]})`);
  const table = (head: string, rows: LedgerRow[], label: (key: string) => string) => [
    `| ${cell(head)} | ${periods.map(cell).join(' | ')} |`,
    `|---|${periods.map(() => '---:').join('|')}|`,
    ...rows.map((row) => `| ${markdownText(label(row.key))} | ${figures(row).map(cell).join(' | ')} |`),
    `| **${cell(l10n.t('Total'))}** | ${figures(ledger.total)
      .map((f) => `**${cell(f)}**`)
      .join(' | ')} |`,
  ];
  const lines = [`## ${l10n.t('Where the money went')}`, ''];
  if (ledger.gateway) lines.push(...gatewayTable(ledger.gateway, rub), '');
  else lines.push(l10n.t("The gateway's figures for the key are not read yet: refresh the account to compare them with this workspace."), '');
  if (ledger.unkeyedResults)
    lines.push(
      trPlural(
        ledger.unkeyedResults,
        {
          one: '{0} result of the last 30 days does not say which key paid for it (recorded before keys were noted, or a failed request): it is not in "Recorded by this workspace with this key".',
          other:
            '{0} results of the last 30 days do not say which key paid for them (recorded before keys were noted, or failed requests): they are not in "Recorded by this workspace with this key".',
        },
        ledger.unkeyedResults,
      ),
      '',
    );
  const unknown = ledger.total.unknownCost.month;
  if (unknown)
    lines.push(
      trPlural(
        unknown,
        {
          one: '{0} result of the last 30 days has no known cost (an unknown outcome): it is not in the sums, and may be part of the difference.',
          other: '{0} results of the last 30 days have no known cost (an unknown outcome): they are not in the sums, and may be part of the difference.',
        },
        unknown,
      ),
      '',
    );
  lines.push(`### ${l10n.t('By who made it')}`, '');
  if (!ledger.byOrigin.length) lines.push(l10n.t('No results in the last 30 days.'), '');
  else lines.push(originChart(ledger, locale), '', ...table(l10n.t('Who'), ledger.byOrigin, originKeyLabel), '');
  if (ledger.byModel.length) lines.push(`### ${l10n.t('By model')}`, '', ...table(l10n.t('Model'), ledger.byModel, (key) => key), '');
  lines.push(
    `_${l10n.t('Each cell: rubles (results). The windows end when the gateway\'s figures were read ({0}): today is the UTC day, 7 and 30 days are 24-hour days before it. Export the whole journal with "Gateway Images: Export Results as CSV…".', new Date(ledger.end).toLocaleString(locale))}_`,
    '',
  );
  return lines.join('\n');
}

function gatewayTable(gateway: { today: GatewayComparison; month: GatewayComparison }, rub: (amount: number) => string): string[] {
  const { today, month } = gateway;
  const elsewhere = (c: GatewayComparison) => (c.elsewhere >= 0 ? rub(c.elsewhere) : l10n.t('{0} (this workspace recorded more)', rub(c.elsewhere)));
  return [
    `| | ${cell(l10n.t('Today (UTC)'))} | ${cell(l10n.t('30 days'))} |`,
    '|---|---:|---:|',
    `| ${cell(l10n.t("The gateway's figure for the key"))} | ${cell(rub(today.gateway))} | ${cell(rub(month.gateway))} |`,
    `| ${cell(l10n.t('Recorded by this workspace with this key'))} | ${cell(rub(today.recorded))} | ${cell(rub(month.recorded))} |`,
    `| ${cell(l10n.t('Spent elsewhere: not recorded by this workspace (other machines, other tools, other workspaces)'))} | ${cell(elsewhere(today))} | ${cell(elsewhere(month))} |`,
  ];
}

/** Horizontal bars of the 30-day spend by who made it; the table below holds the same figures. */
function originChart(ledger: SpendLedger, locale: string): string {
  const rows = ledger.byOrigin;
  const [width, left, right, bar, gap, top] = [640, 200, 110, 18, 8, 8];
  const height = top * 2 + rows.length * (bar + gap);
  const max = Math.max(0, ...rows.map((r) => r.amount.month));
  const fg = 'fill:var(--vscode-foreground,#888)';
  const fill = 'fill:var(--vscode-charts-blue,#3794ff)';
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(l10n.t('Spend of the last 30 days by who made it; the table below has the same figures'))}">`,
  ];
  rows.forEach((row, i) => {
    const y = top + i * (bar + gap);
    const w = max > 0 ? ((width - left - right) * row.amount.month) / max : 0;
    const label = originKeyLabel(row.key);
    const amount = formatRubles(row.amount.month, locale);
    parts.push(
      `<text x="${left - 8}" y="${y + bar - 4}" text-anchor="end" font-size="12" style="${fg}">${svgText(label.length > 30 ? `${label.slice(0, 29)}…` : label)}</text>`,
    );
    if (w > 0)
      parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${bar}" style="${fill}"><title>${svgText(`${label}: ${amount}`)}</title></rect>`);
    parts.push(`<text x="${(left + w + 6).toFixed(1)}" y="${y + bar - 4}" font-size="12" style="${fg}">${svgText(amount)}</text>`);
  });
  parts.push('</svg>');
  // In a block of HTML of its own (a <div> line starts one; a blank line ends it), not a paragraph:
  // no Markdown renderer reads the text between its tags as Markdown, nor links what looks like a URL.
  return ['<div>', parts.join(''), '</div>'].join('\n');
}
