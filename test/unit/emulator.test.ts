// Tests of the gateway emulator itself, over real HTTP on loopback: the catalog, authentication and
// the account, generation and billing. Images and validation: emulatorImages.test.ts; the admin
// endpoints and faults: emulatorFaults.test.ts; start, reset and stop: emulatorLifecycle.test.ts.
import * as assert from 'node:assert/strict';
import { type IMAGE_MODELS, findImageModel } from '../../tools/emulator/catalog';
import { DEMO_KEYS } from '../../tools/emulator/server';
import { waitFor } from './support/gateway';
import { useEmulator } from './support/emulatorUnderTest';

describe('gateway emulator', function () {
  const emu = useEmulator();
  const { get, generate, generateJson, admin, lastRequest } = emu;

  describe('catalog', () => {
    it('serves every group without authorization, in one envelope', async () => {
      const all = await get('/public/gateway/models');
      assert.equal(all.res.status, 200);
      assert.equal(all.body.object, 'list');
      for (const group of ['chat', 'images', 'videos', 'embeddings', 'speech', 'transcriptions', 'moderation']) {
        const one = await get(`/public/gateway/models/${group}`, 'ignored-key');
        assert.equal(one.res.status, 200, group);
        assert.equal(one.body.object, 'list');
        assert.ok(one.body.data.length >= 2, group);
        assert.deepEqual(all.body.data[group], one.body.data);
        for (const entry of one.body.data) assert.equal(typeof entry.id, 'string');
      }
    });

    it('answers 404 JSON for an unknown group', async () => {
      const r = await get('/public/gateway/models/music');
      assert.equal(r.res.status, 404);
      assert.equal(r.body.error.code, 'group_not_found');
      assert.ok(r.res.headers.get('x-request-id'));
    });

    it('describes at least 6 image models with every spec field and distinct capabilities', async () => {
      const { body } = await get('/public/gateway/models/images');
      const models = body.data as typeof IMAGE_MODELS;
      assert.ok(models.length >= 6);
      const fields = [
        'id',
        'provider',
        'description',
        'min_price_per_image',
        'max_price_per_image',
        'supported_resolutions',
        'supported_aspect_ratios',
        'supported_quality',
        'supported_output_formats',
        'supported_background',
        'supports_seed',
        'max_n',
        'max_input_references',
        'supports_generation',
        'supports_edit',
        'allowed_passthrough_parameters',
      ];
      for (const m of models) {
        for (const f of fields) assert.ok(f in m, `${m.id}.${f}`);
        assert.ok(m.min_price_per_image < m.max_price_per_image, m.id);
        assert.ok(!m.id.includes('/'));
      }
      assert.ok(models.some((m) => m.max_input_references === 0 && !m.supports_edit));
      assert.ok(models.some((m) => m.max_n === 1));
      assert.ok(models.some((m) => m.supported_background.includes('transparent')));
      assert.ok(models.some((m) => m.allowed_passthrough_parameters.includes('moderation')));
      assert.ok(models.some((m) => !m.supports_seed));
      assert.ok(models.some((m) => m.supports_edit && m.max_input_references >= 4 && m.max_n === 4));
      assert.ok(models.some((m) => ['1K', '2K', '4K'].every((r) => m.supported_resolutions.includes(r))));
      assert.ok(models.some((m) => !m.supports_generation && m.supports_edit));
    });
  });

  describe('authentication and account', () => {
    it('maps missing, unknown, revoked and expired keys to 401 codes', async () => {
      const cases: [string | undefined, string][] = [
        [undefined, 'missing_api_key'],
        ['nope', 'invalid_api_key'],
        [DEMO_KEYS.revoked, 'key_revoked'],
        [DEMO_KEYS.expired, 'key_expired'],
      ];
      for (const [key, code] of cases) {
        const r = await get('/v1/gateway/balance', key);
        assert.equal(r.res.status, 401, code);
        assert.equal(r.body.error.code, code);
        assert.equal(typeof r.body.error.message, 'string');
        assert.ok(r.res.headers.get('x-request-id')?.startsWith('req_'));
      }
      const unknown = emu.state.requests.find((q) => q.key === 'unknown');
      assert.ok(unknown, 'unknown key logged by name "unknown"');
      assert.ok(!JSON.stringify(emu.state.requests).includes('gw-demo'), 'raw keys never logged');
    });

    it('returns the user record', async () => {
      const r = await get('/v1/gateway/me', DEMO_KEYS.unlimited);
      assert.deepEqual(r.body, { email: 'demo@example.com', id: 42 });
    });

    it('returns key records per key', async () => {
      assert.deepEqual((await get('/v1/gateway/key', DEMO_KEYS.unlimited)).body, { name: 'demo-unlimited' });
      const budget = (await get('/v1/gateway/key', DEMO_KEYS.budget)).body;
      assert.equal(budget.budget.initial, 1000);
      assert.equal(budget.budget.reset_interval, 'monthly');
      assert.ok(budget.budget.remaining > 0 && budget.budget.remaining <= 1000);
      assert.ok(!Number.isNaN(Date.parse(budget.budget.reset_at)));
      assert.ok(budget.budget.reset_in_seconds > 0);
      assert.equal(budget.expires_at, undefined);
      const expiring = (await get('/v1/gateway/key', DEMO_KEYS.expiringSoon)).body;
      assert.equal(expiring.budget, undefined);
      assert.ok(Math.abs(expiring.expires_in_seconds - 2 * 86400) < 60);
      assert.ok(Math.abs(Date.parse(expiring.expires_at) - Date.now() - 2 * 86400_000) < 60_000);
      const low = (await get('/v1/gateway/key', DEMO_KEYS.lowBudget)).body;
      assert.deepEqual([low.budget.remaining, low.budget.initial, low.budget.reset_interval], [5, 50, 'daily']);
    });

    it('includes budget in the balance record only for keys with a budget', async () => {
      assert.deepEqual((await get('/v1/gateway/balance', DEMO_KEYS.unlimited)).body, { balance: 5000 });
      assert.deepEqual((await get('/v1/gateway/balance', DEMO_KEYS.lowBudget)).body, { balance: 5000, budget: 5 });
    });

    it('reports stats per key: seeded history, empty keys with null top models, updates after a charge', async () => {
      const seeded = (await get('/v1/gateway/stats/summary', DEMO_KEYS.budget)).body;
      assert.ok(seeded.month_requests > 0 && seeded.month_spend > 0);
      assert.equal(seeded.avg_daily_spend, Math.round((seeded.month_spend / 30) * 100) / 100);
      assert.equal(typeof seeded.top_model_by_spend, 'string');
      const empty = (await get('/v1/gateway/stats/summary', DEMO_KEYS.unlimited)).body;
      assert.deepEqual(empty, {
        today_spend: 0,
        today_requests: 0,
        month_spend: 0,
        month_requests: 0,
        avg_daily_spend: 0,
        top_model_by_spend: null,
        top_model_by_spend_value: null,
        top_model_by_requests: null,
        top_model_by_requests_value: null,
      });
      const gen = await generateJson({ model: 'sketch-mini', prompt: 'a fox', n: 2 });
      const after = (await get('/v1/gateway/stats/summary', DEMO_KEYS.unlimited)).body;
      assert.equal(after.today_requests, 1);
      assert.equal(after.today_spend, gen.body.usage.cost_rub);
      assert.equal(after.top_model_by_spend, 'sketch-mini');
      assert.equal(after.top_model_by_requests_value, 1);
    });

    it('accountGapMs: account figures are read when the request arrives and sent later, without a charge made meanwhile', async () => {
      const set = await admin('POST', '/state', { accountGapMs: 300 });
      assert.equal(set.res.status, 200);
      const balanceRequests = () => emu.state.requests.filter((r) => r.path === '/v1/gateway/balance').length;
      const started = Date.now();
      const slow = get('/v1/gateway/balance', DEMO_KEYS.unlimited);
      await waitFor(() => balanceRequests() === 1);
      const gen = await generateJson({ model: 'sketch-mini', prompt: 'meanwhile' });
      assert.equal(gen.res.status, 200);
      assert.deepEqual((await slow).body, { balance: 5000 }, 'the figure from before the charge');
      assert.ok(Date.now() - started >= 290);
      assert.equal((await admin('POST', '/state', { accountGapMs: -1 })).res.status, 400);
      emu.state.reset();
      assert.equal(emu.state.accountGapMs, 0, 'reset ends it');
    });

    it('answers 404 for unknown /v1/ routes and 405 for wrong methods', async () => {
      assert.equal((await get('/v1/nothing', DEMO_KEYS.unlimited)).res.status, 404);
      assert.equal((await get('/v1/images/generations', DEMO_KEYS.unlimited)).res.status, 405);
    });
  });

  describe('generation and billing', () => {
    it('returns images with usage, and charges between min and max per image', async () => {
      const model = findImageModel('aurora-1')!;
      const before = emu.state.balanceRub;
      const budgetBefore = emu.state.keyBudgetRub(DEMO_KEYS.budget)!;
      const { res, text } = await generate({ model: 'aurora-1', prompt: 'a lighthouse', n: 3 }, DEMO_KEYS.budget);
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('x-request-id'));
      assert.match(text, /^\{"created":\d+,"model":"aurora-1","data":\[\{"media_type":"image\/png","b64_json":"/);
      const body = JSON.parse(text);
      assert.equal(body.data.length, 3);
      const cost = body.usage.cost_rub;
      assert.ok(cost >= model.min_price_per_image * 3 - 1e-9 && cost <= model.max_price_per_image * 3 + 1e-9);
      assert.equal(Math.round(cost * 100), cost * 100, 'whole kopecks');
      assert.equal(body.usage.balance, Math.round((before - cost) * 100) / 100);
      assert.equal(emu.state.balanceRub, body.usage.balance);
      assert.equal(emu.state.keyBudgetRub(DEMO_KEYS.budget), Math.round((budgetBefore - cost) * 100) / 100);
      const rec = lastRequest();
      assert.deepEqual([rec.paid, rec.status, rec.reservedRub, rec.chargedRub, rec.key], [true, 200, 12, cost, 'demo-budget']);
      assert.equal(emu.state.totalReservations, 1);
      assert.equal(emu.state.totalCharges, 1);
      // Same prompt: same price.
      const again = await generateJson({ model: 'aurora-1', prompt: 'a lighthouse', n: 3 }, DEMO_KEYS.budget);
      assert.equal(again.body.usage.cost_rub, cost);
    });

    it('refuses with 402 when the balance cannot cover the reservation, reserving nothing', async () => {
      emu.state.setBalance(7.99); // aurora-1 reserves 4.00 x 2 = 8.00
      const r = await generateJson({ model: 'aurora-1', prompt: 'x', n: 2 });
      assert.equal(r.res.status, 402);
      assert.equal(r.body.error.code, 'insufficient_balance');
      assert.match(r.body.error.message, /balance/);
      assert.match(r.body.error.message, /8\.00/);
      assert.equal(emu.state.balanceRub, 7.99);
      assert.equal(emu.state.totalReservations, 0);
      assert.deepEqual([lastRequest().reservedRub, lastRequest().chargedRub], [0, 0]);
      const ok = await generateJson({ model: 'aurora-1', prompt: 'x', n: 1 });
      assert.equal(ok.res.status, 200);
    });

    it('refuses with 402 insufficient_budget on the key budget', async () => {
      const r = await generateJson({ model: 'prism-2', prompt: 'x' }, DEMO_KEYS.lowBudget);
      assert.equal(r.res.status, 402);
      assert.equal(r.body.error.code, 'insufficient_budget');
      assert.match(r.body.error.message, /budget/);
      assert.equal(emu.state.keyBudgetRub(DEMO_KEYS.lowBudget), 5);
      assert.equal(emu.state.balanceRub, 5000);
      const cheap = await generateJson({ model: 'sketch-mini', prompt: 'x' }, DEMO_KEYS.lowBudget);
      assert.equal(cheap.res.status, 200);
      assert.equal(emu.state.keyBudgetRub(DEMO_KEYS.lowBudget), Math.round((5 - cheap.body.usage.cost_rub) * 100) / 100);
    });

    it('takes a top-up from outside while a request holds its reservation: both stay counted', async () => {
      const before = emu.state.balanceRub;
      const answer = generateJson({ model: 'aurora-1', prompt: 'held', n: 2 }, DEMO_KEYS.unlimited, {
        'x-emulator-fault': 'latency',
        'x-emulator-latency-ms': '300',
      });
      for (let i = 0; i < 500 && !(lastRequest()?.reservedRub > 0); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(lastRequest().reservedRub, 8);
      assert.equal(emu.state.topUp(10.5), before - 8 + 10.5);
      const { body } = await answer;
      assert.equal(emu.state.balanceRub, Math.round((before + 10.5 - body.usage.cost_rub) * 100) / 100);
      assert.equal(body.usage.balance, emu.state.balanceRub);
    });

    it('keeps the sums exact over many requests (no float drift)', async () => {
      let spent = 0;
      for (let i = 0; i < 15; i++) spent += Math.round((await generateJson({ model: 'sketch-mini', prompt: `p${i}` })).body.usage.cost_rub * 100);
      assert.equal(emu.state.balanceRub, (500_000 - spent) / 100);
      const stats = (await get('/v1/gateway/stats/summary', DEMO_KEYS.unlimited)).body;
      assert.equal(stats.month_spend, spent / 100);
      assert.equal(stats.today_requests, 15);
    });
  });
});
