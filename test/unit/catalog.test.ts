// Catalog normalisation: every plausible envelope and id field, directly and through the client.
import * as assert from 'node:assert/strict';
import type { GatewayClient } from '../../src/core/client/client';
import { canEdit, entryId, extractEntries, extractGroups, parseImageModels, toImageModel } from '../../src/core/gateway/catalog';
import { localServer, type LocalServer, newClient } from './support/gateway';

const A = {
  id: 'aurora-1',
  provider: 'northlight',
  min_price_per_image: 2.5,
  max_price_per_image: 4,
  max_n: 4,
  max_input_references: 1,
  supported_resolutions: ['1K'],
};
const B = { id: 'lumen-xl', provider: 'lumenworks', min_price_per_image: 6, max_price_per_image: 12.5, max_n: 2, max_input_references: 0 };
const CHAT = { id: 'orbit-chat', provider: 'orbit', context_length: 1000 };
const without = (entry: Record<string, unknown>, field: string) => Object.fromEntries(Object.entries(entry).filter(([k]) => k !== field));

/** Image envelopes: each must give exactly the ids aurora-1 and lumen-xl. */
const IMAGE_ENVELOPES: [string, unknown][] = [
  ['bare array', [A, B]],
  ['{data: []}', { data: [A, B] }],
  ['{models: []}', { models: [A, B] }],
  ["{object:'list', data: []}", { object: 'list', data: [A, B] }],
  ['{images: []}', { images: [A, B] }],
  ['{data: {images: []}}', { data: { images: [A, B], chat: [CHAT] } }],
  ['{groups: {...}}', { groups: { images: [A, B], chat: [CHAT] } }],
  ['{categories: {...}}', { categories: { images: [A, B] } }],
  [
    'list of {group, models}',
    [
      { group: 'chat', models: [CHAT] },
      { group: 'images', models: [A, B] },
    ],
  ],
  [
    'list of {category, data}',
    {
      data: [
        { category: 'images', data: [A, B] },
        { category: 'chat', data: [CHAT] },
      ],
    },
  ],
  [
    'flat list with category fields',
    [
      { ...A, category: 'images' },
      { ...CHAT, category: 'chat' },
      { ...B, category: 'images' },
    ],
  ],
  [
    'flat list with group fields under data',
    {
      data: [
        { ...CHAT, group: 'chat' },
        { ...A, group: 'images' },
        { ...B, group: 'images' },
      ],
    },
  ],
  ['map id -> entry', { 'aurora-1': without(A, 'id'), 'lumen-xl': without(B, 'id') }],
  ['map id -> entry under images', { images: { 'aurora-1': without(A, 'id'), 'lumen-xl': without(B, 'id') } }],
  [
    'id field named model',
    [
      { ...without(A, 'id'), model: 'aurora-1' },
      { ...without(B, 'id'), model: 'lumen-xl' },
    ],
  ],
  [
    'id field named model_id',
    [
      { ...without(A, 'id'), model_id: 'aurora-1' },
      { ...without(B, 'id'), model_id: 'lumen-xl' },
    ],
  ],
  [
    'id field named name',
    [
      { ...without(A, 'id'), name: 'aurora-1' },
      { ...without(B, 'id'), name: 'lumen-xl' },
    ],
  ],
  [
    'id field named slug',
    [
      { ...without(A, 'id'), slug: 'aurora-1' },
      { ...without(B, 'id'), slug: 'lumen-xl' },
    ],
  ],
  [
    'map whose entries carry a display name',
    { 'aurora-1': { ...without(A, 'id'), name: 'Aurora One' }, 'lumen-xl': { ...without(B, 'id'), name: 'Lumen XL' } },
  ],
];

describe('catalog normalisation', () => {
  describe('parseImageModels on every envelope', () => {
    for (const [name, body] of IMAGE_ENVELOPES) {
      it(name, () => {
        const models = parseImageModels(body);
        assert.deepEqual(
          models.map((m) => m.id),
          ['aurora-1', 'lumen-xl'],
        );
        assert.equal(models[0]!.max_price_per_image, 4);
        assert.equal(models[1]!.min_price_per_image, 6);
      });
    }
  });

  describe('extractGroups', () => {
    it('reads group maps, group lists and flat lists alike', () => {
      for (const [name, body] of IMAGE_ENVELOPES.slice(5, 12)) {
        const groups = extractGroups(body);
        assert.deepEqual(
          groups.get('images')?.map((e) => e.id),
          ['aurora-1', 'lumen-xl'],
          name,
        );
        if (name !== '{categories: {...}}')
          assert.deepEqual(
            groups.get('chat')?.map((e) => e.id),
            ['orbit-chat'],
            name,
          );
      }
    });
    it('the emulator shape {object, data: {group: [...]}}', () => {
      const groups = extractGroups({ object: 'list', data: { chat: [CHAT], images: [A], videos: [], speech: [{ model: 'voice-1' }] } });
      assert.deepEqual([...groups.keys()], ['chat', 'images', 'speech']);
      assert.equal(groups.get('speech')![0]!.id, 'voice-1');
    });
    it('nothing usable gives an empty map', () => {
      for (const body of [null, 42, 'text', [], {}, { data: null }, { data: 'x' }, [1, 2]]) assert.equal(extractGroups(body).size, 0, JSON.stringify(body));
    });
  });

  describe('extractEntries', () => {
    it('keeps all fields and fills id', () => {
      const [entry] = extractEntries({ data: [{ model_id: ' spaced ', price: 1 }] });
      assert.deepEqual(entry, { model_id: ' spaced ', price: 1, id: 'spaced' });
    });
    it('picks the named group of a map', () => {
      assert.deepEqual(
        extractEntries({ chat: [CHAT], images: [A] }, 'chat').map((e) => e.id),
        ['orbit-chat'],
      );
    });
    it('drops entries without an id and non-objects', () => {
      assert.deepEqual(
        extractEntries([A, { provider: 'x' }, 'str', null, 7, { id: '' }]).map((e) => e.id),
        ['aurora-1'],
      );
    });
    it('missing lists give []', () => {
      for (const body of [undefined, null, {}, { data: {} }, { models: null }, 'nope']) assert.deepEqual(extractEntries(body), [], JSON.stringify(body));
    });
    it('entryId prefers id, then model fields, then name', () => {
      assert.equal(entryId({ id: 'a', name: 'b' }), 'a');
      assert.equal(entryId({ name: 'b', model: 'c' }), 'c');
      assert.equal(entryId({ title: 'x' }, 'fallback'), 'fallback');
      assert.equal(entryId({ title: 'x' }), undefined);
    });
  });

  describe('toImageModel coercion', () => {
    it('numbers and booleans as strings, lists as comma text', () => {
      const m = toImageModel({
        id: 'x',
        min_price_per_image: '2,5',
        max_price_per_image: '4.75',
        max_n: '3',
        max_input_references: '2',
        supports_seed: 'true',
        supports_generation: 'false',
        supports_edit: 1,
        supported_resolutions: '1K, 2K',
        supported_aspect_ratios: ['1:1', 16],
      });
      assert.equal(m.min_price_per_image, 2.5);
      assert.equal(m.max_price_per_image, 4.75);
      assert.equal(m.max_n, 3);
      assert.equal(m.max_input_references, 2);
      assert.equal(m.supports_seed, true);
      assert.equal(m.supports_generation, false);
      assert.equal(m.supports_edit, true);
      assert.deepEqual(m.supported_resolutions, ['1K', '2K']);
      assert.deepEqual(m.supported_aspect_ratios, ['1:1', '16']);
    });
    it('missing fields get safe defaults', () => {
      const m = toImageModel({ id: 'bare' });
      assert.deepEqual(m.supported_background, []);
      assert.deepEqual(m.allowed_passthrough_parameters, []);
      assert.equal(m.max_n, 1);
      assert.equal(m.max_input_references, 0);
      assert.equal(m.supports_edit, false);
      assert.equal(canEdit(m), false);
      assert.equal(m.supports_generation, true);
      assert.equal(m.min_price_per_image, 0);
    });
    it('max_n is clamped to the spec range and max >= min price', () => {
      assert.equal(toImageModel({ id: 'a', max_n: 50 }).max_n, 10);
      assert.equal(toImageModel({ id: 'a', max_n: 0 }).max_n, 1);
      const swapped = toImageModel({ id: 'a', min_price_per_image: 5, max_price_per_image: 3 });
      assert.ok(swapped.max_price_per_image >= swapped.min_price_per_image);
      assert.equal(toImageModel({ id: 'a', max_price_per_image: 7 }).min_price_per_image, 7);
    });
    it('canEdit needs both flags', () => {
      assert.equal(canEdit(toImageModel({ id: 'a', supports_edit: true, max_input_references: 0 })), false);
      assert.equal(canEdit(toImageModel({ id: 'a', supports_edit: false, max_input_references: 3 })), false);
      assert.equal(canEdit(toImageModel({ id: 'a', max_input_references: 3 })), true);
    });
  });

  describe('through the client (local server serving each form)', () => {
    let server: LocalServer;
    let client: GatewayClient;
    let body: unknown;
    before(async () => {
      server = await localServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
      client = newClient(server, null);
    });
    after(async () => {
      await client.close();
      await server.close();
    });
    for (const [name, envelope] of IMAGE_ENVELOPES) {
      it(name, async () => {
        body = envelope;
        assert.deepEqual(
          (await client.imageModels()).map((m) => m.id),
          ['aurora-1', 'lumen-xl'],
        );
      });
    }
    it('catalog reads the groups of the whole catalog', async () => {
      body = { data: { images: [A, B], chat: [CHAT] } };
      assert.deepEqual([...(await client.catalog()).keys()].sort(), ['chat', 'images']);
      assert.equal(server.requests.at(-1)!.url, '/public/gateway/models');
    });
  });
});
