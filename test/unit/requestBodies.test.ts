// Request bodies with reference images, streamed from disk: base64 in JSON, and multipart edits,
// byte-exact and with the Content-Length announced before the first byte.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import { base64Chunks, jsonBodyWithReferences, multipartEditBody } from '../../src/core/requests/requestBodies';
import { collect, parseMultipart, useReferenceFiles } from './support/referenceFiles';

describe('requestBodies', function () {
  this.timeout(120_000);
  const reference = useReferenceFiles();
  const { files, ref } = reference;

  describe('base64Chunks', () => {
    it('encodes any chunking exactly like one-shot base64', async () => {
      const data = randomBytes(10_000);
      for (const sizes of [[1], [2], [4], [7, 1, 1, 5], [3], [9999, 1], [10_000]]) {
        async function* chunks(): AsyncGenerator<Uint8Array> {
          let pos = 0;
          for (let i = 0; pos < data.length; i++) {
            const n = sizes[i % sizes.length]!;
            yield data.subarray(pos, pos + n);
            pos += n;
          }
        }
        const encoded = (await collect(base64Chunks(chunks()))).toString('latin1');
        assert.equal(encoded, data.toString('base64'), `chunk sizes ${sizes.join(',')}`);
      }
      assert.equal((await collect(base64Chunks((async function* () {})()))).length, 0);
    });
  });

  describe('jsonBodyWithReferences', () => {
    const fields = {
      model: 'flux-pro',
      prompt: 'A "quoted" fox\nнад рекой 🦊 \\ </script>',
      n: 2,
      seed: 0,
      moderation: 'low',
      watermark: false,
    };

    it('produces valid JSON: the fields, then the references decoding to the exact file bytes', async () => {
      const names = ['empty.png', 'one.png', 'two.jpg', 'three.webp', 'mega.png', 'odd.png'];
      const types = ['image/png', 'image/png', 'image/jpeg', 'image/webp', 'image/png', 'image/png'];
      const refs = names.map((n, i) => ref(n, types[i]));
      const { body, contentLength } = jsonBodyWithReferences(fields, refs);
      const raw = await collect(body);
      assert.equal(raw.length, contentLength);
      const parsed = JSON.parse(raw.toString('utf8'));
      assert.deepEqual(Object.keys(parsed), [...Object.keys(fields), 'input_references']);
      const { input_references: references, ...rest } = parsed;
      assert.deepEqual(rest, fields);
      assert.equal(references.length, names.length);
      references.forEach((r: { type: string; image_url: { url: string } }, i: number) => {
        assert.equal(r.type, 'image_url');
        assert.deepEqual(Object.keys(r.image_url), ['url']);
        const prefix = `data:${types[i]};base64,`;
        assert.ok(r.image_url.url.startsWith(prefix), r.image_url.url.slice(0, 40));
        const b64 = r.image_url.url.slice(prefix.length);
        assert.equal(b64.length, 4 * Math.ceil(files[names[i]!]!.length / 3));
        assert.ok(Buffer.from(b64, 'base64').equals(files[names[i]!]!), names[i]);
      });
    });

    it('computes contentLength exactly for each small size', async () => {
      for (const name of ['empty.png', 'one.png', 'two.jpg', 'three.webp']) {
        const { body, contentLength } = jsonBodyWithReferences({ model: 'm', prompt: 'p' }, [ref(name)]);
        assert.equal((await collect(body)).length, contentLength, name);
      }
    });

    it('works with no other fields', async () => {
      const { body, contentLength } = jsonBodyWithReferences({}, [ref('one.png')]);
      const raw = await collect(body);
      assert.equal(raw.length, contentLength);
      assert.deepEqual(JSON.parse(raw.toString()), {
        input_references: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${files['one.png']!.toString('base64')}` } }],
      });
    });

    it('omits input_references when there are none', async () => {
      const { body, contentLength } = jsonBodyWithReferences(fields, []);
      const raw = await collect(body);
      assert.equal(raw.toString('utf8'), JSON.stringify(fields));
      assert.equal(raw.length, contentLength);
    });

    it('rejects fields that already carry input_references, and unsupported media types', () => {
      assert.throws(() => jsonBodyWithReferences({ input_references: [] }, [ref('one.png')]), TypeError);
      assert.throws(() => jsonBodyWithReferences({}, [ref('one.png', 'image/gif')]), ValidationError);
      assert.throws(() => jsonBodyWithReferences({}, [ref('one.png', 'image/png"}')]), ValidationError);
      assert.throws(() => jsonBodyWithReferences({}, [{ ...ref('one.png'), size: -1 }]), RangeError);
    });

    it('can be read twice with the same result', async () => {
      const { body } = jsonBodyWithReferences(fields, [ref('odd.png')]);
      assert.ok((await collect(body)).equals(await collect(body)));
    });
  });

  describe('multipartEditBody', () => {
    const boundaryOf = (contentType: string): string => {
      const m = /^multipart\/form-data; boundary=([^;]+)$/.exec(contentType);
      assert.ok(m, contentType);
      return m[1]!;
    };

    it('sends text fields, then several files as image[] with exact bytes and length', async () => {
      const refs = [ref('mega.png'), ref('two.jpg', 'image/jpeg'), ref('empty.png'), ref('odd.png', 'image/webp')];
      const { body, contentType, contentLength } = multipartEditBody(
        { model: 'flux-kontext', prompt: 'make it "night"\r\nплease', n: 2, transparent: true },
        refs,
      );
      const raw = await collect(body);
      assert.equal(raw.length, contentLength);
      const parts = parseMultipart(raw, boundaryOf(contentType));
      assert.deepEqual(
        parts.slice(0, 4).map((p) => [p.headers['content-disposition'], p.body.toString('utf8')]),
        [
          ['form-data; name="model"', 'flux-kontext'],
          ['form-data; name="prompt"', 'make it "night"\r\nплease'],
          ['form-data; name="n"', '2'],
          ['form-data; name="transparent"', 'true'],
        ],
      );
      const fileParts = parts.slice(4);
      assert.equal(fileParts.length, refs.length);
      fileParts.forEach((p, i) => {
        const name = refs[i]!.path.slice(reference.dir.length + 1);
        assert.equal(p.headers['content-disposition'], `form-data; name="image[]"; filename="${name}"`);
        assert.equal(p.headers['content-type'], refs[i]!.mediaType);
        assert.ok(p.body.equals(files[name]!), name);
      });
    });

    it('is understood by a standard form-data parser (undici Response.formData)', async () => {
      const refs = [ref('odd.png'), ref('three.webp', 'image/webp')];
      const { body, contentType } = multipartEditBody({ model: 'm', prompt: 'p' }, refs);
      const form = await new Response(await collect(body), { headers: { 'content-type': contentType } }).formData();
      assert.equal(form.get('model'), 'm');
      assert.equal(form.get('prompt'), 'p');
      const images = form.getAll('image[]') as unknown as Blob[];
      assert.equal(images.length, 2);
      assert.ok(Buffer.from(await images[0]!.arrayBuffer()).equals(files['odd.png']!));
      assert.equal(images[0]!.type, 'image/png');
      assert.equal((images[0] as unknown as { name: string }).name, 'odd.png');
      assert.ok(Buffer.from(await images[1]!.arrayBuffer()).equals(files['three.webp']!));
      assert.equal(images[1]!.type, 'image/webp');
    });

    it('names a single file `image`', async () => {
      const { body, contentType, contentLength } = multipartEditBody({ prompt: 'x' }, [ref('three.webp', 'image/webp')]);
      const raw = await collect(body);
      assert.equal(raw.length, contentLength);
      const parts = parseMultipart(raw, boundaryOf(contentType));
      assert.equal(parts[1]!.headers['content-disposition'], 'form-data; name="image"; filename="three.webp"');
      assert.ok(parts[1]!.body.equals(files['three.webp']!));
    });

    it('escapes quotes, CR and LF in file names', async () => {
      const name = 'we"ird\r\nname ёж.png';
      await writeFile(join(reference.dir, name), files['one.png']!);
      const { body, contentType, contentLength } = multipartEditBody({}, [{ path: join(reference.dir, name), mediaType: 'image/png', size: 1 }]);
      const raw = await collect(body);
      assert.equal(raw.length, contentLength, 'length counts UTF-8 bytes of the name');
      const parts = parseMultipart(raw, boundaryOf(contentType));
      assert.equal(parts.length, 1);
      assert.equal(parts[0]!.headers['content-disposition'], 'form-data; name="image"; filename="we%22ird%0D%0Aname ёж.png"');
      assert.ok(parts[0]!.body.equals(files['one.png']!));
    });

    it('uses a random boundary by default, or the one given', () => {
      const a = boundaryOf(multipartEditBody({}, [ref('one.png')]).contentType);
      const b = boundaryOf(multipartEditBody({}, [ref('one.png')]).contentType);
      assert.notEqual(a, b);
      assert.ok(a.length >= 32 && a.length <= 70);
      assert.equal(multipartEditBody({}, [ref('one.png')], 'xyz').contentType, 'multipart/form-data; boundary=xyz');
    });

    it('rejects invalid boundaries, no files and unsupported media types', () => {
      for (const bad of ['', 'a b', 'a"b', 'x'.repeat(71), 'a\r\nb']) {
        assert.throws(() => multipartEditBody({}, [ref('one.png')], bad), TypeError, JSON.stringify(bad));
      }
      assert.throws(() => multipartEditBody({ prompt: 'x' }, []), ValidationError);
      assert.throws(() => multipartEditBody({}, [ref('one.png', 'image/svg+xml')]), ValidationError);
    });
  });
});
