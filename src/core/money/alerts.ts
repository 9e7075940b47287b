// Alerts before the money runs out (issue 42): the key's budget crossing a share used, the
// balance's runway at the recent pace under some days, and today's spend reaching the user's daily
// amount. Each crossing is told once: the "told" record says what was told, and it resets only
// with what undoes the crossing (a new budget period or a budget that grew, a top-up, a new day).
// The extension's notifications and the MCP server's get_account use the same rules. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { formatRubles, fromKopecks, toKopecks } from './cost';
import { formatDays } from './runway';

export type AlertKind = 'budget' | 'runway' | 'dailySpend';

export interface AlertSettings {
  /** Percentages of the key's budget used that are told (empty: off). */
  budgetThresholds: readonly number[];
  /** Told when the balance lasts fewer days than this at the pace (0: off). */
  runwayDays: number;
  /** Told when today's spend reaches this many rubles (0: off). */
  dailySpend: number;
}

export const DEFAULT_ALERT_SETTINGS: AlertSettings = { budgetThresholds: [50, 75, 90], runwayDays: 3, dailySpend: 0 };

/** The account's figures the alerts are judged on (each may be unknown). */
export interface AlertFacts {
  now: Date;
  balance?: number;
  /** The key's budget: remaining and initial rubles, and the next reset as the gateway gives it. */
  budget?: { remaining: number; initial: number; resetAt?: string };
  /** The gateway's average daily spend of the key over 30 days. */
  avgDailySpend?: number;
  /** Rubles spent in the last 7 × 24 hours, as far as known here (the results journal, agents' results included). */
  weekSpend?: number;
  /** The gateway's spend of the key today. */
  todaySpend?: number;
}

export type MoneyAlert =
  | { kind: 'budget'; threshold: number; usedPercent: number; spent: number; initial: number; remaining: number; resetAt?: string }
  | { kind: 'runway'; days: number; daysLeft: number; balance: number; pace: number; paceOver: 'week' | 'month' }
  | { kind: 'dailySpend'; limit: number; todaySpend: number };

/** What was told, per key. Stored as JSON (globalState): plain numbers and strings only. */
export interface ToldAlerts {
  /** The highest budget threshold told in this period, and the period's reset date as read then. */
  budget?: { threshold: number; resetAt?: string };
  /** The runway was told; `balance` is the lowest balance seen since (a rise above it is a top-up). */
  runway?: { balance: number };
  /** Today's spend was told on this UTC day against `limit`, when it was `spend` (a drop means the gateway's day rolled over). */
  dailySpend?: { day: string; spend: number; limit: number };
}

export interface AlertVerdict {
  /** Every alert whose condition holds now (what an agent is told on each get_account). */
  inForce: MoneyAlert[];
  /** Those of them not told yet: to be told now, once. */
  toTell: MoneyAlert[];
  /** The record to keep after telling `toTell`. */
  told: ToldAlerts;
}

/** The alerts in force now and those to tell, given what was told before. */
export function evaluateAlerts(settings: AlertSettings, facts: AlertFacts, told: ToldAlerts = {}): AlertVerdict {
  const verdict: AlertVerdict = { inForce: [], toTell: [], told: {} };
  const add = (alert: MoneyAlert | undefined, tell: boolean) => {
    if (!alert) return;
    verdict.inForce.push(alert);
    if (tell) verdict.toTell.push(alert);
  };
  const budget = budgetAlert(settings, facts, told.budget);
  if (budget.told) verdict.told.budget = budget.told;
  add(budget.alert, budget.tell);
  const runway = runwayAlert(settings, facts, told.runway);
  if (runway.told) verdict.told.runway = runway.told;
  add(runway.alert, runway.tell);
  const daily = dailySpendAlert(settings, facts, told.dailySpend);
  if (daily.told) verdict.told.dailySpend = daily.told;
  add(daily.alert, daily.tell);
  return verdict;
}

interface Judged<Told> {
  alert?: MoneyAlert;
  tell: boolean;
  told?: Told;
}

/** Whole percents from 1 to 100, each once, ascending: what a setting may hold. */
export function cleanThresholds(values: readonly unknown[]): number[] {
  const valid = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 100);
  return [...new Set(valid)].sort((a, b) => a - b);
}

function budgetAlert(settings: AlertSettings, facts: AlertFacts, told: ToldAlerts['budget']): Judged<NonNullable<ToldAlerts['budget']>> {
  const budget = facts.budget;
  const thresholds = cleanThresholds(settings.budgetThresholds);
  if (!budget || !thresholds.length || !(budget.initial > 0)) return { tell: false };
  const initialKop = toKopecks(budget.initial);
  const spentKop = Math.max(0, initialKop - toKopecks(budget.remaining));
  // In kopecks: 900 of 1,000 ₽ is 90 % exactly, never 89.99999.
  const crossed = thresholds.filter((t) => spentKop * 100 >= t * initialKop).at(-1);
  // A new period (the reset date moved on), or less used than told (a reset, a bigger budget): told again when crossed again.
  const newPeriod = told?.resetAt !== undefined && budget.resetAt !== undefined && told.resetAt !== budget.resetAt;
  const stillTold = told && !newPeriod && crossed !== undefined ? Math.min(told.threshold, crossed) : undefined;
  if (crossed === undefined) return { tell: false };
  const alert: MoneyAlert = {
    kind: 'budget',
    threshold: crossed,
    usedPercent: Math.floor((spentKop * 1000) / initialKop) / 10,
    spent: fromKopecks(spentKop),
    initial: budget.initial,
    remaining: budget.remaining,
    ...(budget.resetAt ? { resetAt: budget.resetAt } : {}),
  };
  const tell = stillTold === undefined || crossed > stillTold;
  return { alert, tell, told: { threshold: Math.max(crossed, stillTold ?? 0), ...(budget.resetAt ? { resetAt: budget.resetAt } : {}) } };
}

/** Rubles a day: the faster of the gateway's 30-day average and the last 7 days' known spend. */
export function alertPace(facts: Pick<AlertFacts, 'avgDailySpend' | 'weekSpend'>): { pace: number; over: 'week' | 'month' } | undefined {
  const month = typeof facts.avgDailySpend === 'number' && Number.isFinite(facts.avgDailySpend) ? facts.avgDailySpend : 0;
  const week = typeof facts.weekSpend === 'number' && Number.isFinite(facts.weekSpend) ? facts.weekSpend / 7 : 0;
  if (month <= 0 && week <= 0) return undefined;
  return week > month ? { pace: week, over: 'week' } : { pace: month, over: 'month' };
}

function runwayAlert(settings: AlertSettings, facts: AlertFacts, told: ToldAlerts['runway']): Judged<NonNullable<ToldAlerts['runway']>> {
  const balance = facts.balance;
  if (!(settings.runwayDays > 0) || typeof balance !== 'number') return { tell: false };
  const pace = alertPace(facts);
  const daysLeft = pace ? Math.max(0, balance) / pace.pace : Infinity;
  const alert: MoneyAlert | undefined =
    pace && daysLeft < settings.runwayDays ? { kind: 'runway', days: settings.runwayDays, daysLeft, balance, pace: pace.pace, paceOver: pace.over } : undefined;
  if (!told) return alert ? { alert, tell: true, told: { balance } } : { tell: false };
  // A top-up that lifts the runway to the days again ends the told record; one that does not is no new crossing.
  const toppedUp = toKopecks(balance) > toKopecks(told.balance);
  if (toppedUp && !alert) return { tell: false };
  return { alert, tell: false, told: { balance: toppedUp ? balance : Math.min(balance, told.balance) } };
}

/** The UTC day (YYYY-MM-DD): the day the gateway's `today_spend` is taken to cover (docs/money.md). */
export const utcDay = (d: Date) => d.toISOString().slice(0, 10);

function dailySpendAlert(settings: AlertSettings, facts: AlertFacts, told: ToldAlerts['dailySpend']): Judged<NonNullable<ToldAlerts['dailySpend']>> {
  const spend = facts.todaySpend;
  if (!(settings.dailySpend > 0) || typeof spend !== 'number') return { tell: false };
  const [day, limit] = [utcDay(facts.now), settings.dailySpend];
  // A new day, or a changed amount, arms it again.
  const sameDay = told !== undefined && told.day === day && told.limit === limit && toKopecks(spend) >= toKopecks(told.spend);
  if (toKopecks(spend) < toKopecks(limit)) return sameDay ? { tell: false, told: { day, spend, limit } } : { tell: false };
  return { alert: { kind: 'dailySpend', limit, todaySpend: spend }, tell: !sameDay, told: { day, spend, limit } };
}

/** The alert for people, in the display language (`locale` formats the figures). */
export function describeAlert(alert: MoneyAlert, locale = 'ru'): string {
  const rub = (amount: number) => formatRubles(amount, locale);
  switch (alert.kind) {
    case 'budget': {
      // The share used now (a crossing may be told past its threshold: 95 % when read after 90 %).
      const used = Math.floor(alert.usedPercent);
      return alert.resetAt
        ? l10n.t(
            'The key has used {0} % of its budget: {1} of {2} spent, {3} left until its reset on {4}.',
            used,
            rub(alert.spent),
            rub(alert.initial),
            rub(alert.remaining),
            new Date(alert.resetAt).toLocaleDateString(locale),
          )
        : l10n.t('The key has used {0} % of its budget: {1} of {2} spent, {3} left.', used, rub(alert.spent), rub(alert.initial), rub(alert.remaining));
    }
    case 'runway':
      return alert.paceOver === 'week'
        ? l10n.t("The balance ({0}) lasts ≈ {1} days at this week's pace of {2}/day.", rub(alert.balance), formatDays(alert.daysLeft, locale), rub(alert.pace))
        : l10n.t('The balance ({0}) lasts ≈ {1} days at the 30-day pace of {2}/day.', rub(alert.balance), formatDays(alert.daysLeft, locale), rub(alert.pace));
    case 'dailySpend':
      return l10n.t("Today's spend {0} has reached your daily amount of {1}.", rub(alert.todaySpend), rub(alert.limit));
  }
}

/** The last 7 × 24 hours before `now`. */
export function weekWindow(now: Date): { from: Date; to: Date } {
  return { from: new Date(now.getTime() - 7 * 86_400_000), to: now };
}

/** Known costs of `records` paid with `identity` (the key's `<base URL>|<fingerprint>`) inside the week before `now`, rubles. */
export function weekSpendOf(records: readonly { createdAt: string; costRub?: number; identity?: string }[], identity: string, now: Date): number {
  const { from, to } = weekWindow(now);
  let kopecks = 0;
  for (const record of records) {
    const at = Date.parse(record.createdAt);
    if (record.identity !== identity || typeof record.costRub !== 'number' || !(at >= from.getTime() && at <= to.getTime())) continue;
    kopecks += toKopecks(record.costRub);
  }
  return fromKopecks(kopecks);
}
