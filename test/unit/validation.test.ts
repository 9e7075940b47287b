// The validation matrix: every invalid input is refused by the job service before anything is sent
// to a paid endpoint (checked in the emulator's request log), with a ValidationError naming the field.
import * as assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import type { GenerationRequest } from '../../src/core/gateway/types';
import { collectIssues, validateRequest } from '../../src/core/requests/validation';
import type { ImageJob } from '../../src/jobs/jobTypes';
import { caught, gatewaySuite, newService, paidRequests, type ServiceRig, SMALL, TINY_PNG, writePng } from './support/gateway';

interface Case {
  name: string;
  request: Partial<GenerationRequest> & Record<string, unknown>;
  field: string;
  /** Values the error must list as allowed. */
  allowed?: readonly (string | number)[];
  /** Text the message must contain. */
  says?: RegExp;
  /** Local reference files: a count of PNGs, or named kinds. */
  references?: string[];
  /** The error's kind when the gateway has a kind of its own for the same cause (default 'validation'). */
  kind?: 'unknown-model' | 'edit-not-supported';
}

const url = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const ref = (u = url) => ({ type: 'image_url' as const, image_url: { url: u } });

const INVALID: Case[] = [
  // model
  { name: 'no model', request: { model: '' }, field: 'model' },
  { name: 'blank model', request: { model: '   ' }, field: 'model' },
  { name: 'unknown model', request: { model: 'aurora-9' }, field: 'model', says: /Unknown model "aurora-9"/, kind: 'unknown-model' },
  {
    name: 'provider-prefixed model',
    request: { model: 'northlight/aurora-1' },
    field: 'model',
    says: /Use "aurora-1" without the provider prefix/,
    kind: 'unknown-model',
  },
  { name: 'edit-only model without references', request: { model: 'retouch-pro' }, field: 'model', says: /only edits/ },
  // prompt
  { name: 'empty prompt', request: { prompt: '' }, field: 'prompt' },
  { name: 'whitespace prompt', request: { prompt: ' \n\t ' }, field: 'prompt' },
  { name: 'prompt not a string', request: { prompt: 42 as unknown as string }, field: 'prompt' },
  // n
  { name: 'n = 0', request: { n: 0 }, field: 'n', allowed: [1, 2, 3, 4] },
  { name: 'n = 11', request: { model: 'prism-2', n: 11 }, field: 'n', allowed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
  { name: 'n over max_n', request: { n: 5 }, field: 'n', allowed: [1, 2, 3, 4], says: /1 to 4 for aurora-1/ },
  { name: 'n = 2 on a max_n 1 model', request: { model: 'vector-forge', n: 2 }, field: 'n', allowed: [1] },
  { name: 'n not an integer', request: { n: 1.5 }, field: 'n' },
  { name: 'n negative', request: { n: -1 }, field: 'n' },
  { name: 'n as a string', request: { n: '2' as unknown as number }, field: 'n' },
  // capability fields
  { name: 'resolution not supported', request: { size: undefined, resolution: '4K' }, field: 'resolution', allowed: ['1K', '2K'] },
  {
    name: 'aspect_ratio not supported',
    request: { size: undefined, aspect_ratio: '21:9' },
    field: 'aspect_ratio',
    allowed: ['1:1', '16:9', '9:16', '4:3', '3:4'],
  },
  { name: 'aspect_ratio with a slash', request: { size: undefined, aspect_ratio: '16/9' }, field: 'aspect_ratio' },
  { name: 'background not supported', request: { background: 'transparent' }, field: 'background', allowed: ['auto', 'opaque'] },
  {
    name: 'transparent background in JPEG',
    request: { model: 'prism-2', background: 'transparent', output_format: 'jpeg' },
    field: 'output_format',
    allowed: ['png', 'webp'],
    says: /alpha/,
  },
  { name: 'background on a model that supports only auto', request: { model: 'sketch-mini', background: 'opaque' }, field: 'background', allowed: ['auto'] },
  // size
  { name: 'size with a Cyrillic х', request: { size: '1024х1024' }, field: 'size', says: /write "1024x1024"/ },
  { name: 'size with a Cyrillic Х', request: { size: '512Х512' }, field: 'size', says: /Latin letter x/ },
  { name: 'size with ×', request: { size: '800×600' }, field: 'size', says: /write "800x600"/ },
  { name: 'size with spaces around x', request: { size: '800 x 600' }, field: 'size', says: /Latin letter x/ },
  { name: 'size as a word', request: { size: 'large' }, field: 'size', says: /tier label/ },
  { name: 'size with a capital X and spaces (ambiguous)', request: { size: '1024 X 1024' }, field: 'size', says: /Latin letter x/ },
  { name: 'size tier with a unit after it', request: { size: '2kb' }, field: 'size' },
  { name: 'resolution in another case that is not listed', request: { size: undefined, resolution: '4k' }, field: 'resolution', allowed: ['1K', '2K'] },
  { name: 'size with zero width', request: { size: '0x512' }, field: 'size', says: /above zero/ },
  { name: 'size as a number', request: { size: 1024 as unknown as string }, field: 'size' },
  { name: 'explicit pixels with resolution', request: { size: '1024x1024', resolution: '1K' }, field: 'size', says: /cannot be combined/ },
  { name: 'explicit pixels with aspect_ratio', request: { size: '1024x576', aspect_ratio: '16:9' }, field: 'size', says: /cannot be combined/ },
  // universal enums
  { name: 'quality unknown', request: { quality: 'ultra' }, field: 'quality', allowed: ['low', 'medium', 'high', 'auto'] },
  { name: 'output_format gif', request: { output_format: 'gif' }, field: 'output_format', allowed: ['png', 'jpeg', 'webp', 'svg'] },
  { name: 'output_format jpg', request: { output_format: 'jpg' }, field: 'output_format', allowed: ['png', 'jpeg', 'webp', 'svg'] },
  {
    name: 'output_format JPG (a case change does not make it jpeg)',
    request: { output_format: 'JPG' },
    field: 'output_format',
    allowed: ['png', 'jpeg', 'webp', 'svg'],
  },
  { name: 'seed as text', request: { seed: 'abc' as unknown as number }, field: 'seed' },
  { name: 'seed fractional', request: { seed: 1.25 }, field: 'seed' },
  { name: 'seed beyond safe integers', request: { seed: 2 ** 60 }, field: 'seed' },
  { name: 'output_compression 101', request: { output_compression: 101 }, field: 'output_compression' },
  { name: 'output_compression -1', request: { output_compression: -1 }, field: 'output_compression' },
  { name: 'output_compression fractional', request: { output_compression: 50.5 }, field: 'output_compression' },
  // provider parameters
  {
    name: 'passthrough not allowed for the model',
    request: { params: { moderation: 'low' } },
    field: 'moderation',
    says: /accepts no provider-specific parameters/,
  },
  {
    name: 'unknown passthrough on a model that allows others',
    request: { model: 'prism-2', params: { style: 'vivid' } },
    field: 'style',
    allowed: ['moderation'],
  },
  { name: 'standard field smuggled as a provider parameter', request: { params: { n: 3 } }, field: 'n', says: /standard parameter/ },
  // references
  {
    name: 'references on a model without editing (files)',
    request: { model: 'sketch-mini' },
    references: ['png'],
    field: 'input_references',
    says: /does not support editing/,
    kind: 'edit-not-supported',
  },
  {
    name: 'references on a model without editing (URLs)',
    request: { model: 'sketch-mini', input_references: [ref()] },
    field: 'input_references',
    kind: 'edit-not-supported',
  },
  { name: 'too many reference files', request: {}, references: ['png', 'png'], field: 'input_references', says: /at most 1 reference image; got 2/ },
  { name: 'too many reference URLs', request: { model: 'lumen-xl', input_references: [ref(), ref(), ref()] }, field: 'input_references', says: /at most 2/ },
  { name: 'reference URL not data: or http', request: { input_references: [ref('ftp://x/y.png')] }, field: 'input_references' },
  { name: 'reference data: URL without base64', request: { input_references: [ref('data:image/png,rawbytes')] }, field: 'input_references' },
  { name: 'reference object of the wrong shape', request: { input_references: [{ type: 'file', url } as never] }, field: 'input_references' },
  { name: 'reference file is not an image', request: {}, references: ['text'], field: 'images', allowed: ['png', 'jpeg', 'webp'] },
  { name: 'reference file does not exist', request: {}, references: ['missing'], field: 'images', says: /does not exist/ },
  { name: 'reference path is a folder', request: {}, references: ['folder'], field: 'images' },
  { name: 'reference files and URLs together', request: { input_references: [ref()] }, references: ['png'], field: 'input_references', says: /not both/ },
];

const VALID: Partial<GenerationRequest>[] = [
  {},
  { n: 4 },
  { size: '1K' },
  { size: 'auto' },
  { size: '2K', resolution: '2K', aspect_ratio: '16:9' },
  { size: undefined, resolution: '1K', aspect_ratio: '3:4', background: 'opaque', quality: 'low', output_format: 'webp', output_compression: 0, seed: 0 },
  { model: 'prism-2', n: 10, background: 'transparent', params: { moderation: 'low' }, seed: -5 },
  { model: 'lumen-xl', quality: 'high', output_format: 'svg', output_compression: 100 },
  { model: 'retouch-pro', input_references: [ref()] },
  { model: 'mosaic-edit', input_references: Array.from({ length: 8 }, () => ref('https://example.com/a.png')) },
];

describe('validation matrix', function () {
  // No reset before each, as before: the cases count from where they start; the blocks that send reset after.
  const gw = gatewaySuite({ models: true, reset: false });
  let rig: ServiceRig;
  let refused = 0;
  let sent = 0;
  let reserved = 0;

  before(async () => {
    rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'));
    await writePng(gw.dir, 'ref.png');
    await writeFile(path.join(gw.dir, 'notes.txt'), 'not an image at all');
  });
  after(async () => {
    console.log(`      validation: ${refused} invalid inputs refused before sending, ${sent} requests, ${reserved} reservations`);
  });

  const fileFor = (kind: string) =>
    kind === 'png'
      ? path.join(gw.dir, 'ref.png')
      : kind === 'text'
        ? path.join(gw.dir, 'notes.txt')
        : kind === 'folder'
          ? gw.dir
          : path.join(gw.dir, 'nope.png');

  const job = (request: Record<string, unknown>, references?: string[]): ImageJob => ({
    request: { model: 'aurora-1', prompt: 'a quiet harbour at dawn', size: SMALL, ...request },
    references: references?.map(fileFor),
    output: { directory: path.join(gw.dir, 'out'), pattern: '{slug}-{index}' },
  });

  it('has at least 40 invalid cases', () => assert.ok(INVALID.length >= 40, String(INVALID.length)));

  describe('invalid inputs: refused locally, nothing sent, nothing reserved', () => {
    for (const c of INVALID) {
      it(c.name, async () => {
        const before = gw.emu.state.requests.length;
        const paidBefore = paidRequests(gw.emu).length;
        const reservationsBefore = gw.emu.state.totalReservations;
        const error = await caught(() => rig.service.run(job(c.request, c.references)));
        const paidNow = paidRequests(gw.emu).length - paidBefore;
        const reservedNow = gw.emu.state.totalReservations - reservationsBefore;
        sent += paidNow;
        reserved += reservedNow;
        assert.ok(error instanceof ValidationError, `${c.name}: ${String(error)}`);
        assert.equal(error.field, c.field, error.message);
        // One kind per cause, whether the refusal is local or the gateway's (errorTable.test.ts).
        assert.equal(error.kind, c.kind ?? 'validation', error.message);
        if (c.allowed) assert.deepEqual([...(error.allowed ?? [])], [...c.allowed], error.message);
        if (c.says) assert.match(error.message, c.says);
        assert.match(error.message, /[.!?]$/);
        assert.equal(paidNow, 0, 'no request to a paid endpoint');
        assert.equal(gw.emu.state.requests.length, before, 'no request at all');
        assert.equal(reservedNow, 0, 'no reservation');
        refused++;
      });
    }
  });

  describe('a model missing from the cached catalog', () => {
    afterEach(() => gw.emu.state.reset());
    const staleRig = () => {
      const counts = { refreshes: 0 };
      const stale = gw.models.filter((m) => m.id !== 'lumen-xl');
      const service = newService(gw.client, stale, path.join(gw.dir, 'recovery'), {
        refreshModels: async () => {
          counts.refreshes++;
          return gw.client.imageModels();
        },
      });
      return { service, counts };
    };
    it('is looked up once in a fresh catalog before the refusal: a new model is sent', async () => {
      const { service, counts } = staleRig();
      const result = await service.service.run(job({ model: 'lumen-xl' }));
      assert.equal(result.files.length, 1);
      assert.equal(counts.refreshes, 1);
      assert.equal(paidRequests(gw.emu).length, 1);
    });
    it('still unknown after the fresh read: refused, 0 paid requests, nothing reserved', async () => {
      const { service, counts } = staleRig();
      const error = await caught(() => service.service.run(job({ model: 'aurora-9' })));
      assert.ok(error instanceof ValidationError);
      assert.equal(error.field, 'model');
      assert.equal(counts.refreshes, 1, 'exactly one fresh read');
      assert.equal(paidRequests(gw.emu).length, 0);
      assert.equal(gw.emu.state.totalReservations, 0);
    });
    it('a model in the cache is not looked up again', async () => {
      const { service, counts } = staleRig();
      await service.service.run(job({}));
      assert.equal(counts.refreshes, 0);
    });
  });

  describe('unambiguous input is normalised, sent normalised, and the user is told', () => {
    afterEach(() => gw.emu.state.reset());
    const CASES: { name: string; request: Record<string, unknown>; sent: Record<string, unknown>; notes: RegExp[] }[] = [
      {
        name: '1024X1024 → 1024x1024',
        request: { size: '1024X1024' },
        sent: { size: '1024x1024' },
        notes: [/"size" was changed from "1024X1024" to "1024x1024"/],
      },
      { name: '2k → 2K', request: { size: '2k' }, sent: { size: '2K' }, notes: [/"size" was changed from "2k" to "2K"/] },
      { name: 'model id with spaces around it', request: { model: '  aurora-1 \n' }, sent: { model: 'aurora-1' }, notes: [/"model" was changed/] },
      { name: 'resolution 1k → 1K (listed by the model)', request: { size: undefined, resolution: '1k' }, sent: { resolution: '1K' }, notes: [/"resolution"/] },
      {
        name: 'quality High → high, output_format PNG → png',
        request: { quality: 'High', output_format: 'PNG' },
        sent: { quality: 'high', output_format: 'png' },
        notes: [/"quality"/, /"output_format"/],
      },
    ];
    for (const c of CASES) {
      it(c.name, async () => {
        const paidBefore = paidRequests(gw.emu).length;
        const notices: string[] = [];
        const result = await rig.service.run(job(c.request), { onEvent: (e) => e.type === 'notice' && notices.push(e.message) });
        assert.equal(paidRequests(gw.emu).length - paidBefore, 1, 'sent once');
        for (const [field, value] of Object.entries(c.sent)) assert.equal((result.request as unknown as Record<string, unknown>)[field], value, field);
        assert.equal(result.notes?.length, c.notes.length, String(result.notes));
        c.notes.forEach((note, i) => assert.match(result.notes![i]!, note));
        assert.deepEqual(notices, result.notes, 'each note is told as a notice before sending');
      });
    }
    it('a request that needs no change has no notes', async () => {
      const result = await rig.service.run(job({}));
      assert.equal(result.notes, undefined);
    });
  });

  describe('valid combinations pass validation', () => {
    for (const request of VALID) {
      it(JSON.stringify(request).slice(0, 90), () => {
        const full = { model: 'aurora-1', prompt: 'ok', size: SMALL, ...request } as GenerationRequest;
        if ('size' in request && request.size === undefined) delete full.size;
        assert.deepEqual(collectIssues(full, { models: gw.models }), []);
        assert.equal(validateRequest(full, { models: gw.models }).id, full.model);
      });
    }

    it('a valid request goes through the service and the gateway accepts it', async () => {
      const result = await rig.service.run(job({ n: 2, seed: 3 }));
      assert.equal(result.files.length, 2);
      assert.equal(paidRequests(gw.emu).length, 1);
      gw.emu.state.reset();
    });

    it('a valid edit with one reference file goes through', async () => {
      const result = await rig.service.run(job({}, ['png']));
      assert.equal(result.files.length, 1);
      assert.equal(paidRequests(gw.emu).length, 1);
      gw.emu.state.reset();
    });
  });

  describe('collectIssues reports every problem at once', () => {
    it('lists several fields', () => {
      const issues = collectIssues({ model: 'aurora-1', prompt: '', n: 9, quality: 'x', size: '5х5' }, { models: gw.models });
      assert.deepEqual(issues.map((i) => i.field).sort(), ['n', 'prompt', 'quality', 'size']);
    });
    it('referenceCount overrides input_references', () => {
      const issues = collectIssues({ model: 'aurora-1', prompt: 'p' }, { models: gw.models, referenceCount: 3 });
      assert.deepEqual(
        issues.map((i) => i.field),
        ['input_references'],
      );
    });
    it('an empty catalog refuses every model', () => {
      assert.equal(collectIssues({ model: 'aurora-1', prompt: 'p' }, { models: [] })[0]?.field, 'model');
    });
  });

  it('TINY_PNG fixture is a real PNG (guards the reference cases)', () => assert.equal(TINY_PNG.subarray(1, 4).toString(), 'PNG'));
});
