import * as assert from 'node:assert/strict';
import type { AccountSnapshot } from '../../src/account/accountModel';
import { budgetRunsOutBeforeReset, runwayLines } from '../../src/account/runway';

const now = new Date('2026-11-20T12:00:00Z');
const inDays = (d: number) => new Date(now.getTime() + d * 86_400_000).toISOString();
const snapshot = (budget: number, resetInDays: number, pace: number): AccountSnapshot => ({
  status: 'ready',
  balance: 500,
  budget,
  key: { name: 'ci', budget: { remaining: budget, initial: 100, reset_interval: 'monthly', reset_at: inDays(resetInDays) } },
  stats: { today_spend: 0, today_requests: 0, month_spend: pace * 30, month_requests: 10, avg_daily_spend: pace },
});

describe('account runway', () => {
  it('warns when the budget runs out before its reset', () => {
    assert.equal(budgetRunsOutBeforeReset(snapshot(20, 10, 5), now), true); // 4 days < 10
    assert.equal(budgetRunsOutBeforeReset(snapshot(80, 10, 5), now), false); // 16 days > 10
    assert.equal(budgetRunsOutBeforeReset(snapshot(20, 10, 0), now), false); // no pace, no projection
  });

  it('gives the lines of the tooltip and the account view', () => {
    const lines = runwayLines(snapshot(20, 10, 5), 'en', now);
    assert.deepEqual(
      lines.map((l) => l.split(' ')[0]),
      ['Balance', 'Budget', 'The'],
    );
    assert.match(lines[0]!, /≈ 100 days/);
    assert.deepEqual(runwayLines({ status: 'ready', balance: 10 }, 'en', now), []);
  });
});
