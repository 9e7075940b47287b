// The catalog cache: served at once from the store, refreshed when stale, one fetch for concurrent callers.
import * as assert from 'node:assert/strict';
import { CatalogCache, type CatalogSnapshot } from '../../src/core/gateway/catalogCache';
import { toImageModel } from '../../src/core/gateway/catalog';
import type { ImageModel } from '../../src/core/gateway/types';

const model = (id: string): ImageModel => toImageModel({ id, max_price_per_image: 1 });

function rig(initial?: CatalogSnapshot, maxAgeMs = 1000) {
  let clock = 10_000;
  const saved: CatalogSnapshot[] = [];
  const fetches: { resolve: (m: ImageModel[]) => void; reject: (e: Error) => void }[] = [];
  const cache = new CatalogCache(
    () => new Promise<ImageModel[]>((resolve, reject) => fetches.push({ resolve, reject })),
    { load: () => initial, save: (s) => void saved.push(s) },
    maxAgeMs,
    () => clock,
  );
  return { cache, saved, fetches, advance: (ms: number) => (clock += ms), now: () => clock };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('CatalogCache', () => {
  it('serves the stored snapshot without fetching while fresh', async () => {
    const r = rig({ models: [model('a')], fetchedAt: 9_500 });
    assert.deepEqual(
      r.cache.peek().map((m) => m.id),
      ['a'],
    );
    assert.deepEqual(
      (await r.cache.get()).map((m) => m.id),
      ['a'],
    );
    assert.equal(r.fetches.length, 0);
    assert.equal(r.cache.fetchedAt, 9_500);
  });

  it('fetches when there is nothing cached, and saves', async () => {
    const r = rig();
    assert.deepEqual(r.cache.peek(), []);
    const pending = r.cache.get();
    assert.equal(r.fetches.length, 1);
    r.fetches[0]!.resolve([model('b')]);
    assert.deepEqual(
      (await pending).map((m) => m.id),
      ['b'],
    );
    assert.deepEqual(
      r.saved.map((s) => [s.fetchedAt, s.models.length]),
      [[r.now(), 1]],
    );
  });

  it('an empty cached list counts as nothing cached', async () => {
    const r = rig({ models: [], fetchedAt: 10_000 });
    const pending = r.cache.get();
    assert.equal(r.fetches.length, 1);
    r.fetches[0]!.resolve([model('c')]);
    assert.equal((await pending).length, 1);
  });

  it('when stale: returns the cache at once and refreshes in the background', async () => {
    const r = rig({ models: [model('old')], fetchedAt: 10_000 });
    r.advance(1001);
    const changes: string[][] = [];
    r.cache.onDidChange((models) => changes.push(models.map((m) => m.id)));
    assert.deepEqual(
      (await r.cache.get()).map((m) => m.id),
      ['old'],
    );
    assert.equal(r.fetches.length, 1, 'a background refresh started');
    r.fetches[0]!.resolve([model('new')]);
    await tick();
    assert.deepEqual(
      r.cache.peek().map((m) => m.id),
      ['new'],
    );
    assert.deepEqual(changes, [['new']]);
    assert.equal(r.cache.fetchedAt, r.now());
  });

  it('not stale at exactly maxAge', async () => {
    const r = rig({ models: [model('x')], fetchedAt: 10_000 });
    r.advance(1000);
    await r.cache.get();
    assert.equal(r.fetches.length, 0);
  });

  it('concurrent refreshes share one fetch', async () => {
    const r = rig();
    const all = [r.cache.get(), r.cache.refresh(), r.cache.get(), r.cache.refresh()];
    assert.equal(r.fetches.length, 1);
    r.fetches[0]!.resolve([model('d')]);
    const results = await Promise.all(all);
    assert.ok(results.every((m) => m === results[0]));
    void r.cache.refresh(); // not awaited on purpose: its fetch is never answered, only its start is counted
    assert.equal(r.fetches.length, 2, 'a later refresh fetches again');
  });

  it('a failed refresh keeps the cache and a later one can succeed', async () => {
    const r = rig({ models: [model('keep')], fetchedAt: 10_000 });
    const failing = r.cache.refresh();
    r.fetches[0]!.reject(new Error('offline'));
    await assert.rejects(failing, /offline/);
    assert.deepEqual(
      r.cache.peek().map((m) => m.id),
      ['keep'],
    );
    const next = r.cache.refresh();
    assert.equal(r.fetches.length, 2);
    r.fetches[1]!.resolve([model('fresh')]);
    assert.equal((await next)[0]!.id, 'fresh');
  });

  it('a stale background refresh that fails does not reject get()', async () => {
    const r = rig({ models: [model('old')], fetchedAt: 0 });
    assert.equal((await r.cache.get())[0]!.id, 'old');
    r.fetches[0]!.reject(new Error('boom'));
    await tick();
    assert.equal(r.cache.peek()[0]!.id, 'old');
  });

  it('listeners can be disposed', async () => {
    const r = rig();
    let calls = 0;
    const sub = r.cache.onDidChange(() => calls++);
    sub.dispose();
    const p = r.cache.refresh();
    r.fetches[0]!.resolve([model('z')]);
    await p;
    assert.equal(calls, 0);
  });

  describe('keyed by base URL', () => {
    function keyed(initial?: CatalogSnapshot) {
      let baseUrl = 'https://a.example';
      const fetches: { from: string; resolve: (m: ImageModel[]) => void }[] = [];
      const saved: CatalogSnapshot[] = [];
      const cache = new CatalogCache(
        () => new Promise<ImageModel[]>((resolve) => fetches.push({ from: baseUrl, resolve })),
        { load: () => initial, save: (s) => void saved.push(s) },
        60_000,
        () => 10_000,
        () => baseUrl,
      );
      return { cache, fetches, saved, setBaseUrl: (url: string) => (baseUrl = url) };
    }

    it('a cache of another base URL (or of none) is not used: a fresh fetch', async () => {
      const r = keyed({ models: [model('old')], fetchedAt: 9_999, baseUrl: 'https://b.example' });
      assert.deepEqual(r.cache.peek(), []);
      const pending = r.cache.get();
      assert.equal(r.fetches.length, 1);
      r.fetches[0]!.resolve([model('new')]);
      assert.deepEqual(
        (await pending).map((m) => m.id),
        ['new'],
      );
      assert.equal(r.saved[0]!.baseUrl, 'https://a.example');
      const legacy = keyed({ models: [model('old')], fetchedAt: 9_999 });
      assert.deepEqual(legacy.cache.peek(), [], 'a snapshot without base URL is not trusted');
    });

    it('after a base URL change the old models are gone, and a fetch of the old URL in flight is not cached', async () => {
      const r = keyed({ models: [model('a1')], fetchedAt: 9_999, baseUrl: 'https://a.example' });
      assert.deepEqual(
        r.cache.peek().map((m) => m.id),
        ['a1'],
      );
      const old = r.cache.refresh();
      r.setBaseUrl('https://b.example');
      assert.deepEqual(r.cache.peek(), [], 'another gateway: nothing cached');
      const fresh = r.cache.refresh();
      assert.equal(r.fetches.length, 2, 'the new base URL does not share the old fetch');
      r.fetches[0]!.resolve([model('a2')]);
      await old;
      assert.deepEqual(r.cache.peek(), [], "the old gateway's answer is not cached for the new one");
      r.fetches[1]!.resolve([model('b1')]);
      assert.deepEqual(
        (await fresh).map((m) => m.id),
        ['b1'],
      );
      assert.deepEqual(
        r.cache.peek().map((m) => m.id),
        ['b1'],
      );
    });
  });
});
