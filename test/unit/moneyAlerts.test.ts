// Alerts before the money runs out (issue 42): crossing and reset, told once, runway under N days, off switches.
import * as assert from 'node:assert/strict';
import { alertFactsOf } from '../../src/account/alertFacts';
import {
  type AlertFacts,
  type AlertSettings,
  alertPace,
  cleanThresholds,
  DEFAULT_ALERT_SETTINGS,
  describeAlert,
  evaluateAlerts,
  type ToldAlerts,
  weekSpendOf,
} from '../../src/core/money/alerts';

const now = new Date('2026-11-20T12:00:00Z');
const DAY = 86_400_000;
const resetAt = '2026-12-01T00:00:00.000Z';
const budgetOnly: AlertSettings = { budgetThresholds: [50, 75, 90], runwayDays: 0, dailySpend: 0 };
const budget = (remaining: number, reset = resetAt): AlertFacts => ({ now, budget: { remaining, initial: 1000, resetAt: reset } });

/** Runs the figures through the rules one after another, as refreshes would, keeping the told record; returns what each told. */
function tellSequence(settings: AlertSettings, figures: AlertFacts[], told: ToldAlerts = {}): { told: string[][]; last: ToldAlerts } {
  const toldEach: string[][] = [];
  for (const facts of figures) {
    const verdict = evaluateAlerts(settings, facts, told);
    toldEach.push(verdict.toTell.map((a) => (a.kind === 'budget' ? `budget ${a.threshold}` : a.kind)));
    told = verdict.told;
  }
  return { told: toldEach, last: told };
}

describe('money alerts: the key budget', () => {
  it('tells each threshold once as it is crossed, the highest only when several are crossed at once', () => {
    const { told } = tellSequence(budgetOnly, [budget(600), budget(480), budget(470), budget(240), budget(100), budget(90), budget(50)]);
    assert.deepEqual(told, [[], ['budget 50'], [], ['budget 75'], ['budget 90'], [], []]);
    assert.deepEqual(tellSequence(budgetOnly, [budget(1000), budget(50)]).told, [[], ['budget 90']]);
  });

  it('90 % of 1,000 ₽ is crossed at 900 ₽ spent exactly, not at 899.99', () => {
    assert.deepEqual(evaluateAlerts(budgetOnly, budget(100.01), { budget: { threshold: 75 } }).toTell, []);
    const [alert] = evaluateAlerts(budgetOnly, budget(100), { budget: { threshold: 75 } }).toTell;
    assert.deepEqual(alert, { kind: 'budget', threshold: 90, usedPercent: 90, spent: 900, initial: 1000, remaining: 100, resetAt });
  });

  it('stays in force while crossed (an agent is told each time), told to the person once', () => {
    const first = evaluateAlerts(budgetOnly, budget(80));
    const second = evaluateAlerts(budgetOnly, budget(70), first.told);
    assert.equal(first.toTell.length, 1);
    assert.equal(second.toTell.length, 0);
    assert.deepEqual(
      second.inForce.map((a) => a.kind),
      ['budget'],
    );
  });

  it('a new budget period (reset date moved on) tells the crossings again', () => {
    const later = '2027-01-01T00:00:00.000Z';
    // Spent fast after the reset: read already past 90 % of the new period.
    assert.deepEqual(tellSequence(budgetOnly, [budget(50), budget(40), budget(60, later)]).told, [['budget 90'], [], ['budget 90']]);
  });

  it('spend falling back (a reset without a date, a bigger budget) re-arms the thresholds above it', () => {
    const noDate = (remaining: number): AlertFacts => ({ now, budget: { remaining, initial: 1000 } });
    const { told, last } = tellSequence(budgetOnly, [noDate(50), noDate(1000), noDate(400), noDate(200), noDate(80)]);
    assert.deepEqual(told, [['budget 90'], [], ['budget 50'], ['budget 75'], ['budget 90']]);
    assert.deepEqual(last, { budget: { threshold: 90 } });
    // The initial budget raised from 1,000 to 2,000 ₽ with 900 spent: 45 %, the 50 % threshold is armed again.
    const raised = evaluateAlerts(budgetOnly, { now, budget: { remaining: 1100, initial: 2000 } }, last);
    assert.deepEqual(raised.told, {});
  });

  it('a threshold added to the setting is told when already crossed; [] is off', () => {
    const told: ToldAlerts = { budget: { threshold: 90, resetAt } };
    const [alert] = evaluateAlerts({ ...budgetOnly, budgetThresholds: [90, 95] }, budget(40), told).toTell;
    assert.equal(alert?.kind === 'budget' && alert.threshold, 95);
    const off = evaluateAlerts({ ...budgetOnly, budgetThresholds: [] }, budget(0), told);
    assert.deepEqual(off, { inForce: [], toTell: [], told: {} });
  });

  it('nothing for a key without a budget or with a budget of 0', () => {
    assert.deepEqual(evaluateAlerts(budgetOnly, { now, balance: 5 }).inForce, []);
    assert.deepEqual(evaluateAlerts(budgetOnly, { now, budget: { remaining: 0, initial: 0 } }).inForce, []);
  });

  it('keeps whole percents 1-100 of the setting, once each, in order', () => {
    assert.deepEqual(cleanThresholds([90, 50, 'x', -5, 0, 150, 75, 50, Number.NaN]), [50, 75, 90]);
  });
});

describe('money alerts: the runway', () => {
  const runwayOnly: AlertSettings = { budgetThresholds: [], runwayDays: 3, dailySpend: 0 };
  const at = (balance: number, avgDailySpend: number, weekSpend?: number): AlertFacts => ({ now, balance, avgDailySpend, ...(weekSpend ? { weekSpend } : {}) });

  it('tells when the balance lasts under N days at the pace, once', () => {
    const { told } = tellSequence(runwayOnly, [at(400, 100), at(290, 100), at(150, 100), at(10, 100)]);
    assert.deepEqual(told, [[], ['runway'], [], []]);
    const [alert] = evaluateAlerts(runwayOnly, at(250, 100)).toTell;
    assert.deepEqual(alert, { kind: 'runway', days: 3, daysLeft: 2.5, balance: 250, pace: 100, paceOver: 'month' });
  });

  it("this week's pace counts when it is faster than the 30-day average", () => {
    assert.deepEqual(alertPace({ avgDailySpend: 10, weekSpend: 700 }), { pace: 100, over: 'week' });
    assert.deepEqual(alertPace({ avgDailySpend: 10, weekSpend: 35 }), { pace: 10, over: 'month' });
    assert.equal(alertPace({ avgDailySpend: 0 }), undefined);
    // 400 ₽ lasts 40 days at 10 ₽/day, but 4 days at this week's 100 ₽/day: under 5 days.
    const [alert] = evaluateAlerts({ ...runwayOnly, runwayDays: 5 }, at(400, 10, 700)).toTell;
    assert.equal(alert?.kind === 'runway' && alert.paceOver, 'week');
  });

  it('no pace (nothing spent), no balance, or 0 days: no alert', () => {
    assert.deepEqual(evaluateAlerts(runwayOnly, at(1, 0)).inForce, []);
    assert.deepEqual(evaluateAlerts(runwayOnly, { now, avgDailySpend: 100 }).inForce, []);
    assert.deepEqual(evaluateAlerts({ ...runwayOnly, runwayDays: 0 }, at(1, 100)), { inForce: [], toTell: [], told: {} });
  });

  it('a top-up that lifts the runway over N days re-arms it; one that does not tells nothing new', () => {
    const { told } = tellSequence(runwayOnly, [at(200, 100), at(150, 100), at(250, 100), at(120, 100), at(800, 100), at(700, 100), at(200, 100)]);
    // told at 200; 250 (a top-up, still 2.5 days): not again; 800 (8 days): re-armed; 200: told again.
    assert.deepEqual(told, [['runway'], [], [], [], [], [], ['runway']]);
  });

  it('a slower pace alone does not re-arm it: only a top-up does', () => {
    const { told } = tellSequence(runwayOnly, [at(200, 100), at(200, 10), at(190, 100)]);
    assert.deepEqual(told, [['runway'], [], []]);
  });
});

describe('money alerts: the daily amount', () => {
  const dailyOnly: AlertSettings = { budgetThresholds: [], runwayDays: 0, dailySpend: 500 };
  const today = (todaySpend: number, at = now): AlertFacts => ({ now: at, todaySpend });

  it("tells once when today's spend reaches the amount, again on the next day", () => {
    const tomorrow = new Date(now.getTime() + DAY);
    const { told } = tellSequence(dailyOnly, [today(400), today(500), today(650), today(20, tomorrow), today(520, tomorrow)]);
    assert.deepEqual(told, [[], ['dailySpend'], [], [], ['dailySpend']]);
  });

  it("the gateway's figure dropping is a new day even before the UTC date changes", () => {
    const { told } = tellSequence(dailyOnly, [today(600), today(510)]);
    assert.deepEqual(told, [['dailySpend'], ['dailySpend']]);
  });

  it('a changed amount arms it again; 0 (the default) is off', () => {
    assert.deepEqual(tellSequence(dailyOnly, [today(600)], { dailySpend: { day: '2026-11-20', spend: 550, limit: 300 } }).told, [['dailySpend']]);
    assert.equal(DEFAULT_ALERT_SETTINGS.dailySpend, 0);
    assert.deepEqual(evaluateAlerts(DEFAULT_ALERT_SETTINGS, today(100_000)).inForce, []);
  });
});

describe('money alerts: the figures and the words', () => {
  it('reads the snapshot: remaining budget, reset date, pace, today at the time the stats were read', () => {
    const statsAt = now.getTime() - 3600_000;
    const facts = alertFactsOf(
      {
        status: 'ready',
        balance: 300,
        budget: 95,
        key: { name: 'k', budget: { remaining: 100, initial: 1000, reset_at: resetAt } },
        stats: { today_spend: 12, today_requests: 1, month_spend: 300, month_requests: 9, avg_daily_spend: 10 },
        statsAt,
      },
      now,
      70,
    );
    assert.deepEqual(facts, {
      now: new Date(statsAt),
      balance: 300,
      budget: { remaining: 95, initial: 1000, resetAt },
      avgDailySpend: 10,
      todaySpend: 12,
      weekSpend: 70,
    });
  });

  it("the week's spend: this key's known costs of the last 7 × 24 hours", () => {
    const id = 'http://gw|abc';
    const records = [
      { createdAt: new Date(now.getTime() - 1000).toISOString(), costRub: 10.1, identity: id },
      { createdAt: new Date(now.getTime() - 6 * DAY).toISOString(), costRub: 20.2, identity: id },
      { createdAt: new Date(now.getTime() - 8 * DAY).toISOString(), costRub: 40, identity: id },
      { createdAt: new Date(now.getTime() - DAY).toISOString(), costRub: 80, identity: 'http://gw|other' },
      { createdAt: new Date(now.getTime() - DAY).toISOString(), identity: id },
    ];
    assert.equal(weekSpendOf(records, id, now), 30.3);
  });

  it('says each alert with its figures', () => {
    const verdict = evaluateAlerts(
      { budgetThresholds: [90], runwayDays: 3, dailySpend: 100 },
      { now, balance: 150, avgDailySpend: 100, todaySpend: 120, budget: { remaining: 50, initial: 1000, resetAt } },
    );
    const texts = verdict.toTell.map((a) => describeAlert(a, 'en'));
    assert.equal(texts.length, 3);
    assert.match(texts[0]!, /used 95 % of its budget: ₽950\.00 of ₽1,000\.00 spent, ₽50\.00 left until its reset on /);
    assert.match(texts[1]!, /balance \(₽150\.00\) lasts ≈ 1\.5 days at the 30-day pace of ₽100\.00\/day/);
    assert.match(texts[2]!, /Today's spend ₽120\.00 has reached your daily amount of ₽100\.00/);
  });
});
