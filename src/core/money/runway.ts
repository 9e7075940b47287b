// When the money runs out: days left at the 30-day pace (avg_daily_spend) for the balance and for
// the key's budget, and whether a budget with a reset runs out before the reset. Pure: no vscode import.
import { formatRubles } from './cost';
import * as l10n from '@vscode/l10n';
import { type KeyRecord, type StatsSummary } from '../gateway/types';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RunwayInput {
  balance?: number;
  /** Remaining key budget (balance record, else key record). */
  budget?: number;
  key?: Pick<KeyRecord, 'budget'>;
  stats?: Pick<StatsSummary, 'avg_daily_spend'>;
  now: Date;
}

export interface Projection {
  /** Days until the amount is spent at the pace; 0 when it is already spent. */
  daysLeft: number;
  runsOutAt: Date;
}

export interface BudgetProjection extends Projection {
  resetAt?: Date;
  /** True when the budget is spent before its next reset; undefined without a known reset. */
  runsOutBeforeReset?: boolean;
}

export interface Runway {
  /** Rubles per day over the last 30 days. */
  pace: number;
  balance?: Projection;
  budget?: BudgetProjection;
}

/** Undefined when there is no pace to project from (no stats, or nothing spent in 30 days). */
export function projectRunway(input: RunwayInput): Runway | undefined {
  const pace = input.stats?.avg_daily_spend;
  if (typeof pace !== 'number' || !Number.isFinite(pace) || pace <= 0) return undefined;
  const project = (amount: number): Projection => {
    const daysLeft = Math.max(0, amount) / pace;
    return { daysLeft, runsOutAt: new Date(input.now.getTime() + daysLeft * DAY_MS) };
  };
  const runway: Runway = { pace };
  if (typeof input.balance === 'number') runway.balance = project(input.balance);
  const remaining = input.budget ?? input.key?.budget?.remaining;
  if (typeof remaining === 'number') {
    const budget: BudgetProjection = project(remaining);
    const resetAt = resetDate(input.key?.budget, input.now);
    if (resetAt) {
      budget.resetAt = resetAt;
      budget.runsOutBeforeReset = budget.runsOutAt.getTime() < resetAt.getTime();
    }
    runway.budget = budget;
  }
  return runway;
}

function resetDate(budget: KeyRecord['budget'], now: Date): Date | undefined {
  if (!budget) return undefined;
  if (typeof budget.reset_at === 'string') {
    const date = new Date(budget.reset_at);
    if (!Number.isNaN(date.getTime())) return date;
  }
  if (typeof budget.reset_in_seconds === 'number' && Number.isFinite(budget.reset_in_seconds)) {
    return new Date(now.getTime() + budget.reset_in_seconds * 1000);
  }
  return undefined;
}

/** Days for people: one decimal below 10, whole days above. */
export function formatDays(days: number, locale = 'ru'): string {
  const digits = days < 10 ? 1 : 0;
  return new Intl.NumberFormat(locale, { maximumFractionDigits: digits, minimumFractionDigits: 0 }).format(days);
}

/** Lines for the tooltip and the account view (empty without a pace). */
export function describeRunway(runway: Runway | undefined, locale = 'ru'): string[] {
  if (!runway) return [];
  const date = (d: Date) => d.toLocaleDateString(locale);
  const pace = formatRubles(runway.pace, locale);
  const lines: string[] = [];
  if (runway.balance) {
    lines.push(l10n.t('Balance lasts ≈ {0} days at {1}/day (until {2})', formatDays(runway.balance.daysLeft, locale), pace, date(runway.balance.runsOutAt)));
  }
  const budget = runway.budget;
  if (budget) {
    lines.push(l10n.t('Budget lasts ≈ {0} days at {1}/day (until {2})', formatDays(budget.daysLeft, locale), pace, date(budget.runsOutAt)));
    if (budget.runsOutBeforeReset && budget.resetAt) lines.push(l10n.t('The budget runs out before its reset on {0}', date(budget.resetAt)));
    else if (budget.runsOutBeforeReset === false && budget.resetAt) lines.push(l10n.t('The budget lasts until its reset on {0}', date(budget.resetAt)));
  }
  return lines;
}
