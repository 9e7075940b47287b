// Demo API keys and their per-key state (budget, expiry, revocation).
import type { KeyRecord, ResetInterval } from './wire';

export const DEMO_KEYS = {
  unlimited: 'gw-demo-unlimited',
  budget: 'gw-demo-budget',
  expiringSoon: 'gw-demo-expiring',
  expired: 'gw-demo-expired',
  revoked: 'gw-demo-revoked',
  lowBudget: 'gw-demo-low-budget',
} as const;

/** One line per key for the CLI banner. */
export const DEMO_KEY_DESCRIPTIONS: Readonly<Record<keyof typeof DEMO_KEYS, string>> = {
  unlimited: 'no budget, no expiry (key record has only a name)',
  budget: 'monthly budget of 1000 ₽, with a little usage history',
  expiringSoon: 'expires in about 2 days, no budget',
  expired: 'expired: every /v1/ call answers 401 key_expired',
  revoked: 'revoked: every /v1/ call answers 401 key_revoked',
  lowBudget: 'daily budget of 50 ₽ with only 5 ₽ left',
};

const DAY_MS = 86_400_000;

export interface KeyBudgetState {
  initialKop: number;
  remainingKop: number;
  interval?: ResetInterval;
  resetAt?: number;
}

export interface KeyState {
  key: string;
  name: string;
  budget?: KeyBudgetState;
  expiresAt?: number;
  revoked: boolean;
}

/** Builds the initial key table. `now` fixes expiry and reset dates. */
export function initialKeys(now: number, budgetSpentKop: number): Map<string, KeyState> {
  const keys: KeyState[] = [
    { key: DEMO_KEYS.unlimited, name: 'demo-unlimited', revoked: false },
    {
      key: DEMO_KEYS.budget,
      name: 'demo-budget',
      revoked: false,
      budget: { initialKop: 100_000, remainingKop: 100_000 - budgetSpentKop, interval: 'monthly', resetAt: nextReset('monthly', now) },
    },
    { key: DEMO_KEYS.expiringSoon, name: 'demo-expiring', revoked: false, expiresAt: now + 2 * DAY_MS },
    { key: DEMO_KEYS.expired, name: 'demo-expired', revoked: false, expiresAt: now - DAY_MS },
    { key: DEMO_KEYS.revoked, name: 'demo-revoked', revoked: true },
    {
      key: DEMO_KEYS.lowBudget,
      name: 'demo-low-budget',
      revoked: false,
      budget: { initialKop: 5_000, remainingKop: 500, interval: 'daily', resetAt: nextReset('daily', now) },
    },
  ];
  return new Map(keys.map((k) => [k.key, k]));
}

/** Start of the next UTC day / Monday / month after `now`. */
export function nextReset(interval: ResetInterval, now: number): number {
  const d = new Date(now);
  if (interval === 'monthly') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) + DAY_MS;
  if (interval === 'daily') return midnight;
  const daysToMonday = (8 - d.getUTCDay()) % 7 || 7;
  return midnight + (daysToMonday - 1) * DAY_MS;
}

/** Refills a budget whose reset time has passed, as a real gateway would. */
export function applyBudgetReset(budget: KeyBudgetState, now: number): void {
  if (budget.interval && budget.resetAt !== undefined && now >= budget.resetAt) {
    budget.remainingKop = budget.initialKop;
    budget.resetAt = nextReset(budget.interval, now);
  }
}

export function kopToRub(kop: number): number {
  return Math.round(kop) / 100;
}

export function rubToKop(rub: number): number {
  return Math.round(rub * 100);
}

export function keyRecord(key: KeyState, now: number): KeyRecord {
  const record: KeyRecord = { name: key.name };
  if (key.budget) {
    applyBudgetReset(key.budget, now);
    const b = key.budget;
    record.budget = { remaining: kopToRub(b.remainingKop), initial: kopToRub(b.initialKop) };
    if (b.interval) record.budget.reset_interval = b.interval;
    if (b.resetAt !== undefined) {
      record.budget.reset_at = new Date(b.resetAt).toISOString();
      record.budget.reset_in_seconds = Math.max(0, Math.round((b.resetAt - now) / 1000));
    }
  }
  if (key.expiresAt !== undefined) {
    record.expires_at = new Date(key.expiresAt).toISOString();
    record.expires_in_seconds = Math.max(0, Math.round((key.expiresAt - now) / 1000));
  }
  return record;
}
