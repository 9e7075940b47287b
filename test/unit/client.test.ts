// The gateway client against the emulator over real HTTP on loopback: every endpoint.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { GatewayClient } from '../../src/core/client/client';
import { ValidationError } from '../../src/core/gateway/errors';
import type { ReferenceFile } from '../../src/core/requests/requestBodies';
import { CATALOG_GROUPS } from '../../src/core/gateway/types';
import { findImageModel, IMAGE_MODELS } from '../../tools/emulator';
import { parseMultipart, multipartBoundary } from '../../tools/emulator/multipart';
import { renderImage } from '../../tools/emulator/render';
import { caught, DEMO_KEYS, gatewaySuite, localServer, MemorySink, paidRequests, SMALL, TINY_PNG, writePng } from './support/gateway';

const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The PNG the emulator renders for a small aurora-1 style request (its renderer is deterministic for a seed). */
function expectedPng(model: string, prompt: string, seed: number, index: number, referenceBytes: Buffer[] = []): Buffer {
  const digest = referenceBytes.length ? sha(referenceBytes.map((b) => sha(b)).join(',')) : '';
  return renderImage(
    { model: findImageModel(model)!, prompt, seed, width: 64, height: 64, transparent: false, referencesDigest: digest, extra: JSON.stringify(['', {}]) },
    index,
  );
}

describe('GatewayClient against the emulator', function () {
  const gw = gatewaySuite();
  const client = (key: string | null = DEMO_KEYS.unlimited) => gw.newClient(key);

  describe('account endpoints', () => {
    it('me returns the user record', async () => {
      assert.deepEqual(await client().me(), { email: 'demo@example.com', id: 42 });
    });

    it('balance without a key budget has no budget field', async () => {
      gw.emu.state.setBalance(1234.5);
      const balance = await client(DEMO_KEYS.unlimited).balance();
      assert.deepEqual(balance, { balance: 1234.5 });
    });

    it('balance with a key budget carries the budget', async () => {
      const balance = await client(DEMO_KEYS.budget).balance();
      assert.equal(balance.balance, 5000);
      assert.equal(typeof balance.budget, 'number');
      assert.equal(balance.budget, gw.emu.state.keyBudgetRub(DEMO_KEYS.budget));
      assert.ok(balance.budget! < 1000, 'the seeded history spent part of the budget');
    });

    it('an unlimited key returns only its name', async () => {
      assert.deepEqual(await client(DEMO_KEYS.unlimited).key(), { name: 'demo-unlimited' });
    });

    it('a budget key has remaining, initial and reset fields', async () => {
      const key = await client(DEMO_KEYS.budget).key();
      assert.equal(key.name, 'demo-budget');
      assert.ok(key.budget);
      assert.equal(key.budget.initial, 1000);
      assert.equal(key.budget.remaining, gw.emu.state.keyBudgetRub(DEMO_KEYS.budget));
      assert.equal(key.budget.reset_interval, 'monthly');
      assert.ok(!Number.isNaN(Date.parse(key.budget.reset_at!)), 'reset_at is an ISO date');
      assert.ok(key.budget.reset_in_seconds! > 0);
      assert.equal(key.expires_at, undefined);
    });

    it('an expiring key has expires_at and expires_in_seconds', async () => {
      const key = await client(DEMO_KEYS.expiringSoon).key();
      assert.equal(key.name, 'demo-expiring');
      assert.equal(key.budget, undefined);
      const at = Date.parse(key.expires_at!);
      assert.ok(at > Date.now() && at < Date.now() + 3 * 86_400_000);
      assert.ok(key.expires_in_seconds! > 86_400 && key.expires_in_seconds! <= 2 * 86_400);
    });

    it('stats differ per key, with null top models when a key has no usage', async () => {
      const budget = await client(DEMO_KEYS.budget).stats();
      const unlimited = await client(DEMO_KEYS.unlimited).stats();
      assert.equal(budget.month_requests, 5);
      assert.equal(budget.top_model_by_requests, 'aurora-1');
      assert.equal(budget.top_model_by_requests_value, 3);
      assert.equal(budget.top_model_by_spend, 'aurora-1');
      assert.ok(budget.month_spend > 0 && budget.avg_daily_spend > 0);
      assert.equal(unlimited.month_requests, 0);
      assert.equal(unlimited.today_spend, 0);
      assert.equal(unlimited.top_model_by_spend, null);
      assert.equal(unlimited.top_model_by_requests, null);
      assert.notDeepEqual(budget, unlimited);
    });

    it('stats count a generation of the calling key only', async () => {
      await client(DEMO_KEYS.unlimited).generate({ model: 'sketch-mini', prompt: 'stats', size: SMALL }, new MemorySink());
      const unlimited = await client(DEMO_KEYS.unlimited).stats();
      const budget = await client(DEMO_KEYS.budget).stats();
      assert.equal(unlimited.today_requests, 1);
      assert.equal(unlimited.top_model_by_requests, 'sketch-mini');
      assert.equal(budget.month_requests, 5);
    });
  });

  describe('public catalog', () => {
    it('lists all groups', async () => {
      const groups = await client().catalog();
      assert.deepEqual([...groups.keys()].sort(), [...CATALOG_GROUPS].sort());
      assert.deepEqual(
        groups.get('chat')!.map((e) => e.id),
        ['orbit-chat-8b', 'orbit-chat-70b', 'quill-mini'],
      );
      assert.equal(groups.get('images')!.length, IMAGE_MODELS.length);
    });

    it('parses the image models with every capability', async () => {
      const models = await client().imageModels();
      assert.deepEqual(
        models.map((m) => m.id),
        IMAGE_MODELS.map((m) => m.id),
      );
      for (const model of models) {
        const source = IMAGE_MODELS.find((m) => m.id === model.id)!;
        assert.deepEqual(model, { ...source }, model.id);
      }
    });

    it('works without any API key', async () => {
      const models = await client(null).imageModels();
      assert.ok(models.length > 0);
    });
  });

  describe('generation', () => {
    it('returns the exact bytes the emulator rendered, and usage', async () => {
      const sink = new MemorySink();
      const meta = await client().generate({ model: 'aurora-1', prompt: 'a red fox', n: 2, seed: 7, size: SMALL }, sink);
      assert.deepEqual(meta.images, [
        { index: 0, mediaType: 'image/png' },
        { index: 1, mediaType: 'image/png' },
      ]);
      assert.equal(meta.model, 'aurora-1');
      assert.ok(sink.images.get(0)!.equals(expectedPng('aurora-1', 'a red fox', 7, 0)));
      assert.ok(sink.images.get(1)!.equals(expectedPng('aurora-1', 'a red fox', 7, 1)));
      assert.ok(!sink.images.get(0)!.equals(sink.images.get(1)!));
      const [paid] = paidRequests(gw.emu);
      assert.equal(meta.usage!.cost_rub, paid!.chargedRub);
      assert.equal(meta.usage!.balance, gw.emu.state.balanceRub);

      const again = new MemorySink();
      await client().generate({ model: 'aurora-1', prompt: 'a red fox', n: 2, seed: 7, size: SMALL }, again);
      assert.ok(again.images.get(0)!.equals(sink.images.get(0)!));
    });

    it('sends provider parameters at the top level', async () => {
      const a = new MemorySink();
      const b = new MemorySink();
      await client().generate({ model: 'prism-2', prompt: 'p', seed: 1, size: SMALL, params: { moderation: 'low' } }, a);
      await client().generate({ model: 'prism-2', prompt: 'p', seed: 1, size: SMALL, params: { moderation: 'auto' } }, b);
      assert.equal(a.images.size, 1);
      assert.ok(!a.images.get(0)!.equals(b.images.get(0)!), 'the passthrough value reached the emulator');
    });

    it('generateWithReferences streams files as data: URLs', async () => {
      const other = expectedPng('sketch-mini', 'a reference', 2, 0);
      const file = await writePng(gw.dir, 'ref.png', other);
      const refs: ReferenceFile[] = [{ path: file, mediaType: 'image/png', size: (await stat(file)).size }];
      const sink = new MemorySink();
      await client().generateWithReferences({ model: 'aurora-1', prompt: 'edit me', seed: 3, size: SMALL }, refs, sink);
      assert.ok(sink.images.get(0)!.equals(expectedPng('aurora-1', 'edit me', 3, 0, [other])), 'the reference bytes arrived intact');
      assert.ok(!sink.images.get(0)!.equals(expectedPng('aurora-1', 'edit me', 3, 0)));
    });

    it('edit with one file equals generateWithReferences with the same file', async () => {
      const file = await writePng(gw.dir, 'one.png');
      const refs: ReferenceFile[] = [{ path: file, mediaType: 'image/png', size: TINY_PNG.length }];
      const viaEdit = new MemorySink();
      await client().edit({ model: 'aurora-1', prompt: 'same', seed: 11, size: SMALL }, refs, viaEdit);
      assert.ok(viaEdit.images.get(0)!.equals(expectedPng('aurora-1', 'same', 11, 0, [TINY_PNG])));
      assert.equal(paidRequests(gw.emu)[0]!.path, '/v1/images/edits');
    });

    it('edit with several files uses image[] and all files count', async () => {
      const a = await writePng(gw.dir, 'a.png');
      const second = expectedPng('sketch-mini', 'another picture', 1, 0);
      const b = await writePng(gw.dir, 'b.png', second);
      const refs: ReferenceFile[] = [
        { path: a, mediaType: 'image/png', size: TINY_PNG.length },
        { path: b, mediaType: 'image/png', size: second.length },
      ];
      const sink = new MemorySink();
      await client().edit({ model: 'lumen-xl', prompt: 'two', seed: 5, size: SMALL }, refs, sink);
      assert.ok(sink.images.get(0)!.equals(expectedPng('lumen-xl', 'two', 5, 0, [TINY_PNG, second])));
    });
  });

  describe('multipart field names and authorization header (local server)', () => {
    it('uses "image" for one file, "image[]" for several, and sends text fields', async () => {
      const bodies: { type: string; body: Buffer }[] = [];
      const server = await localServer((req, res, body) => {
        bodies.push({ type: String(req.headers['content-type']), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"usage":{"cost_rub":0,"balance":1}}');
      });
      try {
        const local = gw.newClient('k', { baseUrl: server.url });
        const a = await writePng(gw.dir, 'm1.png');
        const b = await writePng(gw.dir, 'm2.png');
        const ref = (p: string) => ({ path: p, mediaType: 'image/png', size: TINY_PNG.length });
        await local.edit({ model: 'aurora-1', prompt: 'x', n: 1, seed: 9 }, [ref(a)], new MemorySink());
        await local.edit({ model: 'aurora-1', prompt: 'x' }, [ref(a), ref(b)], new MemorySink());
        const names = bodies.map(({ type, body }) =>
          parseMultipart(body, multipartBoundary(type)!).map((p) => `${p.name}${p.filename !== undefined ? '(file)' : `=${p.data.toString()}`}`),
        );
        assert.deepEqual(
          names[0]!.filter((n) => n.startsWith('image')),
          ['image(file)'],
        );
        assert.ok(names[0]!.includes('seed=9') && names[0]!.includes('model=aurora-1') && names[0]!.includes('n=1'), names[0]!.join(' '));
        assert.deepEqual(
          names[1]!.filter((n) => n.startsWith('image')),
          ['image[](file)', 'image[](file)'],
        );
      } finally {
        await server.close();
      }
    });

    it('sends Authorization only to /v1/ endpoints', async () => {
      const server = await localServer((req, res) => {
        const body = req.url!.startsWith('/public/') ? '{"data":[]}' : '{"email":"e@x","id":1,"balance":1}';
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
      try {
        const local = gw.newClient('secret-key', { baseUrl: server.url });
        await local.catalog();
        await local.imageModels();
        await local.me();
        await local.balance();
        const seen = server.requests.map((r) => [r.url, r.headers.authorization ?? null]);
        assert.deepEqual(seen, [
          ['/public/gateway/models', null],
          ['/public/gateway/models/images', null],
          ['/v1/gateway/me', 'Bearer secret-key'],
          ['/v1/gateway/balance', 'Bearer secret-key'],
        ]);
      } finally {
        await server.close();
      }
    });
  });

  describe('base URL', () => {
    it('accepts a trailing slash and a /v1 suffix', async () => {
      for (const url of [`${gw.emu.url}/`, `${gw.emu.url}/v1`, `${gw.emu.url}/v1/`, `  ${gw.emu.url}  `]) {
        const c = gw.newClient(DEMO_KEYS.unlimited, { baseUrl: url });
        assert.equal(c.baseUrl, gw.emu.url, url);
        assert.equal((await c.me()).id, 42, url);
      }
    });

    it('requires https except on loopback', () => {
      const make = (baseUrl: string) => new GatewayClient({ baseUrl, getApiKey: () => 'k' });
      assert.throws(
        () => make('http://gateway.example/'),
        (e: unknown) => e instanceof ValidationError && e.field === 'baseUrl',
      );
      assert.throws(() => make('http://10.0.0.5:8080'), ValidationError);
      assert.throws(() => make('ftp://gateway.example'), ValidationError);
      assert.throws(() => make(''), ValidationError);
      assert.throws(() => make('not a url'), ValidationError);
      assert.equal(make('https://gateway.example/v1/').baseUrl, 'https://gateway.example');
      assert.equal(make('https://gateway.example/api/v1').baseUrl, 'https://gateway.example/api');
      assert.equal(make('http://localhost:8080/').baseUrl, 'http://localhost:8080');
      assert.equal(make('http://[::1]:8080').baseUrl, 'http://[::1]:8080');
    });

    it('a missing key reaches the gateway and comes back as an authentication error', async () => {
      const error = await caught(() => client(null).me());
      assert.equal((error as { kind?: string }).kind, 'authentication');
    });
  });
});
