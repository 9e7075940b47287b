// Tests of the gateway emulator itself, over real HTTP on loopback: the admin endpoints and the
// faults (switched on by header, by admin call or at start).
import * as assert from 'node:assert/strict';
import { IMAGE_MODELS } from '../../tools/emulator/catalog';
import { paddedPngParts } from '../../tools/emulator/png';
import { renderImage } from '../../tools/emulator/render';
import { DEMO_KEYS } from '../../tools/emulator/server';
import { waitFor } from './support/gateway';
import { decodePng, useEmulator } from './support/emulatorUnderTest';

describe('gateway emulator', function () {
  const emu = useEmulator();
  const { get, generate, generateJson, imagesOf, admin, lastRequest } = emu;

  describe('admin endpoints', () => {
    it('lists requests with counters, and resets everything', async () => {
      const gen = await generateJson({ model: 'sketch-mini', prompt: 'x' });
      const r = await admin('GET', '/requests');
      assert.equal(r.body.totalReservations, 1);
      assert.equal(r.body.totalCharges, 1);
      const rec = r.body.requests.at(-1);
      for (const f of ['id', 'method', 'path', 'key', 'status', 'paid', 'reservedRub', 'chargedRub', 'faults', 'at']) assert.ok(f in rec, f);
      assert.equal(rec.path, '/v1/images/generations');
      assert.equal(rec.id, gen.res.headers.get('x-request-id'));
      await admin('POST', '/state', { balance: 12.34, keyBudgets: { [DEMO_KEYS.budget]: 3 } });
      assert.deepEqual((await get('/v1/gateway/balance', DEMO_KEYS.budget)).body, { balance: 12.34, budget: 3 });
      await admin('POST', '/faults', { fault: 'html-502', times: -1 });
      const reset = await admin('POST', '/reset');
      assert.equal(reset.res.status, 200);
      assert.equal((await admin('GET', '/requests')).body.requests.length, 0);
      assert.deepEqual((await admin('GET', '/faults')).body.faults, []);
      assert.equal((await get('/v1/gateway/balance', DEMO_KEYS.budget)).body.balance, 5000);
    });

    it('validates admin input', async () => {
      assert.equal((await admin('POST', '/faults', { fault: 'meteor' })).res.status, 400);
      assert.equal((await admin('POST', '/state', { keyBudgets: { nobody: 3 } })).res.status, 400);
      assert.equal((await admin('POST', '/state', { balance: 'lots' })).res.status, 400);
      const r = await admin('GET', '/nothing');
      assert.equal(r.res.status, 404);
      assert.ok(r.res.headers.get('x-request-id'));
    });

    it('arms faults for a number of paid requests, or until cleared', async () => {
      await admin('POST', '/faults', { fault: 'html-500', times: 2 });
      assert.equal((await get('/v1/gateway/balance', DEMO_KEYS.unlimited)).res.status, 200, 'account calls are not affected');
      assert.equal((await generate({ model: 'sketch-mini', prompt: 'x' })).res.status, 500);
      assert.equal((await generate({ model: 'sketch-mini', prompt: 'x' })).res.status, 500);
      assert.equal((await generate({ model: 'sketch-mini', prompt: 'x' })).res.status, 200);
      await admin('POST', '/faults', { fault: 'no-media-type', times: -1 });
      for (let i = 0; i < 3; i++) assert.equal((await generateJson({ model: 'sketch-mini', prompt: 'x' })).body.data[0].media_type, undefined);
      await admin('DELETE', '/faults');
      assert.equal((await generateJson({ model: 'sketch-mini', prompt: 'x' })).body.data[0].media_type, 'image/png');
    });

    it('registers an extra key like a demo key, kept across resets', async () => {
      const extra = 'gw-extra-' + Date.now().toString(16);
      assert.equal((await get('/v1/gateway/me', extra)).res.status, 401);
      const added = await admin('POST', '/keys', { key: extra, like: 'budget' });
      assert.equal(added.res.status, 200);
      assert.equal(added.body.name, 'demo-budget-extra');
      assert.equal((await get('/v1/gateway/me', extra)).res.status, 200);
      const record = (await get('/v1/gateway/key', extra)).body;
      assert.equal(record.budget.initial, 1000);
      assert.equal(record.name, 'demo-budget-extra');
      // Its own budget: spending with the extra key leaves the demo key's alone.
      const demoBefore = (await get('/v1/gateway/balance', DEMO_KEYS.budget)).body.budget;
      assert.equal((await generate({ model: 'sketch-mini', prompt: 'x' }, extra)).res.status, 200);
      assert.equal(lastRequest().key, 'demo-budget-extra');
      assert.ok((await get('/v1/gateway/balance', extra)).body.budget < demoBefore);
      assert.equal((await get('/v1/gateway/balance', DEMO_KEYS.budget)).body.budget, demoBefore);
      await admin('POST', '/keys', { key: extra + '-x', like: 'expired' });
      assert.equal((await get('/v1/gateway/me', extra + '-x')).body.error.code, 'key_expired');
      await admin('POST', '/reset');
      assert.equal((await get('/v1/gateway/me', extra)).res.status, 200, 'a reset keeps registered keys');
      assert.equal((await admin('POST', '/keys', { key: 'has space', like: 'budget' })).res.status, 400);
      assert.equal((await admin('POST', '/keys', { key: 'gw-x', like: 'platinum' })).res.status, 400);
    });

    it('keeps body faults armed across refused requests', async () => {
      emu.state.armFault({ fault: 'usage-first' });
      assert.equal((await generate({ model: 'sketch-mini', prompt: '' })).res.status, 400);
      const { text } = await generate({ model: 'sketch-mini', prompt: 'x' });
      assert.match(text, /^\{"created":\d+,"model":"sketch-mini","usage":/);
    });
  });

  describe('faults', () => {
    const fault = (name: string, extra: Record<string, string> = {}) => ({ 'x-emulator-fault': name, ...extra });
    const req = { model: 'aurora-1', prompt: 'fault', seed: 1, n: 2 };

    it('latency delays the answer', async () => {
      const t0 = Date.now();
      const r = await generate(req, undefined, fault('latency', { 'x-emulator-latency-ms': '300' }));
      assert.equal(r.res.status, 200);
      assert.ok(Date.now() - t0 >= 290);
      const t1 = Date.now();
      assert.equal((await get('/v1/gateway/me', DEMO_KEYS.unlimited, fault('latency', { 'x-emulator-latency-ms': '200' }))).res.status, 200);
      assert.ok(Date.now() - t1 >= 190);
      assert.deepEqual(lastRequest().faults, ['latency']);
    });

    it('slow-headers never answers in time and charges nothing', async () => {
      await assert.rejects(
        fetch(`${emu.url}/v1/images/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, ...fault('slow-headers') },
          body: JSON.stringify(req),
          signal: AbortSignal.timeout(300),
        }),
      );
      await waitFor(() => lastRequest().clientAborted === true);
      const rec = lastRequest();
      assert.deepEqual([rec.status, rec.reservedRub, rec.chargedRub, rec.clientAborted], [0, 0, 0, true]);
      assert.equal(emu.state.balanceRub, 5000);
    });

    it('html-500 and html-502 answer an HTML page without charge', async () => {
      for (const [name, status] of [
        ['html-500', 500],
        ['html-502', 502],
      ] as const) {
        const r = await generate(req, undefined, fault(name));
        assert.equal(r.res.status, status);
        assert.match(r.res.headers.get('content-type')!, /text\/html/);
        assert.match(r.text, /<html>/);
        assert.equal(lastRequest().chargedRub, 0);
      }
      assert.equal((await fetch(`${emu.url}/v1/gateway/balance`, { headers: fault('html-502') })).status, 502);
      assert.equal(emu.state.balanceRub, 5000);
    });

    it('status answers any status and body once the request body is read, without charge; status-after-charge charges first', async () => {
      // By header: a Cloudflare 524 page, the default body for the status.
      const page = await generate(req, undefined, fault('status', { 'x-emulator-status': '524' }));
      assert.equal(page.res.status, 524);
      assert.match(page.res.headers.get('content-type')!, /text\/html/);
      assert.match(page.text, /<title>524 A timeout occurred<\/title>/);
      assert.equal(lastRequest().chargedRub, 0);
      // Armed through the admin endpoint: a given body and content type.
      const body = '{"error":{"message":"upstream failed","code":"provider_error"}}';
      assert.equal((await admin('POST', '/faults', { fault: 'status', status: 503, body })).res.status, 200);
      const json = await generate(req);
      assert.deepEqual([json.res.status, json.text, json.res.headers.get('content-type')], [503, body, 'application/json; charset=utf-8']);
      emu.state.armFault({ fault: 'status', status: 500, body: 'upstream connect error', contentType: 'text/plain' });
      const text = await generate(req);
      assert.deepEqual([text.res.status, text.text, text.res.headers.get('content-type')], [500, 'upstream connect error', 'text/plain']);
      assert.equal(emu.state.balanceRub, 5000);
      assert.equal((await admin('POST', '/faults', { fault: 'status', status: 200 })).res.status, 400, 'a success status is no fault');
      // The gateway behind charged; the client gets the proxy's page.
      emu.state.armFault({ fault: 'status-after-charge', status: 524 });
      const charged = await generate(req);
      assert.equal(charged.res.status, 524);
      assert.ok(lastRequest().chargedRub > 0);
      assert.equal(Math.round((5000 - emu.state.balanceRub) * 100), Math.round(lastRequest().chargedRub * 100));
    });

    it('rate-limit answers 429 with Retry-After', async () => {
      const r = await generateJson(req, undefined, fault('rate-limit'));
      assert.equal(r.res.status, 429);
      assert.equal(r.res.headers.get('retry-after'), '1');
      assert.equal(r.body.error.code, 'rate_limit_exceeded');
      emu.state.armFault({ fault: 'rate-limit', retryAfterSeconds: 7 });
      assert.equal((await generate(req)).res.headers.get('retry-after'), '7');
      assert.equal(emu.state.balanceRub, 5000);
    });

    it('reshapes the JSON: no-media-type, media-type-last, usage-first, escaped-slashes', async () => {
      const plain = await generate(req);
      const plainImages = imagesOf(JSON.parse(plain.text));
      const noType = JSON.parse((await generate(req, undefined, fault('no-media-type'))).text);
      assert.ok(noType.data.every((d: any) => !('media_type' in d)));
      const last = (await generate(req, undefined, fault('media-type-last'))).text;
      assert.match(last, /"data":\[\{"b64_json":"[^"]+","media_type":"image\/png"\},\{"b64_json"/);
      const first = (await generate(req, undefined, fault('usage-first'))).text;
      assert.match(first, /^\{"created":\d+,"model":"aurora-1","usage":\{"cost_rub":[\d.]+,"balance":[\d.]+\},"data":\[/);
      const escaped = await generate(req, undefined, fault('escaped-slashes'));
      assert.ok(escaped.text.includes('\\/'));
      assert.equal(Number(escaped.res.headers.get('content-length')), Buffer.byteLength(escaped.text));
      const decoded = imagesOf(JSON.parse(escaped.text));
      assert.ok(decoded[0]!.equals(plainImages[0]!) && decoded[1]!.equals(plainImages[1]!));
      const combined = await generate(req, undefined, fault('usage-first,media-type-last,escaped-slashes'));
      assert.ok(imagesOf(JSON.parse(combined.text))[0]!.equals(plainImages[0]!));
    });

    it('invalid-base64 corrupts the image text after charging', async () => {
      const r = await generate(req, undefined, fault('invalid-base64'));
      assert.equal(r.res.status, 200);
      const body = JSON.parse(r.text);
      assert.ok(body.data[0].b64_json.includes('!'));
      assert.ok(lastRequest().chargedRub > 0);
      assert.equal(emu.state.balanceRub, body.usage.balance);
    });

    it('truncated-json ends the response cleanly with a cut body, after charging', async () => {
      const r = await generate(req, undefined, fault('truncated-json'));
      assert.equal(r.res.status, 200);
      assert.equal(Number(r.res.headers.get('content-length')), r.text.length);
      assert.throws(() => JSON.parse(r.text));
      assert.ok(lastRequest().chargedRub > 0);
      assert.ok(emu.state.balanceRub < 5000);
    });

    it('drop-mid-body and kill cut the connection after charging', async () => {
      for (const name of ['drop-mid-body', 'kill']) {
        let received = 0;
        await assert.rejects(async () => {
          const res = await fetch(`${emu.url}/v1/images/generations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, ...fault(name) },
            body: JSON.stringify(req),
          });
          assert.equal(res.status, 200);
          for await (const chunk of res.body!) received += (chunk as Uint8Array).length;
        }, name);
        const rec = emu.state.requests.at(-1)!;
        assert.ok(rec.chargedRub > 0 && rec.reservedRub === 8, name);
        assert.deepEqual(rec.faults, [name]);
        if (name === 'kill') assert.equal(received, 0);
        else assert.ok(received > 1000, `${received} bytes before the drop`);
      }
      assert.equal(emu.state.totalCharges, 2);
    });

    it('large pads each image to the requested size and stays decodable', async () => {
      const r = await generateJson(req, undefined, fault('large', { 'x-emulator-image-bytes': String(3 * 1024 * 1024 + 5) }));
      for (const img of imagesOf(r.body)) {
        assert.equal(img.length, 3 * 1024 * 1024 + 5);
        const png = decodePng(img);
        assert.ok(png.chunkTypes.includes('gaPd'));
        assert.deepEqual([png.width, png.height], [1024, 1024]);
      }
    });

    it('midImageGapMs (POST /__emulator/state) holds each large image halfway through its base64, then the answer goes on whole', async () => {
      assert.equal((await admin('POST', '/state', { midImageGapMs: 600 })).res.status, 200);
      assert.equal((await admin('POST', '/state', { midImageGapMs: -1 })).res.status, 400);
      const sent = performance.now();
      const res = await fetch(`${emu.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, ...fault('large', { 'x-emulator-image-bytes': String(3 * 1024 * 1024) }) },
        body: JSON.stringify(req),
      });
      const arrivals: { at: number; bytes: number }[] = [];
      const chunks: Buffer[] = [];
      for await (const chunk of res.body!) {
        chunks.push(Buffer.from(chunk as Uint8Array));
        arrivals.push({ at: performance.now(), bytes: (arrivals.at(-1)?.bytes ?? 0) + (chunk as Uint8Array).length });
      }
      // Each image's text (4 MiB) is held after its first 2 MiB: what follows cannot arrive sooner than
      // one more pause after the request left. (The gaps between chunks can hide a pause when this
      // process is slow to read: the bytes then wait in the socket.)
      const MiB = 1024 * 1024;
      for (const i of [0, 1]) {
        const after = arrivals.find((a) => a.bytes > (2 + 4 * i) * MiB + 1024)!;
        assert.ok(after.at - sent >= 600 * (i + 1) - 5, `image ${i + 1}: the bytes past its middle came ${(after.at - sent).toFixed(0)} ms after the request`);
      }
      for (const image of imagesOf(JSON.parse(Buffer.concat(chunks).toString('utf8')))) assert.equal(decodePng(image).width, 1024);
    });

    it('streams 10 x 24 MiB images without buffering them', async function () {
      this.timeout(60_000);
      const rssBefore = process.memoryUsage().rss;
      const res = await fetch(`${emu.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, ...fault('large') },
        body: JSON.stringify({ model: 'prism-2', prompt: 'big', n: 10 }),
      });
      assert.equal(res.status, 200);
      const declared = Number(res.headers.get('content-length'));
      let received = 0;
      let tail = '';
      for await (const chunk of res.body!) {
        received += (chunk as Uint8Array).length;
        tail = (tail + Buffer.from(chunk as Uint8Array).toString('latin1')).slice(-200);
      }
      assert.equal(received, declared);
      assert.ok(received > 10 * 24 * 1024 * 1024 * (4 / 3));
      assert.match(tail, /"usage":\{"cost_rub":[\d.]+,"balance":[\d.]+\}\}$/);
      assert.ok(process.memoryUsage().rss - rssBefore < 400 * 1024 * 1024, 'memory stays bounded');
    });

    it('padded PNG parts share one zero block', () => {
      const png = renderImage({ model: IMAGE_MODELS[0]!, prompt: 'p', seed: 1, width: 64, height: 64, transparent: false, referencesDigest: '', extra: '' }, 0);
      const parts = paddedPngParts(png, 5 * 1024 * 1024);
      assert.equal(
        parts.reduce((s, p) => s + p.length, 0),
        5 * 1024 * 1024,
      );
      decodePng(Buffer.concat(parts));
    });
  });
});
