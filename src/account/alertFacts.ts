// The account snapshot's figures as the money alerts read them (core/money/alerts.ts). No vscode import.
import type { AlertFacts } from '../core/money/alerts';
import type { AccountSnapshot } from './accountModel';

/** Balance, budget, pace and today's spend of the snapshot; `weekSpend` from the results journal when known. */
export function alertFactsOf(snapshot: AccountSnapshot, now: Date, weekSpend?: number): AlertFacts {
  const keyBudget = snapshot.key?.budget;
  const remaining = snapshot.budget ?? keyBudget?.remaining;
  return {
    // Today's spend belongs to the day the stats were read.
    now: snapshot.statsAt !== undefined ? new Date(snapshot.statsAt) : now,
    balance: snapshot.balance,
    ...(keyBudget && typeof remaining === 'number'
      ? { budget: { remaining, initial: keyBudget.initial, ...(keyBudget.reset_at ? { resetAt: keyBudget.reset_at } : {}) } }
      : {}),
    avgDailySpend: snapshot.stats?.avg_daily_spend,
    todaySpend: snapshot.stats?.today_spend,
    ...(weekSpend !== undefined ? { weekSpend } : {}),
  };
}
