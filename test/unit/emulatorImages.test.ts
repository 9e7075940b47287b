// Tests of the gateway emulator itself, over real HTTP on loopback: the images it draws, the
// validation of requests, and edits sent as multipart.
import * as assert from 'node:assert/strict';
import { findImageModel } from '../../tools/emulator/catalog';
import { parseMultipart } from '../../tools/emulator/multipart';
import { renderImage } from '../../tools/emulator/render';
import { DEMO_KEYS } from '../../tools/emulator/server';
import { decodePng, TINY_PNG, dataUrl, ref, useEmulator } from './support/emulatorUnderTest';

describe('gateway emulator', function () {
  const emu = useEmulator();
  const { generate, generateJson, imagesOf, lastRequest } = emu;

  describe('images', () => {
    const sizeOf = async (body: object) => {
      const r = await generateJson(body);
      assert.equal(r.res.status, 200, JSON.stringify(r.body));
      const png = decodePng(imagesOf(r.body)[0]!);
      return [png.width, png.height];
    };

    it('produces decodable PNGs sized from resolution, aspect ratio and size', async () => {
      assert.deepEqual(await sizeOf({ model: 'aurora-1', prompt: 'a' }), [1024, 1024]);
      assert.deepEqual(await sizeOf({ model: 'aurora-1', prompt: 'a', aspect_ratio: '16:9' }), [1024, 576]);
      assert.deepEqual(await sizeOf({ model: 'aurora-1', prompt: 'a', aspect_ratio: '3:4', resolution: '1K' }), [768, 1024]);
      assert.deepEqual(await sizeOf({ model: 'lumen-xl', prompt: 'a', resolution: '2K', aspect_ratio: '9:16' }), [1152, 2048]);
      assert.deepEqual(await sizeOf({ model: 'aurora-1', prompt: 'a', size: '640x480' }), [640, 480]);
      assert.deepEqual(await sizeOf({ model: 'aurora-1', prompt: 'a', size: '2K' }), [2048, 2048]);
      assert.deepEqual(await sizeOf({ model: 'aurora-1', prompt: 'a', size: 'auto' }), [1024, 1024]);
    });

    it('answers output_format jpeg and webp in that format when the model applies it (media_type says so), and PNG when it ignores it', async () => {
      const asked = async (model: string, output_format: string) => {
        const r = await generateJson({ model, prompt: 'a harbour', size: '96x64', output_format });
        assert.equal(r.res.status, 200, JSON.stringify(r.body));
        return { bytes: imagesOf(r.body)[0]!, type: r.body.data[0].media_type as string };
      };
      const jpeg = await asked('aurora-1', 'jpeg');
      assert.deepEqual([jpeg.type, jpeg.bytes[0], jpeg.bytes[1], jpeg.bytes.at(-2), jpeg.bytes.at(-1)], ['image/jpeg', 0xff, 0xd8, 0xff, 0xd9]);
      const webp = await asked('aurora-1', 'webp');
      assert.deepEqual([webp.type, webp.bytes.toString('latin1', 0, 4), webp.bytes.toString('latin1', 8, 12)], ['image/webp', 'RIFF', 'WEBP']);
      assert.equal(webp.bytes.readUInt32LE(4) + 8, webp.bytes.length, 'the RIFF length holds the whole file');
      const ignored = await asked('lumen-xl', 'jpeg');
      assert.equal(ignored.type, 'image/png');
      assert.deepEqual(decodePng(ignored.bytes).width, 96);
    });

    it('renders a 4K image', async () => {
      assert.deepEqual(await sizeOf({ model: 'lumen-xl', prompt: 'a', resolution: '4K', aspect_ratio: '21:9' }), [4096, 1756]);
    });

    it('uses RGBA with transparent pixels for a transparent background', async () => {
      const r = await generateJson({ model: 'prism-2', prompt: 'logo', background: 'transparent' });
      const png = decodePng(imagesOf(r.body)[0]!);
      assert.equal(png.channels, 4);
      let transparent = 0;
      for (let i = 1 + 3; i < png.raw.length; i += 4 * 97) if (png.raw[i] === 0) transparent++;
      assert.ok(transparent > 0);
    });

    it('is deterministic for a seed, and varies with seed, prompt and index', async () => {
      const a = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'cat', seed: 7, n: 2 })).body);
      const b = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'cat', seed: 7, n: 2 })).body);
      const c = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'cat', seed: 8 })).body);
      const d = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'dog', seed: 7 })).body);
      assert.ok(a[0]!.equals(b[0]!) && a[1]!.equals(b[1]!));
      assert.ok(!a[0]!.equals(a[1]!));
      assert.ok(!a[0]!.equals(c[0]!));
      assert.ok(!a[0]!.equals(d[0]!));
      // Without a seed, or on a model ignoring seeds, results vary.
      const e = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'cat' })).body);
      const f = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'cat' })).body);
      assert.ok(!e[0]!.equals(f[0]!));
      const g = imagesOf((await generateJson({ model: 'prism-2', prompt: 'cat', seed: 1 })).body);
      const h = imagesOf((await generateJson({ model: 'prism-2', prompt: 'cat', seed: 1 })).body);
      assert.ok(!g[0]!.equals(h[0]!));
    });

    it('renders a 1024x1024 image as a whole PNG of that size (its CPU time is printed, not judged: a slower machine takes more)', () => {
      const model = findImageModel('aurora-1')!;
      const before = process.cpuUsage();
      const png = renderImage(
        { model, prompt: `timing ${Math.random()}`, seed: 1, width: 1024, height: 1024, transparent: false, referencesDigest: '', extra: '' },
        0,
      );
      const { user, system } = process.cpuUsage(before);
      const { width, height } = decodePng(png);
      assert.deepEqual({ width, height }, { width: 1024, height: 1024 });
      console.log(`      1024x1024 rendered in ${((user + system) / 1000).toFixed(1)} ms of CPU`);
    });

    it('depends on the reference images when editing', async () => {
      const other = Buffer.concat([TINY_PNG, Buffer.from('x')]);
      const a = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'p', seed: 1, input_references: [ref(dataUrl(TINY_PNG))] })).body);
      const b = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'p', seed: 1, input_references: [ref(dataUrl(other))] })).body);
      const c = imagesOf((await generateJson({ model: 'aurora-1', prompt: 'p', seed: 1, input_references: [ref('https://example.com/a.png')] })).body);
      assert.ok(!a[0]!.equals(b[0]!) && !a[0]!.equals(c[0]!));
    });
  });

  describe('validation', () => {
    const expect400 = async (body: object, param: string | null, code?: string, status = 400) => {
      const r = await generateJson(body);
      assert.equal(r.res.status, status, `${JSON.stringify(body)} -> ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.param, param, JSON.stringify(r.body));
      if (code) assert.equal(r.body.error.code, code);
      assert.equal(typeof r.body.error.message, 'string');
      if (param) assert.ok(r.body.error.message.includes(param), r.body.error.message);
      return r.body.error;
    };
    const base = { model: 'aurora-1', prompt: 'a cat' };

    it('checks resolution, aspect_ratio and background against the model', async () => {
      const e = await expect400({ ...base, resolution: '4K' }, 'resolution', 'unsupported_value');
      assert.match(e.message, /1K, 2K/);
      await expect400({ ...base, aspect_ratio: '21:9' }, 'aspect_ratio', 'unsupported_value');
      await expect400({ ...base, background: 'transparent' }, 'background', 'unsupported_value');
    });

    it('checks the format of size, quality, output_format, seed, output_compression, n', async () => {
      await expect400({ ...base, size: '1024х1024' }, 'size', 'invalid_value'); // Cyrillic x
      await expect400({ ...base, size: '1024*1024' }, 'size');
      await expect400({ ...base, size: 'big' }, 'size');
      await expect400({ ...base, quality: 'ultra' }, 'quality');
      await expect400({ ...base, output_format: 'gif' }, 'output_format');
      await expect400({ ...base, seed: 'abc' }, 'seed');
      await expect400({ ...base, seed: 1.5 }, 'seed');
      await expect400({ ...base, output_compression: 101 }, 'output_compression');
      await expect400({ ...base, output_compression: 5.5 }, 'output_compression');
      await expect400({ ...base, n: 0 }, 'n');
      await expect400({ ...base, n: 5 }, 'n'); // aurora-1 max_n 4
      await expect400({ ...base, n: '2' }, 'n');
      await expect400({ model: 'vector-forge', prompt: 'x', n: 2 }, 'n');
    });

    it('refuses explicit pixels combined with resolution or aspect_ratio', async () => {
      await expect400({ ...base, size: '1024x768', resolution: '1K' }, 'size', 'conflicting_parameters');
      await expect400({ ...base, size: '1024x768', aspect_ratio: '4:3' }, 'size', 'conflicting_parameters');
      const tier = await generateJson({ ...base, size: '2K', aspect_ratio: '16:9' });
      assert.equal(tier.res.status, 200);
    });

    it('accepts valid values that mean nothing to the model', async () => {
      const r = await generateJson({ model: 'lumen-xl', prompt: 'x', quality: 'high', output_format: 'webp', size: '512x512', output_compression: 50 });
      assert.equal(r.res.status, 200);
      const s = await generateJson({ model: 'prism-2', prompt: 'x', seed: 5 });
      assert.equal(s.res.status, 200);
    });

    it('requires model and prompt, and finds unknown models', async () => {
      await expect400({ prompt: 'x' }, 'model', 'missing_required_parameter');
      await expect400({ model: 'aurora-1' }, 'prompt', 'missing_required_parameter');
      await expect400({ model: 'aurora-1', prompt: '   ' }, 'prompt');
      await expect400({ model: 'acme/aurora-1', prompt: 'x' }, 'model', 'model_not_found', 404);
      await expect400({ model: 'nope', prompt: 'x' }, 'model', 'model_not_found', 404);
    });

    it('refuses unknown parameters but accepts the model passthrough ones', async () => {
      await expect400({ ...base, moderation: 'low' }, 'moderation', 'unknown_parameter');
      await expect400({ ...base, response_format: 'url' }, 'response_format', 'unknown_parameter');
      assert.equal((await generateJson({ model: 'prism-2', prompt: 'x', moderation: 'low' })).res.status, 200);
      await expect400({ model: 'prism-2', prompt: 'x', moderation: 'strict' }, 'moderation', 'invalid_value');
    });

    it('answers 400 for invalid JSON', async () => {
      const { res, text } = await generate('{"model": "aurora-1",');
      assert.equal(res.status, 400);
      assert.equal(JSON.parse(text).error.code, 'invalid_json');
      assert.equal((await generate('[1,2]')).res.status, 400);
    });

    it('checks input_references against the model', async () => {
      const png = ref(dataUrl(TINY_PNG));
      await expect400({ model: 'sketch-mini', prompt: 'x', input_references: [png] }, 'input_references', 'edit_not_supported');
      await expect400({ ...base, input_references: [png, png] }, 'input_references', 'too_many_input_references');
      await expect400({ ...base, input_references: [{ type: 'image', url: 'x' }] }, 'input_references', 'invalid_value');
      await expect400({ ...base, input_references: [ref('data:image/png,rawtext')] }, 'input_references');
      await expect400({ ...base, input_references: [ref('data:image/png;base64,@@@@')] }, 'input_references');
      await expect400({ ...base, input_references: [ref(dataUrl(Buffer.from('hello world')))] }, 'input_references', 'invalid_image');
      await expect400({ ...base, input_references: [ref('data:text/plain;base64,aGVsbG8=')] }, 'input_references', 'invalid_image');
      await expect400({ ...base, input_references: [ref('ftp://example.com/a.png')] }, 'input_references');
      await expect400({ ...base, input_references: 'x' }, 'input_references');
      await expect400({ model: 'retouch-pro', prompt: 'x' }, 'model', 'generation_not_supported');
      assert.equal((await generateJson({ model: 'retouch-pro', prompt: 'x', input_references: [png] })).res.status, 200);
      assert.equal((await generateJson({ model: 'mosaic-edit', prompt: 'x', input_references: [png, png, png, png, png] })).res.status, 200);
    });

    it('neither reserves nor charges refused requests', async () => {
      await expect400({ ...base, quality: 'ultra' }, 'quality');
      assert.equal(emu.state.balanceRub, 5000);
      assert.equal(emu.state.totalReservations, 0);
      assert.deepEqual([lastRequest().paid, lastRequest().reservedRub, lastRequest().chargedRub], [true, 0, 0]);
    });
  });

  describe('edits (multipart)', () => {
    const edit = async (form: FormData, key: string = DEMO_KEYS.unlimited) => {
      const res = await fetch(`${emu.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      return { res, body: (await res.json()) as any };
    };
    const form = (fields: Record<string, string>, files: [string, Buffer][]) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      for (const [name, bytes] of files) f.append(name, new Blob([bytes], { type: 'image/png' }), 'in.png');
      return f;
    };

    it('edits with one image and text number fields, in the generation response shape', async () => {
      const r = await edit(
        form({ model: 'aurora-1', prompt: 'make it blue', n: '2', seed: '4', output_compression: '80', aspect_ratio: '4:3' }, [['image', TINY_PNG]]),
      );
      assert.equal(r.res.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.data.length, 2);
      assert.equal(r.body.model, 'aurora-1');
      assert.ok(r.body.usage.cost_rub > 0);
      const png = decodePng(imagesOf(r.body)[0]!);
      assert.deepEqual([png.width, png.height], [1024, 768]);
      const again = await edit(
        form({ model: 'aurora-1', prompt: 'make it blue', n: '2', seed: '4', output_compression: '80', aspect_ratio: '4:3' }, [['image', TINY_PNG]]),
      );
      assert.ok(imagesOf(again.body)[0]!.equals(imagesOf(r.body)[0]!));
    });

    it('accepts several files in image[]', async () => {
      const r = await edit(
        form({ model: 'mosaic-edit', prompt: 'combine' }, [
          ['image[]', TINY_PNG],
          ['image[]', TINY_PNG],
          ['image[]', TINY_PNG],
        ]),
      );
      assert.equal(r.res.status, 200, JSON.stringify(r.body));
      const tooMany = await edit(
        form({ model: 'aurora-1', prompt: 'combine' }, [
          ['image[]', TINY_PNG],
          ['image[]', TINY_PNG],
        ]),
      );
      assert.equal(tooMany.res.status, 400);
      assert.equal(tooMany.body.error.code, 'too_many_input_references');
    });

    it('refuses non-images, missing images, bad numbers and models that cannot edit', async () => {
      const notImage = await edit(form({ model: 'aurora-1', prompt: 'x' }, [['image', Buffer.from('GIF89a not really')]]));
      assert.deepEqual([notImage.res.status, notImage.body.error.code, notImage.body.error.param], [400, 'invalid_image', 'image']);
      const none = await edit(form({ model: 'aurora-1', prompt: 'x' }, []));
      assert.deepEqual([none.res.status, none.body.error.param], [400, 'image']);
      const badN = await edit(form({ model: 'aurora-1', prompt: 'x', n: 'two' }, [['image', TINY_PNG]]));
      assert.deepEqual([badN.res.status, badN.body.error.param], [400, 'n']);
      const noEdit = await edit(form({ model: 'sketch-mini', prompt: 'x' }, [['image', TINY_PNG]]));
      assert.deepEqual([noEdit.res.status, noEdit.body.error.code], [400, 'edit_not_supported']);
      const json = await fetch(`${emu.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(json.status, 400);
    });

    it('answers 413 file_too_large for a file over 25 MB', async () => {
      const big = Buffer.alloc(25 * 1024 * 1024 + 1);
      TINY_PNG.copy(big);
      const r = await edit(form({ model: 'aurora-1', prompt: 'x' }, [['image', big]]));
      assert.deepEqual([r.res.status, r.body.error.code], [413, 'file_too_large']);
      assert.equal(emu.state.totalReservations, 0);
    });

    it('parses multipart bodies with binary content and quoted boundaries', () => {
      const binary = Buffer.from([0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff, 0x0d, 0x0a]);
      const body = Buffer.concat([
        Buffer.from('preamble\r\n--a b\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhi\r\nthere\r\n'),
        Buffer.from('--a b\r\nContent-Disposition: form-data; name="image[]"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n'),
        binary,
        Buffer.from('\r\n--a b--\r\nepilogue'),
      ]);
      const parts = parseMultipart(body, 'a b');
      assert.equal(parts.length, 2);
      assert.equal(parts[0]!.data.toString(), 'hi\r\nthere');
      assert.deepEqual([parts[1]!.name, parts[1]!.filename, parts[1]!.contentType], ['image[]', 'x.png', 'image/png']);
      assert.ok(parts[1]!.data.equals(binary));
      assert.throws(() => parseMultipart(Buffer.from('--a\r\nContent-Disposition: form-data; name="x"\r\n\r\nno end'), 'a'));
    });
  });
});
