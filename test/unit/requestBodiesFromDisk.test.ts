// Request bodies read from disk while they are sent: files that change under them, the descriptors
// they hold, a server that reads slowly (through undici), and the memory a large body takes.
import * as assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFile, open, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { jsonBodyWithReferences, multipartEditBody, type ReferenceFile, ReferenceFileChangedError } from '../../src/core/requests/requestBodies';
import { collect, openFds, useReferenceFiles } from './support/referenceFiles';

describe('requestBodies', function () {
  this.timeout(120_000);
  const reference = useReferenceFiles();
  const { files, ref } = reference;

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
        const path = join(reference.dir, `changing-${change}-${kind}.png`);
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
      await assert.rejects(collect(jsonBodyWithReferences({}, [{ path: join(reference.dir, 'nope.png'), mediaType: 'image/png', size: 1 }]).body), {
        code: 'ENOENT',
      });
    });
  });

  describe('descriptors', () => {
    it('opens files only as the body is consumed and closes them when the consumer stops early', async function () {
      const before = openFds();
      if (before === undefined) this.skip();
      const path = join(reference.dir, 'early.png');
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
          const path = join(reference.dir, `slow-${transport}-${f}.png`);
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
        const path = join(reference.dir, `big-${f}.png`);
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
