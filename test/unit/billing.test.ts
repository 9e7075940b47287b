// Billing as our code does it: the estimate (reservation and expected range) from the catalog, the
// usage passed on as the gateway reported it, the account model's arithmetic after a charge, local
// refusals (CannotAffordError) that send nothing, the gateway's refusals typed and never resent,
// and the confirmation threshold. The emulator's own arithmetic (what it charges, its balance) is
// tested in emulator.test.ts, not here.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { cannotAfford, estimateCost, toKopecks } from '../../src/core/money/cost';
import { CannotAffordError, InsufficientFundsError } from '../../src/core/gateway/errors';
import { AccountModel } from '../../src/account/accountModel';
import type { ImageJob } from '../../src/jobs/jobTypes';
import { caught, DEMO_KEYS, gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';

describe('billing through the balance', function () {
  const gw = gatewaySuite({ models: true });
  const clientFor = (key: string) => gw.newClient(key);
  const job = (model: string, n: number, prompt = 'billing test'): ImageJob => ({
    request: { model, prompt, n, size: SMALL },
    output: { directory: path.join(gw.dir, 'out'), pattern: '{model}-{index}' },
  });

  for (const [model, n] of [
    ['aurora-1', 3],
    ['prism-2', 1],
    ['mosaic-edit', 2],
  ] as const) {
    it(`${model} × ${n}: our estimate from the catalog, the usage as the gateway reported it, the account model's own arithmetic`, async () => {
      const client = clientFor(DEMO_KEYS.budget);
      const account = new AccountModel(async () => client);
      await account.refresh();
      const budgetBefore = account.snapshot.budget!;
      assert.ok(budgetBefore !== undefined, 'the budget key has a budget');

      const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'), {
        funds: () => ({ balance: account.snapshot.balance, budget: account.snapshot.budget }),
        applyUsage: (usage) => account.applyUsage(usage),
      });
      const result = await rig.service.run(job(model, n, `billing ${model}`));
      assert.equal(result.files.length, n);

      // The estimate is ours: the reservation is max price × n, the expected range min..max × n, from
      // the catalog as the client read it (whatever prices the gateway lists).
      const listed = gw.models.find((m) => m.id === model)!;
      assert.equal(toKopecks(result.estimate.reservation), toKopecks(listed.max_price_per_image) * n, 'reservation = max price × n');
      assert.equal(toKopecks(result.estimate.expectedMin), toKopecks(listed.min_price_per_image) * n);
      assert.equal(toKopecks(result.estimate.expectedMax), toKopecks(listed.max_price_per_image) * n);

      // The usage is the gateway's, passed on unchanged: what it charged and the balance it reported.
      const [paid] = paidRequests(gw.emu);
      assert.equal(paidRequests(gw.emu).length, 1, 'sent once');
      const cost = result.usage!.cost_rub!;
      assert.equal(cost, paid!.chargedRub, 'usage.cost_rub is what the gateway charged');

      // The account model followed from the answer alone, without a request: the balance the gateway
      // reported, and the budget lowered by the cost in kopecks (no float drift).
      const requestsBefore = gw.emu.state.requests.length;
      assert.equal(account.snapshot.balance, result.usage!.balance);
      assert.equal(toKopecks(account.snapshot.budget!), toKopecks(budgetBefore) - toKopecks(cost), 'budget − cost');
      assert.equal(gw.emu.state.requests.length, requestsBefore, 'no request to follow the charge');
      // ...and agrees with what the gateway says when asked afterwards.
      assert.equal((await client.balance()).balance, account.snapshot.balance);
      assert.equal((await client.key()).budget!.remaining, account.snapshot.budget);
      account.dispose();
    });
  }

  it('usage with only a cost (no balance): the budget follows in kopecks, the balance is left for the reconcile', async () => {
    let now = 1_000;
    // A fixed account, not the emulator: only the model's arithmetic is under test here.
    const fixed = {
      me: async () => ({ email: 'a@example.org', id: 1 }),
      balance: async () => ({ balance: 100.1, budget: 0.3 }),
      key: async () => ({ name: 'k', budget: { remaining: 0.3, initial: 1 } }),
      stats: async () => ({ today_spend: 0, today_requests: 0, month_spend: 0, month_requests: 0, avg_daily_spend: 0 }),
    };
    const account = new AccountModel(
      async () => fixed,
      () => now,
    );
    await account.refresh();
    now = 2_000;
    account.applyUsage({ cost_rub: 0.1 });
    assert.equal(account.snapshot.budget, 0.2, 'kopecks, not 0.19999999999999998');
    assert.equal(account.snapshot.balance, 100.1, 'unknown balance after: the old figure stays');
    assert.equal(account.snapshot.updatedAt, 1_000, 'and is not marked fresh');
    account.applyUsage({ balance: 99.9 });
    assert.equal(account.snapshot.balance, 99.9);
    assert.equal(account.snapshot.budget, 0.2, 'no cost: the budget is not touched');
    assert.equal(account.snapshot.updatedAt, 2_000);
    account.dispose();
  });

  describe('refused by the gateway (402): nothing charged', () => {
    it('balance below the reservation', async () => {
      gw.emu.state.setBalance(10);
      const client = clientFor(DEMO_KEYS.unlimited);
      const rig = newService(client, gw.models, path.join(gw.dir, 'recovery')); // funds unknown: the gateway decides
      const error = await caught(() => rig.service.run(job('lumen-xl', 1)));
      assert.ok(error instanceof InsufficientFundsError, String(error));
      assert.equal(error.scope, 'balance');
      assert.equal(error.outcomeUnknown, false, 'a refusal proves nothing was charged');
      assert.equal(paidRequests(gw.emu).length, 1, 'sent once, never resent');
    });

    it('key budget below the reservation', async () => {
      const client = clientFor(DEMO_KEYS.lowBudget);
      const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'));
      const error = await caught(() => rig.service.run(job('aurora-1', 2)));
      assert.ok(error instanceof InsufficientFundsError, String(error));
      assert.equal(error.scope, 'budget');
      assert.equal(error.outcomeUnknown, false);
      assert.equal(paidRequests(gw.emu).length, 1, 'sent once, never resent');
    });

    it('exactly enough balance is accepted locally', async () => {
      const client = clientFor(DEMO_KEYS.unlimited);
      const reservation = estimateCost(
        gw.models.find((m) => m.id === 'aurora-1')!,
        2,
      ).reservation;
      gw.emu.state.setBalance(reservation);
      const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'), { funds: () => ({ balance: reservation }) });
      const result = await rig.service.run(job('aurora-1', 2));
      assert.equal(result.files.length, 2);
      assert.equal(paidRequests(gw.emu).length, 1);
    });
  });

  describe('refused locally (CannotAffordError): zero requests', () => {
    const cases: [string, { balance?: number; budget?: number; budgetRefusedByGateway?: boolean }, string, number, 'balance' | 'budget'][] = [
      ['balance', { balance: 7.99 }, 'aurora-1', 2, 'balance'],
      ['budget, after the gateway itself refused for the budget', { balance: 5000, budget: 5, budgetRefusedByGateway: true }, 'lumen-xl', 1, 'budget'],
      ['balance checked before budget', { balance: 1, budget: 1 }, 'prism-2', 1, 'balance'],
    ];
    for (const [name, funds, model, n, scope] of cases) {
      it(name, async () => {
        const client = clientFor(DEMO_KEYS.budget);
        const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'), { funds: () => funds, locale: 'ru' });
        const error = await caught(() => rig.service.run(job(model, n)));
        assert.ok(error instanceof CannotAffordError, String(error));
        assert.equal(error.scope, scope);
        assert.equal(
          error.needed,
          estimateCost(
            gw.models.find((m) => m.id === model)!,
            n,
          ).reservation,
        );
        assert.equal(error.available, scope === 'balance' ? funds.balance : funds.budget);
        assert.match(error.message, /₽/);
        assert.equal(error.message, cannotAfford({ ok: false, scope, needed: error.needed, available: error.available }, 1, 'ru').message, 'the one refusal');
        assert.equal(gw.emu.state.requests.length, 0, 'nothing sent at all');
        assert.equal(rig.confirms, 0, 'not even asked');
      });
    }
  });

  it('a budget that looks short only warns: sent, and the gateway decides (it had reset the budget)', async () => {
    const client = clientFor(DEMO_KEYS.lowBudget);
    gw.emu.state.setForms(['budget-reset']);
    try {
      const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'), { funds: () => ({ balance: 5000, budget: 5 }), locale: 'en' });
      const result = await rig.service.run(job('lumen-xl', 1));
      assert.equal(result.files.length, 1);
      assert.equal(paidRequests(gw.emu).length, 1);
      assert.equal(result.notes?.length, 1);
      const reservation = estimateCost(
        gw.models.find((m) => m.id === 'lumen-xl')!,
        1,
      ).reservation.toFixed(2);
      assert.match(
        result.notes[0]!,
        new RegExp(`budget \\(.*5\\.00\\) looks lower than the reservation \\(.*${reservation.replace('.', '\\.')}\\); sent anyway`),
      );
      assert.ok(
        rig.events.some((e) => e.type === 'notice' && e.message === result.notes![0]),
        'told as a notice',
      );
    } finally {
      gw.emu.state.setForms([]);
    }
  });

  it('confirmation above the threshold: declining sends nothing', async () => {
    const client = clientFor(DEMO_KEYS.unlimited);
    const reservation = estimateCost(
      gw.models.find((m) => m.id === 'aurora-1')!,
      2,
    ).reservation;
    let asked: number | undefined;
    const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'), {
      confirmAbove: () => reservation - 0.01,
      confirm: async (info) => {
        asked = info.estimate.reservation;
        return false;
      },
    });
    const error = await caught(() => rig.service.run(job('aurora-1', 2)));
    assert.equal((error as { kind?: string }).kind, 'cancelled');
    assert.equal(asked, reservation);
    assert.equal(gw.emu.state.requests.length, 0);
    const below = newService(client, gw.models, path.join(gw.dir, 'recovery'), { confirmAbove: () => reservation });
    await below.service.run(job('aurora-1', 2));
    assert.equal(below.confirms, 0, 'a reservation equal to the threshold is not asked');
  });
});
