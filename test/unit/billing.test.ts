// The billing sequence seen through the balance: reservation, charge within the price range, balance and
// key budget after; refusals by the gateway (402) and locally (CannotAffordError) charge nothing.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { GatewayClient } from '../../src/core/client';
import { estimateCost, toKopecks } from '../../src/core/cost';
import { CannotAffordError, InsufficientFundsError } from '../../src/core/errors';
import type { ImageModel } from '../../src/core/types';
import { AccountModel } from '../../src/account/accountModel';
import type { ImageJob } from '../../src/jobs/imageJobs';
import { IMAGE_MODELS } from '../emulator';
import { caught, DEMO_KEYS, newClient, newService, paidRequests, removeDir, type RunningEmulator, SMALL, startEmulator, tempDir } from './support/gateway';

describe('billing through the balance', function () {
  let emu: RunningEmulator;
  let dir: string;
  let models: ImageModel[];
  const clients: GatewayClient[] = [];
  const clientFor = (key: string) => {
    const c = newClient(emu, key);
    clients.push(c);
    return c;
  };
  const job = (model: string, n: number, prompt = 'billing test'): ImageJob => ({
    request: { model, prompt, n, size: SMALL },
    output: { directory: path.join(dir, 'out'), pattern: '{model}-{index}' },
  });

  before(async () => {
    emu = await startEmulator();
    dir = await tempDir();
    models = await clientFor(DEMO_KEYS.unlimited).imageModels();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await emu.close();
    await removeDir(dir);
  });
  beforeEach(() => emu.state.reset());

  for (const [model, n] of [['aurora-1', 3], ['prism-2', 1], ['mosaic-edit', 2]] as const) {
    it(`${model} × ${n}: reserve max × n, charge cost_rub within min..max × n, balance and budget follow`, async () => {
      const client = clientFor(DEMO_KEYS.budget);
      const account = new AccountModel(async () => client);
      await account.refresh();
      const balanceBefore = (await client.balance()).balance;
      const budgetBefore = (await client.key()).budget!.remaining;
      assert.equal(account.snapshot.balance, balanceBefore);
      assert.equal(account.snapshot.budget, budgetBefore);

      const rig = newService(client, models, path.join(dir, 'recovery'), {
        funds: () => ({ balance: account.snapshot.balance, budget: account.snapshot.budget }),
        applyUsage: (usage) => account.applyUsage(usage),
      });
      const result = await rig.service.run(job(model, n, `billing ${model}`));
      const spec = IMAGE_MODELS.find((m) => m.id === model)!;
      const [paid] = paidRequests(emu);
      assert.equal(paidRequests(emu).length, 1);
      assert.equal(toKopecks(paid.reservedRub), toKopecks(spec.max_price_per_image) * n, 'reservation = max price × n');
      assert.equal(result.estimate.reservation, paid.reservedRub, 'the estimate names the same reservation');
      const cost = result.usage!.cost_rub!;
      assert.equal(cost, paid.chargedRub);
      assert.ok(toKopecks(cost) >= toKopecks(spec.min_price_per_image) * n && toKopecks(cost) <= toKopecks(spec.max_price_per_image) * n, `cost ${cost}`);
      assert.equal(result.files.length, n);

      const balanceAfter = (await client.balance()).balance;
      const budgetAfter = (await client.key()).budget!.remaining;
      assert.equal(toKopecks(balanceAfter), toKopecks(balanceBefore) - toKopecks(cost), 'balance after = before − cost');
      assert.equal(toKopecks(budgetAfter), toKopecks(budgetBefore) - toKopecks(cost), 'key budget decreased by the cost');
      assert.equal(result.usage!.balance, balanceAfter, 'usage.balance is the balance after the charge');

      // The account model followed from the answer alone, without a request.
      const requestsBefore = emu.state.requests.length;
      assert.equal(account.snapshot.balance, balanceAfter);
      assert.equal(account.snapshot.budget, budgetAfter);
      assert.equal(emu.state.requests.length, requestsBefore);
      account.dispose();
    });
  }

  it('the budget key statistics count the new charge', async () => {
    const client = clientFor(DEMO_KEYS.budget);
    const before = await client.stats();
    const rig = newService(client, models, path.join(dir, 'recovery'));
    const result = await rig.service.run(job('sketch-mini', 1, 'stats after'));
    const after = await client.stats();
    assert.equal(after.today_requests, before.today_requests + 1);
    assert.equal(toKopecks(after.today_spend), toKopecks(before.today_spend) + toKopecks(result.usage!.cost_rub!));
  });

  describe('refused by the gateway (402): nothing charged', () => {
    it('balance below the reservation', async () => {
      emu.state.setBalance(10);
      const client = clientFor(DEMO_KEYS.unlimited);
      const rig = newService(client, models, path.join(dir, 'recovery')); // funds unknown: the gateway decides
      const error = await caught(() => rig.service.run(job('lumen-xl', 1)));
      assert.ok(error instanceof InsufficientFundsError, String(error));
      assert.equal(error.scope, 'balance');
      assert.equal(error.outcomeUnknown, false);
      assert.equal((await client.balance()).balance, 10);
      assert.equal(emu.state.totalCharges, 0);
      assert.equal(emu.state.totalReservations, 0);
      assert.equal(paidRequests(emu).length, 1, 'sent once, never resent');
    });

    it('key budget below the reservation', async () => {
      const client = clientFor(DEMO_KEYS.lowBudget);
      const rig = newService(client, models, path.join(dir, 'recovery'));
      const error = await caught(() => rig.service.run(job('aurora-1', 2)));
      assert.ok(error instanceof InsufficientFundsError, String(error));
      assert.equal(error.scope, 'budget');
      const balance = await client.balance();
      assert.deepEqual(balance, { balance: 5000, budget: 5 });
      assert.equal(emu.state.totalCharges, 0);
    });

    it('exactly enough balance is accepted', async () => {
      emu.state.setBalance(8);
      const client = clientFor(DEMO_KEYS.unlimited);
      const rig = newService(client, models, path.join(dir, 'recovery'), { funds: () => ({ balance: 8 }) });
      const result = await rig.service.run(job('aurora-1', 2));
      assert.equal(result.files.length, 2);
      assert.equal(toKopecks((await client.balance()).balance), 800 - toKopecks(result.usage!.cost_rub!));
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
        const rig = newService(client, models, path.join(dir, 'recovery'), { funds: () => funds, locale: 'ru' });
        const error = await caught(() => rig.service.run(job(model, n)));
        assert.ok(error instanceof CannotAffordError, String(error));
        assert.equal(error.scope, scope);
        assert.equal(error.needed, estimateCost(models.find((m) => m.id === model)!, n).reservation);
        assert.equal(error.available, scope === 'balance' ? funds.balance : funds.budget);
        assert.match(error.message, /₽/);
        assert.equal(emu.state.requests.length, 0, 'nothing sent at all');
        assert.equal(rig.confirms, 0, 'not even asked');
      });
    }
  });

  it('a budget that looks short only warns: sent, and the gateway decides (it had reset the budget)', async () => {
    const client = clientFor(DEMO_KEYS.lowBudget);
    emu.state.setForms(['budget-reset']);
    try {
      const rig = newService(client, models, path.join(dir, 'recovery'), { funds: () => ({ balance: 5000, budget: 5 }), locale: 'en' });
      const result = await rig.service.run(job('lumen-xl', 1));
      assert.equal(result.files.length, 1);
      assert.equal(paidRequests(emu).length, 1);
      assert.equal(result.notes?.length, 1);
      assert.match(result.notes[0], /budget \(.*5\.00\) looks lower than the reservation \(.*12\.50\); sent anyway/);
      assert.ok(rig.events.some((e) => e.type === 'notice' && e.message === result.notes![0]), 'told as a notice');
    } finally {
      emu.state.setForms([]);
    }
  });

  it('confirmation above the threshold: declining sends nothing', async () => {
    const client = clientFor(DEMO_KEYS.unlimited);
    let asked: number | undefined;
    const rig = newService(client, models, path.join(dir, 'recovery'), {
      confirmAbove: () => 5,
      confirm: async (info) => {
        asked = info.estimate.reservation;
        return false;
      },
    });
    const error = await caught(() => rig.service.run(job('aurora-1', 2)));
    assert.equal((error as { kind?: string }).kind, 'cancelled');
    assert.equal(asked, 8);
    assert.equal(emu.state.requests.length, 0);
    const below = newService(client, models, path.join(dir, 'recovery'), { confirmAbove: () => 8 });
    await below.service.run(job('aurora-1', 2));
    assert.equal(below.confirms, 0, 'a reservation equal to the threshold is not asked');
  });
});
