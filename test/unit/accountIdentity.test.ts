// The account's figures belong to one identity (base URL + key fingerprint): races across a key
// switch, usage of another key, partial refreshes, and funds checks on current facts only.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { type AccountApi, type AccountConnection, AccountModel } from '../../src/account/accountModel';
import { GatewayClient } from '../../src/core/client/client';
import { CannotAffordError, InsufficientFundsError } from '../../src/core/gateway/errors';
import { accountIdentity, keyFingerprint } from '../../src/core/gateway/identity';
import type { ImageModel } from '../../src/core/gateway/types';
import { caught, DEMO_KEYS, newService, paidRequests, removeDir, type RunningEmulator, SMALL, startEmulator, tempDir, waitFor } from './support/gateway';

describe('account identity', function () {
  let emu: RunningEmulator;
  let client: GatewayClient;
  let models: ImageModel[];
  let dir: string;
  /** The key "in SecretStorage": what the provider and the paid client read. */
  let currentKey: string;
  /** Calls of these keys wait for `release()` after their answer arrived. */
  let held = new Set<string>();
  const releases: (() => void)[] = [];

  const release = () => {
    held = new Set();
    for (const r of releases.splice(0)) r();
  };
  const hold = async <T>(key: string, call: Promise<T>): Promise<T> => {
    const value = await call;
    if (held.has(key)) await new Promise<void>((resolve) => releases.push(resolve));
    return value;
  };
  const bound = (key: string): AccountApi => ({
    me: () => hold(key, client.me({ apiKey: key })),
    balance: () => hold(key, client.balance({ apiKey: key })),
    key: () => hold(key, client.key({ apiKey: key })),
    stats: () => hold(key, client.stats({ apiKey: key })),
  });
  const provider = async (): Promise<AccountConnection> => ({ identity: accountIdentity(emu.url, currentKey), api: bound(currentKey) });

  before(async () => {
    emu = await startEmulator();
    client = new GatewayClient({ baseUrl: emu.url, getApiKey: () => currentKey, maxRetries: 0 });
    models = await client.imageModels();
    dir = await tempDir('gwi-identity-');
  });
  after(async () => {
    await client.close();
    await emu.close();
    await removeDir(dir);
  });
  beforeEach(() => {
    emu.state.reset();
    release();
    currentKey = DEMO_KEYS.lowBudget;
  });

  it('the identity is the base URL and a short fingerprint, never the key', () => {
    const id = accountIdentity(`${emu.url}/v1/`, DEMO_KEYS.budget);
    assert.equal(id, `${emu.url}|${keyFingerprint(DEMO_KEYS.budget)}`);
    assert.match(keyFingerprint(DEMO_KEYS.budget), /^[0-9a-f]{12}$/);
    assert.ok(!id.includes(DEMO_KEYS.budget));
    assert.notEqual(keyFingerprint('a'), keyFingerprint('b'));
    assert.equal(keyFingerprint(' a '), keyFingerprint('a'), 'the stored key is trimmed');
  });

  it('race: a refresh in flight across a key switch is not shared by the new key and its result is discarded', async () => {
    const account = new AccountModel(provider);
    held = new Set([DEMO_KEYS.lowBudget]);
    const oldRefresh = account.refresh();
    await waitFor(() => releases.length === 4);
    // The key changes (here or in another window).
    currentKey = DEMO_KEYS.budget;
    const newRefresh = account.switchIdentity();
    assert.equal(account.snapshot.status, 'loading', 'loading at once');
    assert.equal(account.snapshot.switching, true);
    assert.equal(account.snapshot.balance, undefined, 'the old figures are gone at once');
    assert.notEqual(newRefresh, oldRefresh, 'the new key does not share the old refresh');
    const fresh = await newRefresh;
    assert.equal(fresh.identity, accountIdentity(emu.url, DEMO_KEYS.budget));
    assert.equal(fresh.budget, emu.state.keyBudgetRub(DEMO_KEYS.budget));
    assert.equal(fresh.key?.name, 'demo-budget');
    release();
    const late = await oldRefresh;
    assert.equal(late.key?.name, 'demo-budget', 'whoever awaited the old refresh gets the current identity');
    assert.equal(account.snapshot.key?.name, 'demo-budget', "the old key's answer was discarded");
    assert.equal(account.snapshot.budget, emu.state.keyBudgetRub(DEMO_KEYS.budget));
  });

  it('race: applyUsage after a switch: usage of the old key is discarded, of the new key applied', async () => {
    const account = new AccountModel(provider);
    await account.refresh();
    const oldIdentity = account.snapshot.identity!;
    currentKey = DEMO_KEYS.budget;
    await account.switchIdentity();
    const before = account.snapshot;
    account.applyUsage({ cost_rub: 3, balance: 1 }, oldIdentity);
    assert.equal(account.snapshot, before, 'nothing changed');
    account.applyUsage({ cost_rub: 3, balance: 4000 }, account.snapshot.identity);
    assert.equal(account.snapshot.balance, 4000);
  });

  it("race: a job sent with the old key finishes after the switch: its usage does not touch the new key's figures", async () => {
    const account = new AccountModel(provider);
    await account.refresh();
    const rig = newService(client, models, path.join(dir, 'rec-race'), {
      applyUsage: (usage, identity) => account.applyUsage(usage, identity),
      funds: () => account.currentFunds(),
    });
    emu.state.armFault({ fault: 'latency', latencyMs: 400 });
    const job = rig.service.run({
      request: { model: 'sketch-mini', prompt: 'old key', size: SMALL },
      output: { directory: path.join(dir, 'out-race'), pattern: 'x' },
    });
    await waitFor(() => paidRequests(emu).length === 1);
    currentKey = DEMO_KEYS.budget;
    const switched = await account.switchIdentity();
    const result = await job;
    assert.equal(result.files.length, 1);
    assert.equal(paidRequests(emu)[0]!.key, 'demo-low-budget', 'sent with the old key');
    assert.equal(account.snapshot.identity, switched.identity);
    assert.equal(account.snapshot.budget, switched.budget, "the new key's budget was not charged with the old key's cost");
  });

  it('an identity change without an event (a missed one) drops the old figures too', async () => {
    const account = new AccountModel(provider);
    await account.refresh();
    assert.equal(account.snapshot.key?.name, 'demo-low-budget');
    currentKey = DEMO_KEYS.unlimited;
    const seen: (number | undefined)[] = [];
    account.onDidChange((s) => seen.push(s.budget));
    const next = await account.refresh();
    assert.equal(next.key?.name, 'demo-unlimited');
    assert.equal(next.budget, undefined, 'no budget carried over from the other key');
    assert.equal(seen[0], undefined, 'dropped before the new figures came');
  });

  it('a refresh keeps the parts that succeeded and reports the part that failed', async () => {
    const broken = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', getApiKey: () => 'x', maxRetries: 0 });
    try {
      const api = bound(DEMO_KEYS.budget);
      const account = new AccountModel(async () => ({ identity: 'id', api: { ...api, stats: () => broken.stats() } }));
      const snap = await account.refresh();
      assert.equal(snap.status, 'ready', 'a failing stats does not hide a fresh balance and budget');
      assert.equal(snap.balance, 5000);
      assert.equal(snap.budget, emu.state.keyBudgetRub(DEMO_KEYS.budget));
      assert.deepEqual(snap.failedParts, ['stats']);
      assert.equal(snap.error?.kind, 'connection');
      const noMe = new AccountModel(async () => ({ identity: 'id', api: { ...api, me: () => broken.me() } }));
      const other = await noMe.refresh();
      assert.deepEqual(other.failedParts, ['user']);
      assert.equal(other.balance, 5000);
    } finally {
      await broken.close();
    }
  });

  describe('funds for a local refusal: current facts only', () => {
    it('stale figures are refreshed first: a top-up since the last read is seen', async () => {
      let now = Date.now();
      const account = new AccountModel(provider, () => now);
      emu.state.setBalance(1);
      await account.refresh();
      emu.state.setBalance(500);
      now += 61_000;
      const funds = await account.currentFunds();
      assert.equal(funds.balance, 500);
    });

    it('still unknown after the bounded wait: no figures, so the request is sent and the gateway decides', async () => {
      const account = new AccountModel(provider);
      held = new Set([DEMO_KEYS.lowBudget]);
      // The 150 ms wait ended it, not the account's answer: that answer is held until release() below,
      // so a wait without its bound would never return. (No clock bound: a busy machine must not fail it.)
      const funds = await account.currentFunds(60_000, 150);
      assert.deepEqual(funds, {});
      release();
    });

    it('a budget reset time that passed makes the figures stale', async () => {
      let now = Date.now();
      const account = new AccountModel(provider, () => now);
      await account.refresh();
      const resetAt = Date.parse(account.snapshot.key!.budget!.reset_at!);
      now = resetAt + 1000; // later than reset_at, though the figures are only "seconds" old by updatedAt
      let refreshed = false;
      account.onDidChange(() => (refreshed = true));
      await account.currentFunds(Number.POSITIVE_INFINITY);
      assert.ok(refreshed, 'read again');
    });

    it('a reset known only by reset_in_seconds also makes the figures stale once it passed', async () => {
      let now = Date.now();
      const api = bound(DEMO_KEYS.lowBudget);
      const account = new AccountModel(
        async () => ({ identity: 'x', api: { ...api, key: async () => ({ name: 'k', budget: { remaining: 5, initial: 50, reset_in_seconds: 30 } }) } }),
        () => now,
      );
      await account.refresh();
      let reads = 0;
      account.onDidChange(() => reads++);
      await account.currentFunds(Number.POSITIVE_INFINITY);
      assert.equal(reads, 0, 'before the reset: fresh');
      now += 31_000;
      await account.currentFunds(Number.POSITIVE_INFINITY);
      assert.ok(reads > 0, 'after the reset: read again');
    });

    it('switch from a poor key (₽1) to a rich one (₽500) and generate at once: sent, not refused', async () => {
      const account = new AccountModel(provider);
      emu.state.setBalance(1);
      await account.refresh();
      const rig = newService(client, models, path.join(dir, 'rec-switch'), { funds: () => account.currentFunds() });
      const poor = await caught(() =>
        rig.service.run({ request: { model: 'sketch-mini', prompt: 'poor', size: SMALL }, output: { directory: path.join(dir, 'out-poor'), pattern: 'x' } }),
      );
      assert.ok(poor instanceof CannotAffordError, 'refused on the poor key: current facts');
      assert.equal(paidRequests(emu).length, 0);
      // Another key, on an account with ₽500.
      currentKey = DEMO_KEYS.unlimited;
      emu.state.setBalance(500);
      void account.switchIdentity();
      const result = await rig.service.run({
        request: { model: 'sketch-mini', prompt: 'rich', size: SMALL },
        output: { directory: path.join(dir, 'out-rich'), pattern: 'x' },
      });
      assert.equal(result.files.length, 1);
      assert.equal(paidRequests(emu).length, 1, 'sent');
    });

    it('a gateway budget refusal refreshes the account and later allows a local budget refusal, until the budget grows', async () => {
      const account = new AccountModel(provider);
      await account.refresh();
      const rig = newService(client, models, path.join(dir, 'rec-budget'), {
        funds: () => account.currentFunds(),
        fundsRefused: (scope) => void account.noteFundsRefusal(scope),
      });
      const job = { request: { model: 'lumen-xl', prompt: 'dear', size: SMALL }, output: { directory: path.join(dir, 'out-budget'), pattern: 'x' } };
      const first = await caught(() => rig.service.run(job));
      assert.ok(first instanceof InsufficientFundsError, 'the budget looked short: sent, and the gateway refused');
      assert.equal(first.scope, 'budget');
      assert.equal(paidRequests(emu).length, 1);
      await waitFor(() => account.snapshot.budgetRefusal !== undefined && account.snapshot.status === 'ready');
      const second = await caught(() => rig.service.run(job));
      assert.ok(second instanceof CannotAffordError, String(second));
      assert.equal(second.scope, 'budget');
      assert.equal(paidRequests(emu).length, 1, 'refused locally: 0 more requests');
      assert.equal(emu.state.totalReservations, 0, 'nothing reserved');
      emu.state.setKeyBudget(DEMO_KEYS.lowBudget, 40);
      await account.refresh();
      assert.equal(account.snapshot.budgetRefusal, undefined, 'a budget that grew lifts it');
      const third = await rig.service.run(job);
      assert.equal(third.files.length, 1);
    });
  });
});
