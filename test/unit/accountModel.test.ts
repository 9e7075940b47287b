// The account model against the emulator: status from errors, usage applied without a request, reconcile deltas.
import * as assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { toKopecks } from '../../src/core/money/cost';
import { ValidationError } from '../../src/core/gateway/errors';
import { AccountModel, type AccountSnapshot, budgetLow, expiresWithin } from '../../src/account/accountModel';
import { DEMO_KEYS, gatewaySuite, localServer, MemorySink, SMALL, waitFor } from './support/gateway';

describe('AccountModel', function () {
  const gw = gatewaySuite({ client: { maxRetries: 0 }, dir: false });
  const clientFor = (key: string | null, url = gw.emu.url) => gw.newClient(key, { baseUrl: url });
  const modelFor = (key: string | null) => {
    const client = clientFor(key);
    return { client, account: new AccountModel(async () => client) };
  };

  it('ready: user, balance, budget, key and stats of the calling key', async () => {
    const { account } = modelFor(DEMO_KEYS.budget);
    const seen: string[] = [];
    account.onDidChange((s) => seen.push(s.status));
    const snap = await account.refresh();
    assert.equal(snap.status, 'ready');
    assert.equal(snap.user?.email, 'demo@example.com');
    assert.equal(snap.balance, 5000);
    assert.equal(snap.budget, gw.emu.state.keyBudgetRub(DEMO_KEYS.budget));
    assert.equal(snap.key?.budget?.initial, 1000);
    assert.equal(snap.stats?.month_requests, 5);
    assert.ok(snap.updatedAt);
    assert.deepEqual(seen, ['loading', 'ready']);
  });

  for (const [key, status, reason] of [
    [DEMO_KEYS.expired, 'expired-key', 'expired'],
    [DEMO_KEYS.revoked, 'invalid-key', 'revoked'],
    ['gw-unknown', 'invalid-key', 'invalid'],
    [null, 'invalid-key', 'missing'],
  ] as const) {
    it(`${reason} key -> ${status}`, async () => {
      const { account } = modelFor(key);
      const snap = await account.refresh();
      assert.equal(snap.status, status);
      assert.equal(snap.error?.kind, 'authentication');
      assert.equal(snap.error?.status, 401);
    });
  }

  it('offline when the gateway cannot be reached; the old figures stay', async () => {
    const server = await localServer(() => undefined);
    const url = server.url;
    await server.close();
    let target = gw.emu.url;
    const account = new AccountModel(async () => clientFor(DEMO_KEYS.unlimited, target));
    await account.refresh();
    target = url;
    const snap = await account.refresh();
    assert.equal(snap.status, 'offline');
    assert.equal(snap.error?.kind, 'connection');
    assert.equal(snap.balance, 5000, 'last known balance kept');
    target = gw.emu.url;
    const back = await account.refresh();
    assert.equal(back.status, 'ready');
    assert.equal(back.error, undefined, 'the error is cleared');
  });

  it('no-url and no-key from the provider', async () => {
    assert.equal((await new AccountModel(async () => 'no-url').refresh()).status, 'no-url');
    assert.equal((await new AccountModel(async () => 'no-key').refresh()).status, 'no-key');
  });

  it('a provider that throws (a bad base URL) gives a status, not a rejected refresh', async () => {
    const account = new AccountModel(async () => {
      throw new ValidationError('baseUrl', 'bad base URL.');
    });
    const snap = await account.refresh();
    assert.equal(snap.status, 'offline');
    assert.equal(snap.error?.kind, 'validation');
  });

  it('concurrent refreshes share one set of requests', async () => {
    const { account } = modelFor(DEMO_KEYS.unlimited);
    await Promise.all([account.refresh(), account.refresh(), account.refresh()]);
    assert.equal(gw.emu.state.requests.length, 4, 'me, balance, key, stats once');
  });

  it('applyUsage updates balance and budget without a request', async () => {
    const { client, account } = modelFor(DEMO_KEYS.budget);
    await account.refresh();
    const budget = account.snapshot.budget!;
    const requests = gw.emu.state.requests.length;
    const meta = await client.generate({ model: 'sketch-mini', prompt: 'apply', size: SMALL }, new MemorySink());
    account.applyUsage(meta.usage!);
    assert.equal(gw.emu.state.requests.length, requests + 1, 'only the generation itself');
    assert.equal(account.snapshot.balance, meta.usage!.balance);
    assert.equal(toKopecks(account.snapshot.budget!), toKopecks(budget) - toKopecks(meta.usage!.cost_rub!));
    assert.equal(account.snapshot.budget, gw.emu.state.keyBudgetRub(DEMO_KEYS.budget), 'matches the gateway');
  });

  it('applyUsage leaves an absent budget absent', () => {
    const account = new AccountModel(async () => 'no-key');
    account.applyUsage({ cost_rub: 1, balance: 9 });
    assert.equal(account.snapshot.budget, undefined);
    assert.equal(account.snapshot.balance, 9);
  });

  it('applyUsage with only one figure keeps what it knows', () => {
    const account = new AccountModel(async () => 'no-key');
    account.applyUsage({ cost_rub: 1, balance: 9 });
    account.applyUsage({ cost_rub: 2 });
    assert.equal(account.snapshot.balance, 9, 'no balance in the answer: the old one stays');
    account.applyUsage({ balance: 5 });
    assert.equal(account.snapshot.balance, 5);
  });

  it('reconcile returns the deltas of a charge it did not see', async () => {
    const { client, account } = modelFor(DEMO_KEYS.budget);
    await account.refresh();
    const meta = await client.generate({ model: 'aurora-1', prompt: 'unseen', n: 2, size: SMALL }, new MemorySink());
    const change = await account.reconcile();
    assert.equal(toKopecks(change.balanceDelta!), -toKopecks(meta.usage!.cost_rub!));
    assert.equal(toKopecks(change.budgetDelta!), -toKopecks(meta.usage!.cost_rub!));
    assert.equal(change.after.balance, meta.usage!.balance);
    const none = await account.reconcile();
    assert.equal(none.balanceDelta, 0);
  });

  it('reconcile against a baseline still shows a charge that a refresh in between already saw', async () => {
    const { client, account } = modelFor(DEMO_KEYS.budget);
    const before = await account.refresh();
    const baseline = { balance: before.balance, budget: before.budget };
    const meta = await client.generate({ model: 'aurora-1', prompt: 'seen early', size: SMALL }, new MemorySink());
    await account.refresh(); // e.g. the reconcile timer fired first
    assert.equal((await account.reconcile()).balanceDelta, 0, 'without the baseline the charge is invisible');
    const change = await account.reconcile(baseline);
    assert.equal(toKopecks(change.balanceDelta!), -toKopecks(meta.usage!.cost_rub!));
    assert.equal(toKopecks(change.budgetDelta!), -toKopecks(meta.usage!.cost_rub!));
  });

  describe('with a slow gateway (account answers read before a charge arrive after it)', () => {
    const SLOW_MS = 400;
    const balanceReads = () => gw.emu.state.requests.filter((r) => r.path === '/v1/gateway/balance').length;

    /** A refresh whose figures the gateway reads now, before the paid call below, and sends SLOW_MS later. */
    async function refreshInFlightBeforeCharge(account: AccountModel): Promise<{ early: Promise<AccountSnapshot> }> {
      const reads = balanceReads();
      gw.emu.state.accountGapMs = SLOW_MS;
      const early = account.refresh();
      await waitFor(() => balanceReads() > reads);
      return { early };
    }

    it('reconcile after a paid call reads figures requested after it: a refresh from before the call does not say "nothing was charged"', async () => {
      const { client, account } = modelFor(DEMO_KEYS.budget);
      const baseline = await account.refresh();
      const { early } = await refreshInFlightBeforeCharge(account);
      const meta = await client.generate({ model: 'aurora-1', prompt: 'charged meanwhile', size: SMALL }, new MemorySink());
      gw.emu.state.accountGapMs = 0;
      const change = await account.reconcile({ balance: baseline.balance, budget: baseline.budget });
      assert.equal(toKopecks(change.balanceDelta!), -toKopecks(meta.usage!.cost_rub!), 'the charge is seen');
      assert.equal(change.after.balance, meta.usage!.balance);
      await early;
      assert.equal(account.snapshot.balance, meta.usage!.balance, 'the older refresh, answered last, did not bring the old balance back');
    });

    it('a refresh that started before a paid call never overwrites the balance its answer brought', async () => {
      const { client, account } = modelFor(DEMO_KEYS.budget);
      await account.refresh();
      const { early } = await refreshInFlightBeforeCharge(account);
      const meta = await client.generate({ model: 'aurora-1', prompt: 'usage first', size: SMALL }, new MemorySink());
      account.applyUsage(meta.usage!);
      const stamped = account.snapshot.updatedAt;
      await early;
      assert.equal(account.snapshot.balance, meta.usage!.balance, 'the balance before the charge came back');
      assert.equal(account.snapshot.budget, gw.emu.state.keyBudgetRub(DEMO_KEYS.budget));
      assert.equal(account.snapshot.updatedAt, stamped, 'the older figure was stamped fresh');
    });

    it('reconcileSoon after a paid call does not settle for a refresh that started before it', async () => {
      const { client, account } = modelFor(DEMO_KEYS.budget);
      await account.refresh();
      const { early } = await refreshInFlightBeforeCharge(account);
      const meta = await client.generate({ model: 'aurora-1', prompt: 'reconciled soon', size: SMALL }, new MemorySink());
      gw.emu.state.accountGapMs = 0;
      account.reconcileSoon(1);
      await early;
      await waitFor(() => account.snapshot.balance === meta.usage!.balance);
      account.dispose();
    });
  });

  it('reconcile deltas are undefined when a side is unknown', async () => {
    const { account } = modelFor(DEMO_KEYS.unlimited);
    const change = await account.reconcile();
    assert.equal(change.balanceDelta, undefined, 'nothing known before');
    assert.equal(change.budgetDelta, undefined);
  });

  it('reconcileSoon refreshes once after a delay, and dispose cancels it', async () => {
    const client = clientFor(DEMO_KEYS.unlimited);
    let refreshesStarted = 0;
    // The provider is called at the start of every refresh, synchronously from the timer.
    const account = new AccountModel(async () => {
      refreshesStarted++;
      return client;
    });
    /** Resolves after the model's timer of the same delay, set before it, has run (Node runs equal timers in order). */
    const afterTimerOf = (delayMs: number) => delay(delayMs);
    account.reconcileSoon(20);
    account.reconcileSoon(20);
    await afterTimerOf(20);
    assert.equal(refreshesStarted, 1);
    await account.refresh(); // the one in flight
    assert.equal(gw.emu.state.requests.length, 4);
    account.reconcileSoon(20);
    account.dispose();
    await afterTimerOf(20);
    assert.equal(refreshesStarted, 1);
    assert.equal(gw.emu.state.requests.length, 4);
  });

  it('expiresWithin and budgetLow', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const snap = (s: Partial<AccountSnapshot>): AccountSnapshot => ({ status: 'ready', ...s });
    assert.equal(expiresWithin(snap({ key: { name: 'k', expires_in_seconds: 86_400 } }), 2, now), true);
    assert.equal(expiresWithin(snap({ key: { name: 'k', expires_in_seconds: 3 * 86_400 } }), 2, now), false);
    assert.equal(expiresWithin(snap({ key: { name: 'k', expires_at: '2030-01-02T00:00:00Z' } }), 2, now), true);
    assert.equal(expiresWithin(snap({ key: { name: 'k' } }), 2, now), false);
    assert.equal(expiresWithin(snap({}), 2, now), false);
    assert.equal(budgetLow(snap({ budget: 5, key: { name: 'k', budget: { remaining: 5, initial: 50 } } })), false, 'exactly 10 % is not low');
    assert.equal(budgetLow(snap({ budget: 4.99, key: { name: 'k', budget: { remaining: 4.99, initial: 50 } } })), true);
    assert.equal(budgetLow(snap({ budget: 1 })), false, 'no initial budget known');
  });
});
