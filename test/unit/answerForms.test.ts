// The client against the emulator's other answer forms (tools/emulator/forms.ts): what a real
// gateway may send where the contract says "not shown" is accepted, or reported clearly and kept.
import * as assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ApiError, AuthenticationError, InsufficientFundsError, UnknownModelError } from '../../src/core/gateway/errors';
import { UnreadableAnswerError } from '../../src/core/answers/paidAnswer';
import { listRecoverable } from '../../src/core/files/recoveryFolder';
import {
  caught,
  DEMO_KEYS,
  gatewaySuite,
  listFiles,
  localServer,
  MemorySink,
  newService,
  paidRequests,
  SMALL,
  startEmulator,
  writePng,
} from './support/gateway';

describe('answer forms of a real gateway (emulator forms)', () => {
  const gw = gatewaySuite({ client: { maxRetries: 0 }, dir: 'gwi-forms-', models: true });
  const client = (key: string | null = DEMO_KEYS.unlimited) => gw.newClient(key);

  it('the forms switch: admin API sets, lists and refuses unknown names; reset restores the start forms', async () => {
    const post = (forms: unknown) =>
      fetch(`${gw.emu.url}/__emulator/forms`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ forms }) });
    assert.equal((await post(['string-usage', 'svg-prolog'])).status, 200);
    assert.deepEqual(((await (await fetch(`${gw.emu.url}/__emulator/forms`)).json()) as { forms: string[] }).forms, ['string-usage', 'svg-prolog']);
    const bad = await post(['no-such-form']);
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Unknown form/);
    gw.emu.state.reset();
    assert.deepEqual([...gw.emu.state.forms], []);
    const own = await startEmulator({ forms: ['ru-errors'] });
    try {
      own.state.setForms([]);
      own.state.reset();
      assert.deepEqual([...own.state.forms], ['ru-errors'], 'the forms given at start come back on reset');
    } finally {
      await own.close();
    }
  });

  it('string-usage: cost_rub and balance as numeric strings are read as numbers', async () => {
    gw.emu.state.setForms(['string-usage']);
    const meta = await client().generate({ model: 'sketch-mini', prompt: 'strings', size: SMALL }, new MemorySink());
    const [paid] = paidRequests(gw.emu);
    assert.equal(meta.usage?.cost_rub, paid!.chargedRub);
    assert.equal(meta.usage?.balance, gw.emu.state.balanceRub);
  });

  it('svg-prolog: an Inkscape-style SVG without media_type is saved as .svg', async () => {
    gw.emu.state.setForms(['svg-prolog']);
    const rig = newService(client(), gw.models, path.join(gw.dir, 'rec-svg'));
    const out = path.join(gw.dir, 'out-svg');
    const result = await rig.service.run({
      request: { model: 'vector-forge', prompt: 'logo', size: SMALL, output_format: 'svg' },
      output: { directory: out, pattern: 'logo-{index}' },
    });
    assert.deepEqual(
      result.files.map((f) => path.basename(f)),
      ['logo-1.svg'],
    );
    const text = await readFile(result.files[0]!, 'utf8');
    assert.match(text, /^\uFEFF<\?xml[^>]*\?>\n<!-- Created with Inkscape/);
    assert.ok(text.indexOf('<svg') > 64, 'the root element is past the first 64 bytes');
  });

  describe('edits answers', () => {
    let reference: string;
    before(async () => {
      reference = await writePng(gw.dir, 'ref.png');
    });
    const editJob = (out: string) => ({
      request: { model: 'aurora-1', prompt: 'make it blue', size: SMALL },
      references: [reference],
      transport: 'multipart' as const,
      output: { directory: out, pattern: 'edit-{index}' },
    });

    it('binary-edits: an image/png body is saved, and the account is reconciled (no usage in it)', async () => {
      gw.emu.state.setForms(['binary-edits']);
      const rig = newService(client(), gw.models, path.join(gw.dir, 'rec-bin'));
      const out = path.join(gw.dir, 'out-bin');
      const result = await rig.service.run(editJob(out));
      assert.deepEqual(
        result.files.map((f) => path.basename(f)),
        ['edit-1.png'],
      );
      assert.equal(result.usage, undefined);
      assert.deepEqual(rig.usages, []);
      assert.equal(rig.reconciles, 1, 'figures come from a refresh instead');
      const bytes = await readFile(result.files[0]!);
      assert.equal(bytes.readUInt32BE(0), 0x89504e47);
      assert.equal(paidRequests(gw.emu).length, 1);
    });

    it('binary-edits with svg-prolog: an image/svg+xml body is saved as .svg', async () => {
      gw.emu.state.setForms(['binary-edits', 'svg-prolog']);
      const rig = newService(client(), gw.models, path.join(gw.dir, 'rec-bin-svg'));
      const result = await rig.service.run({
        ...editJob(path.join(gw.dir, 'out-bin-svg')),
        request: { model: 'vector-forge', prompt: 'trace', size: SMALL, output_format: 'svg' },
      });
      assert.match(result.files[0]!, /edit-1\.svg$/);
    });

    it('url-edits: addresses nobody can reach: charged (the usage counts), the addresses wait in the recovery manifest, the message says which and why', async () => {
      gw.emu.state.setForms(['url-edits']);
      const recovery = path.join(gw.dir, 'rec-url');
      const rig = newService(client(), gw.models, recovery);
      const out = path.join(gw.dir, 'out-url');
      const result = await rig.service.run(editJob(out));
      assert.deepEqual(result.files, []);
      const [paid] = paidRequests(gw.emu);
      assert.deepEqual(rig.usages, [{ cost_rub: paid!.chargedRub, balance: gw.emu.state.balanceRub }]);
      const recovered = result.recovered!;
      assert.ok(recovered.reason.includes(`image 1 at https://images.gateway.example/${paid!.id}/0.png: the download failed`), recovered.reason);
      assert.match(recovered.reason, /Recover Unsaved Images downloads it again/);
      const [waiting] = await listRecoverable(recovery);
      assert.equal(waiting?.manifestPath, recovered.manifestPath);
      assert.deepEqual(
        waiting?.files.map((f) => [f.kind, f.download?.url]),
        [['url', `https://images.gateway.example/${paid!.id}/0.png`]],
      );
      assert.deepEqual(await listFiles(out), []);
    });
  });

  it('an HTML or text 200 answer is reported with its content type and kept', async () => {
    const server = await localServer(
      (_req, res) =>
        void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body>Image ready: <a href="/x.png">x.png</a></body></html>'),
    );
    try {
      const c = gw.newClient('k', { baseUrl: server.url });
      const rig = newService(c, gw.models, path.join(gw.dir, 'rec-html'));
      const error = await caught(() =>
        rig.service.run({ request: { model: 'sketch-mini', prompt: 'html', size: SMALL }, output: { directory: path.join(gw.dir, 'out-html'), pattern: 'x' } }),
      );
      assert.ok(error instanceof UnreadableAnswerError, String(error));
      assert.match(error.message, /text\/html/);
      const [kept] = rig.events.flatMap((e) => (e.type === 'recovered' ? e.files : []));
      assert.match(kept!, /-answer\.html$/);
      assert.match(await readFile(kept!, 'utf8'), /Image ready/);
    } finally {
      await server.close();
    }
  });

  it('JSON without a content type, labelled text/plain, or after a first chunk of whitespace is still read', async () => {
    const { TINY_PNG } = await import('./support/gateway');
    const json = JSON.stringify({ data: [{ b64_json: TINY_PNG.toString('base64') }], usage: { cost_rub: 1, balance: 2 } });
    for (const headers of [{}, { 'content-type': 'text/plain' }]) {
      const server = await localServer((_req, res) => {
        res.writeHead(200, headers);
        res.write('  \n');
        setTimeout(() => res.end(json), 30);
      });
      try {
        const c = gw.newClient('k', { baseUrl: server.url });
        const meta = await c.generate({ model: 'm', prompt: 'p' }, new MemorySink());
        assert.equal(meta.images.length, 1, JSON.stringify(headers));
        assert.deepEqual(meta.usage, { cost_rub: 1, balance: 2 });
      } finally {
        await server.close();
      }
    }
  });

  it('an image body labelled application/octet-stream is accepted by its bytes', async () => {
    const { TINY_PNG } = await import('./support/gateway');
    const server = await localServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(TINY_PNG));
    try {
      const c = gw.newClient('k', { baseUrl: server.url });
      const sink = new MemorySink();
      const meta = await c.generate({ model: 'm', prompt: 'p' }, sink);
      assert.deepEqual(meta.images, [{ index: 0, mediaType: 'image/png' }]);
    } finally {
      await server.close();
    }
  });

  it("moderation-403: the gateway's words, no authentication error, nothing reserved or charged", async () => {
    gw.emu.state.setForms(['moderation-403']);
    const error = await caught(() => client().generate({ model: 'sketch-mini', prompt: 'something blocked', size: SMALL }, new MemorySink()));
    assert.ok(error instanceof ApiError);
    assert.ok(!(error instanceof AuthenticationError));
    assert.equal(error.kind, 'api');
    assert.equal(error.status, 403);
    assert.match(error.message, /rejected by the safety system/);
    assert.equal(error.outcomeUnknown, false);
    assert.equal(gw.emu.state.totalReservations, 0);
    assert.equal(gw.emu.state.totalCharges, 0);
  });

  it('invalid-key-400: an unknown key answered with 400 is an authentication error (invalid)', async () => {
    gw.emu.state.setForms(['invalid-key-400']);
    const error = await caught(() => client('gw-no-such-key').balance());
    assert.ok(error instanceof AuthenticationError, String(error));
    assert.equal(error.reason, 'invalid');
    assert.equal(error.status, 400);
  });

  describe('ru-errors', () => {
    beforeEach(() => gw.emu.state.setForms(['ru-errors']));
    it('a key budget shortfall is 403 "Лимит ключа исчерпан": funds (budget), in those words', async () => {
      const error = await caught(() => client(DEMO_KEYS.lowBudget).generate({ model: 'lumen-xl', prompt: 'too dear', size: SMALL }, new MemorySink()));
      assert.ok(error instanceof InsufficientFundsError, String(error));
      assert.equal(error.scope, 'budget');
      assert.equal(error.status, 403);
      assert.equal(error.message, 'Лимит ключа исчерпан.');
    });
    it('a balance shortfall, an unknown model, an expired key', async () => {
      gw.emu.state.setBalance(1);
      const funds = await caught(() => client().generate({ model: 'lumen-xl', prompt: 'poor', size: SMALL }, new MemorySink()));
      assert.ok(funds instanceof InsufficientFundsError);
      assert.equal(funds.scope, 'balance');
      const model = await caught(() => client().generate({ model: 'aurora-9', prompt: 'x', size: SMALL }, new MemorySink()));
      assert.ok(model instanceof UnknownModelError, String(model));
      const expired = await caught(() => client(DEMO_KEYS.expired).balance());
      assert.ok(expired instanceof AuthenticationError);
      assert.equal(expired.reason, 'expired');
    });
  });

  it('budget-reset: a budget due for its reset is refilled before the reservation', async () => {
    const before = gw.emu.state.keyBudgetRub(DEMO_KEYS.lowBudget)!;
    assert.ok(before < 12.5, `the low-budget key starts low (${before})`);
    gw.emu.state.setForms(['budget-reset']);
    const meta = await client(DEMO_KEYS.lowBudget).generate({ model: 'lumen-xl', prompt: 'after reset', size: SMALL }, new MemorySink());
    assert.equal(meta.images.length, 1);
    assert.equal(gw.emu.state.totalCharges, 1);
  });
});
