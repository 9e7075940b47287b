// "Where the money went": the journal's spend for today, 7 and 30 days, by who made each result and
// by model, beside the gateway's figures of the key for the same windows. The spec does not say which
// windows `today_spend` and `month_spend` cover; we take the UTC day up to the moment the figures were
// read, and the 30 × 24 hours before it (docs/money.md, "Where the money went"). The difference is spend the
// journal of this workspace did not record: other machines, tools, workspaces. What it recorded with the
// key is every entry paid with it, results and paid failures alike (both carry the key's identity).
// Pure: no vscode import.
import { fromKopecks, toKopecks } from '../../core/money/cost';
import type { StatsSummary } from '../../core/gateway/types';
import { type OriginKey, originKey, type ResultOrigin } from './resultOrigin';

export interface LedgerRecord {
  createdAt: string;
  model: string;
  costRub?: number;
  origin?: ResultOrigin;
  /** The gateway and key it was paid with (absent: not known, left out of the comparison with the key's figures). */
  identity?: string;
}

export const LEDGER_PERIODS = ['today', 'week', 'month'] as const;
export type LedgerPeriod = (typeof LEDGER_PERIODS)[number];

const DAY_MS = 86_400_000;

/** The windows, each ending at `end`: the UTC day so far, 7 × 24 h and 30 × 24 h. */
export function ledgerWindows(end: Date): Record<LedgerPeriod, { from: Date; to: Date }> {
  const dayStart = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate()));
  return {
    today: { from: dayStart, to: end },
    week: { from: new Date(end.getTime() - 7 * DAY_MS), to: end },
    month: { from: new Date(end.getTime() - 30 * DAY_MS), to: end },
  };
}

/** Spend of one group in each period: rubles (known costs only), results, and results of unknown cost. */
export interface LedgerRow {
  key: string;
  amount: Record<LedgerPeriod, number>;
  results: Record<LedgerPeriod, number>;
  unknownCost: Record<LedgerPeriod, number>;
}

export interface GatewayComparison {
  /** The gateway's figure for the key, rubles. */
  gateway: number;
  /** What the journal recorded in the same window. */
  recorded: number;
  /** gateway − recorded, to the kopeck: spend with this key that this workspace did not record (negative: it recorded more, see docs/money.md). */
  elsewhere: number;
}

export interface SpendLedger {
  /** When the windows end (the gateway's figures were read then; now when there are none). */
  end: string;
  total: LedgerRow;
  byOrigin: LedgerRow[];
  byModel: LedgerRow[];
  /** Only the periods the gateway reports: today and 30 days. */
  gateway?: { today: GatewayComparison; month: GatewayComparison };
  /** Entries of the last 30 days whose key is not known (written before entries said it): not in `gateway.recorded`. */
  unkeyedResults?: number;
}

const zeros = (): Record<LedgerPeriod, number> => ({ today: 0, week: 0, month: 0 });
const newRow = (key: string): LedgerRow => ({ key, amount: zeros(), results: zeros(), unknownCost: zeros() });

/**
 * The ledger of `records` (the journal's results of the last 30 days or more; any order), with the
 * windows ending at `statsAt` when the gateway's figures are given, else at `now`. Rows are sorted by
 * 30-day spend, largest first. Sums are made in kopecks.
 */
export function spendLedger(records: readonly LedgerRecord[], now: Date, stats?: { summary: StatsSummary; at: Date; identity?: string }): SpendLedger {
  const end = stats?.at ?? now;
  const windows = ledgerWindows(end);
  const bounds = LEDGER_PERIODS.map((p) => [p, windows[p].from.getTime(), windows[p].to.getTime()] as const);
  const total = newRow('total');
  /** What this key spent of it (results paid with another key or gateway are not in the key's figures). */
  const ofKey = newRow('key');
  /** Entries whose key is not known (written before entries said which key paid): not compared. */
  const unkeyed = newRow('unkeyed');
  const byOrigin = new Map<OriginKey, LedgerRow>();
  const byModel = new Map<string, LedgerRow>();
  const rowIn = (map: Map<string, LedgerRow>, key: string) => map.get(key) ?? map.set(key, newRow(key)).get(key)!;
  for (const record of records) {
    const at = Date.parse(record.createdAt);
    if (Number.isNaN(at)) continue;
    const rows = [total, rowIn(byOrigin, originKey(record.origin)), rowIn(byModel, record.model)];
    if (!stats?.identity || record.identity === stats.identity) rows.push(ofKey);
    else if (!record.identity) rows.push(unkeyed);
    for (const [period, from, to] of bounds) {
      if (at < from || at > to) continue;
      for (const row of rows) {
        row.results[period]++;
        if (typeof record.costRub === 'number') row.amount[period] += toKopecks(record.costRub);
        else row.unknownCost[period]++;
      }
    }
  }
  const inRubles = (row: LedgerRow): LedgerRow => ({
    ...row,
    amount: { today: fromKopecks(row.amount.today), week: fromKopecks(row.amount.week), month: fromKopecks(row.amount.month) },
  });
  const sorted = (map: Map<string, LedgerRow>) =>
    [...map.values()]
      .filter((row) => row.results.month > 0)
      .sort((a, b) => b.amount.month - a.amount.month || a.key.localeCompare(b.key))
      .map(inRubles);
  const ledger: SpendLedger = { end: end.toISOString(), total: inRubles(total), byOrigin: sorted(byOrigin), byModel: sorted(byModel) };
  if (stats) {
    const compare = (gateway: number, recordedKopecks: number): GatewayComparison => ({
      gateway,
      recorded: fromKopecks(recordedKopecks),
      elsewhere: fromKopecks(toKopecks(gateway) - recordedKopecks),
    });
    if (unkeyed.results.month) ledger.unkeyedResults = unkeyed.results.month;
    ledger.gateway = { today: compare(stats.summary.today_spend, ofKey.amount.today), month: compare(stats.summary.month_spend, ofKey.amount.month) };
  }
  return ledger;
}
