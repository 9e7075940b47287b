// The account's runway as the status bar and the Account view show it. No vscode import.
import { describeRunway, projectRunway, type Runway } from '../core/money/runway';
import type { AccountSnapshot } from './accountModel';

export function runwayOf(snapshot: AccountSnapshot, now = new Date()): Runway | undefined {
  return projectRunway({ balance: snapshot.balance, budget: snapshot.budget, key: snapshot.key, stats: snapshot.stats, now });
}

/** True when the key's budget will be spent, at the 30-day pace, before its next reset: a warning. */
export function budgetRunsOutBeforeReset(snapshot: AccountSnapshot, now = new Date()): boolean {
  return runwayOf(snapshot, now)?.budget?.runsOutBeforeReset === true;
}

export function runwayLines(snapshot: AccountSnapshot, locale: string, now = new Date()): string[] {
  return describeRunway(runwayOf(snapshot, now), locale);
}
