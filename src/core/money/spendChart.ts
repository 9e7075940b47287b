// The local spend chart of the Account view: rubles per day over the last 30 days from this
// machine's job history, as an inline SVG bar chart in theme colours. Pure: no vscode import.
import { formatAmount, formatRubles, fromKopecks, toKopecks } from './cost';
import * as l10n from '@vscode/l10n';

export interface SpendRecord {
  createdAt: string;
  costRub?: number;
}

export interface DaySpend {
  /** Local calendar day, YYYY-MM-DD. */
  day: string;
  amount: number;
  jobs: number;
}

export interface SpendSeries {
  days: DaySpend[];
  total: number;
  jobs: number;
  /** Jobs whose cost is unknown (an unknown outcome, an old entry): counted, not summed. */
  unknownCost: number;
}

/** YYYY-MM-DD of the local calendar day. */
export const localDay = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/** From the local midnight that starts the chart's first day to the one after today. */
export function spendWindowBounds(now: Date, dayCount = 30): { from: Date; to: Date } {
  return {
    from: new Date(now.getFullYear(), now.getMonth(), now.getDate() - (dayCount - 1)),
    to: new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1),
  };
}

/** The local days of the chart, oldest first, ending today. */
export function spendWindow(now: Date, dayCount = 30): string[] {
  return Array.from({ length: dayCount }, (_, i) => localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - (dayCount - 1 - i))));
}

/** One bucket per local day, oldest first, ending today; records outside the window are left out. */
export function dailySpend(records: readonly SpendRecord[], now: Date, dayCount = 30): SpendSeries {
  const days: DaySpend[] = spendWindow(now, dayCount).map((day) => ({ day, amount: 0, jobs: 0 }));
  const index = new Map(days.map((bucket) => [bucket.day, bucket]));
  const kopecks = new Map<DaySpend, number>();
  let [total, jobs, unknownCost] = [0, 0, 0];
  for (const record of records) {
    const date = new Date(record.createdAt);
    const bucket = Number.isNaN(date.getTime()) ? undefined : index.get(localDay(date));
    if (!bucket) continue;
    bucket.jobs++;
    jobs++;
    if (typeof record.costRub !== 'number') {
      unknownCost++;
      continue;
    }
    const k = toKopecks(record.costRub);
    kopecks.set(bucket, (kopecks.get(bucket) ?? 0) + k);
    total += k;
  }
  for (const [bucket, k] of kopecks) bucket.amount = fromKopecks(k);
  return { days, total: fromKopecks(total), jobs, unknownCost };
}

/** A "nice" axis maximum (1, 2, 2.5, 5 × 10^k) at or above the largest bar. */
export function axisMaximum(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * power >= max - 1e-9)!;
  return step * power;
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Inline SVG; colours are theme variables with fallbacks, so it reads in dark and light themes. */
export function spendChartSvg(series: SpendSeries, locale = 'ru'): string {
  const [width, height, left, right, top, bottom] = [640, 220, 64, 12, 16, 40];
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = axisMaximum(Math.max(0, ...series.days.map((d) => d.amount)));
  const slot = plotW / series.days.length;
  const fg = 'fill:var(--vscode-foreground,#888)';
  const grid = 'stroke:var(--vscode-editorWidget-border,#8884);stroke-width:1';
  const bar = 'fill:var(--vscode-charts-blue,#3794ff)';
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(l10n.t('Local spend per day, last {0} days', series.days.length))}">`,
  );
  for (let i = 0; i <= 4; i++) {
    const value = (max * i) / 4;
    const y = top + plotH - (plotH * i) / 4;
    parts.push(`<line x1="${left}" y1="${y}" x2="${width - right}" y2="${y}" style="${grid}"/>`);
    parts.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="11" style="${fg}">${escapeXml(formatAmount(value, locale))}</text>`);
  }
  series.days.forEach((d, i) => {
    const h = max > 0 ? (plotH * d.amount) / max : 0;
    const x = left + i * slot + slot * 0.15;
    const title = `${d.day}: ${formatRubles(d.amount, locale)}, ${l10n.t('{0} jobs', d.jobs)}`;
    if (h > 0)
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${(top + plotH - h).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${h.toFixed(1)}" style="${bar}"><title>${escapeXml(title)}</title></rect>`,
      );
    if (i % 5 === 0 || i === series.days.length - 1) {
      parts.push(
        `<text x="${(left + i * slot + slot / 2).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle" font-size="11" style="${fg}">${escapeXml(d.day.slice(5))}</text>`,
      );
    }
  });
  parts.push(`<text x="${left + plotW / 2}" y="${height - 4}" text-anchor="middle" font-size="11" style="${fg}">${escapeXml(l10n.t('Day'))}</text>`);
  parts.push(
    `<text x="12" y="${top + plotH / 2}" text-anchor="middle" font-size="11" transform="rotate(-90 12 ${top + plotH / 2})" style="${fg}">${escapeXml(l10n.t('Rubles'))}</text>`,
  );
  parts.push('</svg>');
  return parts.join('');
}

/** The Account view's section: heading, chart, totals, and what the figures count. */
export function spendChartMarkdown(series: SpendSeries, locale = 'ru'): string {
  const lines = [
    `## ${l10n.t('Spend on this machine, last {0} days', series.days.length)}`,
    '',
    spendChartSvg(series, locale),
    '',
    l10n.t('Total {0} over {1} jobs; busiest day {2}.', formatRubles(series.total, locale), series.jobs, busiest(series, locale)),
  ];
  if (series.unknownCost) lines.push('', l10n.t('{0} jobs have no known cost and are not in the total.', series.unknownCost));
  lines.push(
    '',
    `_${l10n.t("This chart counts only the jobs recorded by this machine in this workspace. The figures above it are the gateway's, for the whole key and account.")}_`,
    '',
  );
  return lines.join('\n');
}

function busiest(series: SpendSeries, locale: string): string {
  const top = series.days.reduce<DaySpend | undefined>((best, d) => (d.amount > (best?.amount ?? 0) ? d : best), undefined);
  return top ? `${top.day} (${formatRubles(top.amount, locale)})` : '—';
}
