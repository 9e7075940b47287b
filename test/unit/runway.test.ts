import * as assert from 'node:assert/strict';
import { describeRunway, formatDays, projectRunway } from '../../src/core/money/runway';

const now = new Date('2026-11-20T12:00:00Z');
const DAY = 86_400_000;

describe('runway projection', () => {
  it('gives days left for balance and budget at the 30-day pace', () => {
    const runway = projectRunway({ balance: 150, budget: 30, stats: { avg_daily_spend: 10 }, now })!;
    assert.equal(runway.pace, 10);
    assert.equal(runway.balance!.daysLeft, 15);
    assert.equal(runway.balance!.runsOutAt.getTime(), now.getTime() + 15 * DAY);
    assert.equal(runway.budget!.daysLeft, 3);
    assert.equal(runway.budget!.runsOutBeforeReset, undefined);
  });

  it('makes no projection without spending (avg_daily_spend 0) or without stats', () => {
    assert.equal(projectRunway({ balance: 150, stats: { avg_daily_spend: 0 }, now }), undefined);
    assert.equal(projectRunway({ balance: 150, now }), undefined);
    assert.deepEqual(describeRunway(undefined), []);
  });

  it('says whether a budget runs out before its reset (reset_at)', () => {
    const soon = projectRunway({
      budget: 20,
      key: { budget: { remaining: 20, initial: 100, reset_interval: 'weekly', reset_at: new Date(now.getTime() + 5 * DAY).toISOString() } },
      stats: { avg_daily_spend: 10 },
      now,
    })!;
    assert.equal(soon.budget!.daysLeft, 2);
    assert.equal(soon.budget!.runsOutBeforeReset, true);
    const late = projectRunway({
      budget: 80,
      key: { budget: { remaining: 80, initial: 100, reset_at: new Date(now.getTime() + 5 * DAY).toISOString() } },
      stats: { avg_daily_spend: 10 },
      now,
    })!;
    assert.equal(late.budget!.runsOutBeforeReset, false);
  });

  it('uses reset_in_seconds when reset_at is absent, and the key record when the balance has no budget', () => {
    const runway = projectRunway({ key: { budget: { remaining: 5, initial: 50, reset_in_seconds: 86_400 } }, stats: { avg_daily_spend: 10 }, now })!;
    assert.equal(runway.budget!.daysLeft, 0.5);
    assert.equal(runway.budget!.resetAt!.getTime(), now.getTime() + DAY);
    assert.equal(runway.budget!.runsOutBeforeReset, true);
  });

  it('an exhausted or negative amount has 0 days left', () => {
    const runway = projectRunway({ balance: -3, stats: { avg_daily_spend: 2 }, now })!;
    assert.equal(runway.balance!.daysLeft, 0);
  });

  it('describes it for people', () => {
    const lines = describeRunway(
      projectRunway({
        balance: 125,
        budget: 20,
        key: { budget: { remaining: 20, initial: 100, reset_at: new Date(now.getTime() + 5 * DAY).toISOString() } },
        stats: { avg_daily_spend: 10 },
        now,
      }),
      'en',
    );
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^Balance lasts ≈ 13 days at/);
    assert.match(lines[1]!, /^Budget lasts ≈ 2 days/);
    assert.match(lines[2]!, /runs out before its reset/);
    assert.equal(formatDays(2.25, 'en'), '2.3');
    assert.equal(formatDays(2.25, 'ru'), '2,3');
  });
});
