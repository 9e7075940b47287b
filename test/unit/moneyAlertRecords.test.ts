// What the money alerts told, kept per key in the state all windows share: told once across
// windows, a mute per key, the key itself never stored.
import * as assert from 'node:assert/strict';
import { ALERTS_STATE_KEY, AlertRecords, CLAIM_SETTLE_MS, type SharedState } from '../../src/account/alertRecords';
import type { AlertFacts, AlertSettings } from '../../src/core/money/alerts';

/** One global state, as the windows of a profile share it (a change is seen by all at once). */
function sharedState(): SharedState & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return {
    values,
    get: <T>(key: string) => values.get(key) as T | undefined,
    update: (key: string, value: unknown) => {
      values.set(key, JSON.parse(JSON.stringify(value)));
      return Promise.resolve();
    },
  };
}

const settings: AlertSettings = { budgetThresholds: [50, 75, 90], runwayDays: 0, dailySpend: 0 };
const now = new Date('2026-11-20T12:00:00Z');
const facts = (remaining: number): AlertFacts => ({ now, budget: { remaining, initial: 1000, resetAt: '2026-12-01T00:00:00.000Z' } });
const identity = 'http://127.0.0.1:1234|0123456789ab';
const noWait = () => Promise.resolve();

describe('money alerts: the told records', () => {
  it('tells a crossing once; a second window reading the same figures tells nothing', async () => {
    const state = sharedState();
    const first = new AlertRecords(state, 'window-1', noWait);
    const second = new AlertRecords(state, 'window-2', noWait);
    assert.deepEqual(
      (await first.tellOnce(identity, settings, facts(90))).map((a) => a.kind),
      ['budget'],
    );
    assert.deepEqual(await second.tellOnce(identity, settings, facts(90)), []);
    assert.deepEqual(await first.tellOnce(identity, settings, facts(80)), []);
    // The next threshold is not "crossed" again: 90 was told.
    assert.deepEqual(await second.tellOnce(identity, settings, facts(20)), []);
  });

  it('two windows judging at the same moment: the last claim wins, only one tells', async () => {
    // Each window sees its own writes at once and the other's only once the profile's storage passed them on.
    const central = new Map<string, unknown>();
    const pending: [string, unknown][] = [];
    const views = [new Map<string, unknown>(), new Map<string, unknown>()];
    const viewState = (view: Map<string, unknown>): SharedState => ({
      get: <T>(key: string) => view.get(key) as T | undefined,
      update: (key: string, value: unknown) => {
        const copy: unknown = JSON.parse(JSON.stringify(value));
        view.set(key, copy);
        pending.push([key, copy]);
        return Promise.resolve();
      },
    });
    const passOn = () => {
      for (const [key, value] of pending.splice(0)) central.set(key, value);
      for (const view of views) for (const [key, value] of central) view.set(key, value);
    };
    const gates: (() => void)[] = [];
    const held = () => new Promise<void>((resolve) => gates.push(resolve));
    const a = new AlertRecords(viewState(views[0]!), 'window-a', held);
    const b = new AlertRecords(viewState(views[1]!), 'window-b', held);
    // Both read "not told" before either's write arrived, then both wait the claim's settle time.
    const told = Promise.all([a.tellOnce(identity, settings, facts(100)), b.tellOnce(identity, settings, facts(100))]);
    for (let turns = 0; gates.length < 2; turns++) {
      assert.ok(turns < 1000, 'the windows did not both claim');
      await new Promise((resolve) => setImmediate(resolve));
    }
    passOn();
    for (const open of gates) open();
    const [byA, byB] = await told;
    assert.deepEqual([byA.length, byB.length], [0, 1], 'the last claim (b) tells, a stays silent');
    assert.ok(CLAIM_SETTLE_MS > 0);
  });

  it("Don't warn again for this key: nothing is told for it, other keys still are, and it can be undone", async () => {
    const state = sharedState();
    const records = new AlertRecords(state, 'w', noWait);
    await records.setMuted(identity, true);
    assert.deepEqual(await records.tellOnce(identity, settings, facts(50)), []);
    assert.equal((await records.tellOnce('http://127.0.0.1:1234|ffffffffffff', settings, facts(50))).length, 1);
    await records.setMuted(identity, false);
    assert.equal((await records.tellOnce(identity, settings, facts(50))).length, 1);
  });

  it('keeps records by identity (a fingerprint, never the key), at most 20, the newest', async () => {
    const state = sharedState();
    let clock = 0;
    const records = new AlertRecords(state, 'w', noWait, () => ++clock);
    for (let i = 0; i < 25; i++) await records.tellOnce(`http://gw|key${String(i).padStart(2, '0')}`, settings, facts(400));
    const kept = Object.keys(state.values.get(ALERTS_STATE_KEY) as object).sort();
    assert.equal(kept.length, 20);
    assert.equal(kept[0], 'http://gw|key05');
  });
});
