import * as assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, mkdtemp, open, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { ValidationError } from '../../src/core/gateway/errors';
import { base64Chunks, jsonBodyWithReferences, multipartEditBody, type ReferenceFile, ReferenceFileChangedError } from '../../src/core/requests/requestBodies';

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Open descriptors of this process (Linux); undefined elsewhere. */
function openFds(): number | undefined {
  return existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : undefined;
}

interface Part {
  headers: Record<string, string>;
  body: Buffer;
}

/** A small strict multipart parser: checks CRLFs, the boundary lines and the closing delimiter. */
function parseMultipart(raw: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`);
  assert.ok(raw.subarray(0, delimiter.length).equals(delimiter), 'body starts with the boundary');
  assert.equal(raw.subarray(raw.length - delimiter.length - 4).toString('latin1'), `--${boundary}--\r\n`);
  const parts: Part[] = [];
  let pos = delimiter.length;
  for (;;) {
    const after = raw.subarray(pos, pos + 2).toString('latin1');
    if (after === '--') break;
    assert.equal(after, '\r\n');
    pos += 2;
    const headerEnd = raw.indexOf('\r\n\r\n', pos);
    const headers: Record<string, string> = {};
    for (const line of raw.subarray(pos, headerEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const next = raw.indexOf(Buffer.from(`\r\n--${boundary}`), headerEnd + 4);
    assert.ok(next >= 0, 'part is terminated');
    parts.push({ headers, body: raw.subarray(headerEnd + 4, next) });
    pos = next + 2 + delimiter.length;
  }
  return parts;
}

describe('requestBodies', function () {
  this.timeout(120_000);
  let dir: string;
  const files: Record<string, Buffer> = {};
  const ref = (name: string, mediaType = 'image/png'): ReferenceFile => ({
    path: join(dir, name),
    mediaType,
    size: files[name]!.length,
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bodies-'));
    const contents: Record<string, Buffer> = {
      'empty.png': Buffer.alloc(0),
      'one.png': randomBytes(1),
      'two.jpg': randomBytes(2),
      'three.webp': randomBytes(3),
      'mega.png': randomBytes(1024 * 1024),
      'odd.png': randomBytes(3 * 32 * 1024 + 1), // one byte past a read chunk
    };
    for (const [name, data] of Object.entries(contents)) {
      files[name] = data;
      await writeFile(join(dir, name), data);
    }
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

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
        const name = refs[i]!.path.slice(dir.length + 1);
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
      await writeFile(join(dir, name), files['one.png']!);
      const { body, contentType, contentLength } = multipartEditBody({}, [{ path: join(dir, name), mediaType: 'image/png', size: 1 }]);
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

  describe('files that change on disk', () => {
    it('rejects before sending when the size on disk differs from the announced size', async () => {
      const wrong = { ...ref('mega.png'), size: files['mega.png']!.length - 1 };
      await assert.rejects(collect(jsonBodyWithReferences({}, [wrong]).body), ReferenceFileChangedError);
      await assert.rejects(collect(multipartEditBody({}, [{ ...wrong, size: wrong.size + 2 }]).body), ReferenceFileChangedError);
    });

    it('rejects when a file grows or shrinks while it is streamed (multipart and JSON)', async () => {
      for (const [change, kind] of [
        ['grow', 'multipart'],
        ['shrink', 'multipart'],
        ['grow', 'json'],
        ['shrink', 'json'],
      ] as const) {
        const path = join(dir, `changing-${change}-${kind}.png`);
        const data = randomBytes(2 * 1024 * 1024);
        await writeFile(path, data);
        const file = { path, mediaType: 'image/png', size: data.length };
        const { body } = kind === 'multipart' ? multipartEditBody({}, [file]) : jsonBodyWithReferences({}, [file]);
        const it = body[Symbol.asyncIterator]();
        await it.next(); // part header / JSON head
        await it.next(); // first file chunk: the file is open now
        if (change === 'grow') await appendFile(path, 'more');
        else await truncate(path, 1000);
        await assert.rejects(
          (async () => {
            for (let r = await it.next(); !r.done; r = await it.next());
          })(),
          ReferenceFileChangedError,
          `${change} (${kind})`,
        );
      }
    });

    it('rejects for a missing file', async () => {
      await assert.rejects(collect(jsonBodyWithReferences({}, [{ path: join(dir, 'nope.png'), mediaType: 'image/png', size: 1 }]).body), {
        code: 'ENOENT',
      });
    });
  });

  describe('descriptors', () => {
    it('opens files only as the body is consumed and closes them when the consumer stops early', async function () {
      const before = openFds();
      if (before === undefined) this.skip();
      const path = join(dir, 'early.png');
      await writeFile(path, randomBytes(1024 * 1024));
      for (const make of [
        () => jsonBodyWithReferences({ prompt: 'p' }, [{ path, mediaType: 'image/png', size: 1024 * 1024 }]).body,
        () => multipartEditBody({ prompt: 'p' }, [{ path, mediaType: 'image/png', size: 1024 * 1024 }]).body,
      ]) {
        const body = make();
        const it = body[Symbol.asyncIterator]();
        assert.equal(openFds(), before, 'nothing opened before the first read');
        let r = await it.next();
        assert.equal(openFds(), before, 'text prefix needs no file');
        while (!r.done && openFds() === before) r = await it.next();
        assert.equal(openFds(), before + 1, 'the file is open while streaming');
        await it.return?.();
        assert.equal(openFds(), before, 'return() closed the file');
        assert.equal((await it.next()).done, true);
      }
      await unlink(path);
    });

    it('closes files after `break`, after errors, and after a full read', async function () {
      const before = openFds();
      if (before === undefined) this.skip();
      const refs = [ref('mega.png'), ref('odd.png')];
      for await (const chunk of multipartEditBody({}, refs).body) if (chunk.length > 1000) break;
      assert.equal(openFds(), before, 'break');
      await collect(jsonBodyWithReferences({}, refs).body);
      assert.equal(openFds(), before, 'full read');
      await assert.rejects(collect(jsonBodyWithReferences({}, [{ ...refs[0]!, size: 5 }]).body));
      assert.equal(openFds(), before, 'error');
    });
  });

  describe('through undici, against a server that reads slowly', () => {
    // Large chunks are handed over in one reused buffer (requestBodies.ts, REUSE_MIN_BYTES): this
    // proves undici is done with each before the next is read, with the socket's buffers full.
    let server: Server;
    let url: string;
    before(async () => {
      server = createServer((req, res) => {
        const hash = createHash('sha256');
        let bytes = 0;
        req.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          bytes += chunk.length;
          req.pause();
          setTimeout(() => req.resume(), 1);
        });
        req.on('end', () => res.end(JSON.stringify({ sha256: hash.digest('hex'), bytes })));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    for (const transport of ['multipart', 'JSON'] as const) {
      it(`${transport}: the server receives exactly the bytes of the body`, async () => {
        const files: ReferenceFile[] = [];
        // Two files end in a short (copied) chunk; the last is a whole number of reads, so it ends in
        // a reused buffer. The read buffers are shared by all files of the body.
        const sizes = [3 * 1024 * 1024 + 1000, 3 * 1024 * 1024, 3 * 1024 * 1024 + 2000];
        for (const [f, size] of sizes.entries()) {
          const path = join(dir, `slow-${transport}-${f}.png`);
          await writeFile(path, randomBytes(size));
          files.push({ path, mediaType: 'image/png', size });
        }
        const made = () =>
          transport === 'multipart'
            ? multipartEditBody({ model: 'm', prompt: 'p' }, files, 'slow-reader-boundary')
            : { ...jsonBodyWithReferences({ model: 'm', prompt: 'p' }, files), contentType: 'application/json' };
        const expected = await collect(made().body);
        const { body, contentLength, contentType } = made();
        const response = await request(url, {
          method: 'POST',
          headers: { 'content-type': contentType, 'content-length': String(contentLength) },
          body: body as unknown as Uint8Array,
        });
        const got = (await response.body.json()) as { sha256: string; bytes: number };
        assert.equal(got.bytes, expected.length);
        assert.equal(got.sha256, createHash('sha256').update(expected).digest('hex'));
      });
    }
  });

  describe('memory', () => {
    const SIZE = 25 * 1024 * 1024;
    let big: ReferenceFile[] = [];

    before(async () => {
      // Written from one 1 MB buffer, so the test itself holds no 25 MB buffer.
      const block = randomBytes(1024 * 1024);
      big = [];
      for (let f = 0; f < 4; f++) {
        const path = join(dir, `big-${f}.png`);
        const handle = await open(path, 'w');
        try {
          for (let i = 0; i < SIZE / block.length; i++) {
            block[0] = i;
            block[1] = f;
            await handle.write(block);
          }
        } finally {
          await handle.close();
        }
        big.push({ path, mediaType: 'image/png', size: SIZE });
      }
    });

    async function peakGrowth(body: AsyncIterable<Uint8Array>): Promise<{ bytes: number; growth: number }> {
      const baseline = process.memoryUsage.rss();
      let peak = baseline;
      let bytes = 0;
      for await (const chunk of body) {
        bytes += chunk.byteLength;
        peak = Math.max(peak, process.memoryUsage.rss());
      }
      if (process.env.SHOW_RSS) console.log(`    RSS growth ${((peak - baseline) / 1048576).toFixed(1)} MB`);
      return { bytes, growth: Math.max(peak, process.memoryUsage.rss()) - baseline };
    }

    it('streams 4 × 25 MB as JSON with RSS growth under 64 MB', async () => {
      const { body, contentLength } = jsonBodyWithReferences({ model: 'm', prompt: 'p' }, big);
      const { bytes, growth } = await peakGrowth(body);
      assert.equal(bytes, contentLength);
      assert.ok(contentLength > 4 * SIZE * (4 / 3));
      assert.ok(growth < 64 * 1024 * 1024, `RSS grew by ${(growth / 1048576).toFixed(1)} MB`);
    });

    it('streams 4 × 25 MB as multipart with RSS growth under 64 MB', async () => {
      const { body, contentLength } = multipartEditBody({ model: 'm', prompt: 'p' }, big);
      const { bytes, growth } = await peakGrowth(body);
      assert.equal(bytes, contentLength);
      assert.ok(contentLength > 4 * SIZE);
      assert.ok(growth < 64 * 1024 * 1024, `RSS grew by ${(growth / 1048576).toFixed(1)} MB`);
    });
  });
});
