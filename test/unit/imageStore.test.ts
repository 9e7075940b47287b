// The image store: staging files, placing without overwrite under concurrent races, recovery manifests.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { extensionOf, linkWithoutOverwrite, placeWithoutOverwrite, StagingSink } from '../../src/core/files/imageStore';
import { buildITXtChunk, IEND_CHUNK, readPngTextChunk } from '../../src/core/files/pngText';
import { canFailSync, makeCloseFail, makeSyncFail } from './support/failingSync';
import { listFiles, removeDir, tempDir, TINY_PNG } from './support/gateway';

describe('imageStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-store-');
  });
  afterEach(() => removeDir(dir));

  describe('StagingSink', () => {
    it('writes .part, renames to .img on close, sniffs the type', async () => {
      const sink = new StagingSink(path.join(dir, 'staging'), { jobId: 'job1' });
      const writer = await sink.open(0);
      await writer.write(TINY_PNG.subarray(0, 10));
      assert.deepEqual(await listFiles(path.join(dir, 'staging')), ['job1-0.part']);
      await writer.write(TINY_PNG.subarray(10));
      await writer.close();
      assert.deepEqual(await listFiles(path.join(dir, 'staging')), ['job1-0.img']);
      const [image] = sink.images;
      assert.equal(image!.bytes, TINY_PNG.length);
      assert.equal(image!.sniffed?.extension, 'png');
      assert.ok((await readFile(image!.path)).equals(TINY_PNG));
    });
    it('an Inkscape-style SVG (BOM, XML declaration, comments, DOCTYPE) written in small chunks is sniffed as svg, even with a PNG media_type', async () => {
      const svg = Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(
          '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!-- Created with Inkscape (http://www.inkscape.org/) -->\n\n' +
            '<!-- a second, longer comment that pushes the root element well past the first 64 bytes of the file -->\n' +
            '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n' +
            '<svg\n   width="64"\n   height="64"\n   xmlns="http://www.w3.org/2000/svg"><rect width="64" height="64"/></svg>\n',
        ),
      ]);
      const sink = new StagingSink(dir, { jobId: 'svg1' });
      const writer = await sink.open(0);
      for (let at = 0; at < svg.length; at += 7) await writer.write(svg.subarray(at, at + 7));
      await writer.close();
      const [image] = sink.images;
      assert.equal(image!.sniffed?.extension, 'svg');
      assert.equal(extensionOf(image!, 'image/png'), 'svg', 'the bytes win over a wrong media_type');
    });
    it('abort removes the partial file and reports no image', async () => {
      const sink = new StagingSink(dir, { jobId: 'job2' });
      const writer = await sink.open(0);
      await writer.write(Buffer.from('half'));
      await writer.abort(new Error('cut'));
      assert.deepEqual(await listFiles(dir), []);
      assert.deepEqual(sink.images, []);
    });
    it('adds the PNG chunk before IEND while writing; none to other images; says why when a PNG does not end in IEND', async () => {
      const chunk = buildITXtChunk('gateway-images', '{"prompt":"кот"}');
      const asked: number[] = [];
      const sink = new StagingSink(dir, { jobId: 'prov', pngChunkFor: (index) => (asked.push(index), chunk) });
      const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9]);
      const damaged = Buffer.concat([TINY_PNG, Buffer.from('trailing bytes')]);
      for (const [index, bytes] of [TINY_PNG, jpeg, damaged].entries()) {
        const writer = await sink.open(index);
        // Small pieces: IEND arrives split over writes.
        for (let at = 0; at < bytes.length; at += 5) await writer.write(bytes.subarray(at, at + 5));
        await writer.close();
      }
      const [png, other, bad] = sink.images;
      assert.equal(png!.pngChunk, 'added');
      const written = await readFile(png!.path);
      assert.ok(written.equals(Buffer.concat([TINY_PNG.subarray(0, TINY_PNG.length - 12), chunk, IEND_CHUNK])), 'the chunk sits before IEND');
      assert.equal(png!.bytes, written.length);
      assert.equal(await readPngTextChunk(png!.path, 'gateway-images'), '{"prompt":"кот"}');
      assert.equal(other!.pngChunk, undefined, 'a JPEG gets no PNG chunk');
      assert.ok((await readFile(other!.path)).equals(jpeg));
      assert.match((bad!.pngChunk as { error: string }).error, /IEND/);
      assert.ok((await readFile(bad!.path)).equals(damaged), 'a PNG that cannot take the chunk is kept as it came');
      assert.deepEqual(asked, [0, 2], 'only PNGs are asked for a chunk');
      await sink.durable();
    });
    it('adds the PNG chunk also when the last batch was written before IEND ended (a positional write)', async () => {
      const chunk = buildITXtChunk('gateway-images', 'late');
      const sink = new StagingSink(dir, { jobId: 'late', pngChunkFor: () => chunk });
      // Over the 1 MiB batch: everything but the last 5 bytes goes out before close.
      const png = Buffer.concat([TINY_PNG.subarray(0, TINY_PNG.length - 12), Buffer.alloc(1024 * 1024), IEND_CHUNK]);
      const writer = await sink.open(0);
      await writer.write(png.subarray(0, png.length - 5));
      await writer.write(png.subarray(png.length - 5));
      await writer.close();
      const [image] = sink.images;
      assert.equal(image!.pngChunk, 'added');
      assert.ok((await readFile(image!.path)).equals(Buffer.concat([png.subarray(0, png.length - 12), chunk, IEND_CHUNK])));
      await sink.durable();
    });
    it('a failed sync is not swallowed: durable settles with the error, the bytes written stay', async function () {
      if (!canFailSync) this.skip();
      const sink = new StagingSink(dir, { jobId: 'sync' });
      const writer = await sink.open(0);
      const bytes = Buffer.concat([TINY_PNG, Buffer.alloc(1024 * 1024)]);
      await writer.write(bytes); // a full batch: on disk before close
      makeSyncFail(path.join(dir, 'sync-0.part'));
      await writer.close();
      const [image] = sink.images;
      const failure = await image!.durable;
      assert.ok(failure instanceof Error, `durable settled with ${String(failure)}`);
      assert.match(failure.message, /EINVAL/);
      assert.deepEqual(await sink.durable(), [failure]);
      assert.ok((await readFile(image!.path)).equals(bytes));
    });
    it('job ids are unique', () => {
      const ids = new Set(Array.from({ length: 50 }, () => new StagingSink(dir).jobId));
      assert.equal(ids.size, 50);
    });
  });

  describe('placeWithoutOverwrite', () => {
    const source = async (name: string, content: string) => {
      const file = path.join(dir, name);
      await writeFile(file, content);
      return file;
    };
    it('moves the file and keeps an existing one', async () => {
      const out = path.join(dir, 'out', 'nested');
      const first = await placeWithoutOverwrite(await source('s1', 'one'), out, 'pic', 'png');
      const second = await placeWithoutOverwrite(await source('s2', 'two'), out, 'pic', 'png');
      assert.equal(first, path.join(out, 'pic.png'));
      assert.equal(second, path.join(out, 'pic-2.png'));
      assert.equal(await readFile(first, 'utf8'), 'one');
      assert.equal(await readFile(second, 'utf8'), 'two');
      assert.ok(!existsSync(path.join(dir, 's1')), 'the source is gone');
    });
    it('linkWithoutOverwrite keeps the source, creates a missing folder, and fails on a missing source', async () => {
      const out = path.join(dir, 'new', 'folder');
      const s = await source('staged', 'bytes');
      assert.equal(await linkWithoutOverwrite(s, out, 'pic', 'png'), path.join(out, 'pic.png'));
      assert.equal(await readFile(s, 'utf8'), 'bytes', 'the source stays');
      assert.equal(await linkWithoutOverwrite(s, out, 'pic', 'png'), path.join(out, 'pic-2.png'), 'a taken name gets the next suffix');
      await assert.rejects(linkWithoutOverwrite(path.join(dir, 'gone'), out, 'pic', 'png'), (e: NodeJS.ErrnoException) => e.code === 'ENOENT');
      assert.deepEqual((await listFiles(out)).sort(), ['pic-2.png', 'pic.png']);
    });
    it('a different extension is a different name', async () => {
      await writeFile(path.join(dir, 'pic.png'), 'x');
      assert.equal(await placeWithoutOverwrite(await source('s', 'y'), dir, 'pic', 'jpg'), path.join(dir, 'pic.jpg'));
    });
    it('40 concurrent placements of one name: 40 distinct files, nothing overwritten', async () => {
      const out = path.join(dir, 'race');
      const sources = await Promise.all(Array.from({ length: 40 }, (_, i) => source(`src-${i}`, `content-${i}`)));
      const placed = await Promise.all(sources.map((s) => placeWithoutOverwrite(s, out, 'same', 'png')));
      assert.equal(new Set(placed).size, 40);
      const contents = await Promise.all(placed.map((p) => readFile(p, 'utf8')));
      assert.deepEqual([...contents].sort(), Array.from({ length: 40 }, (_, i) => `content-${i}`).sort());
      placed.forEach((p, i) => assert.equal(contents[i], `content-${i}`, `${p} holds its own source`));
      assert.equal((await listFiles(out)).length, 40);
    });
    it('a file in place of the folder fails with ENOTDIR and leaves the source', async () => {
      await writeFile(path.join(dir, 'blocker'), '');
      const s = await source('keep-me', 'data');
      await assert.rejects(placeWithoutOverwrite(s, path.join(dir, 'blocker', 'sub'), 'x', 'png'), (e: NodeJS.ErrnoException) => e.code === 'ENOTDIR');
      assert.equal(await readFile(s, 'utf8'), 'data');
    });
  });

  it('extensionOf: magic bytes, then media_type, then png', () => {
    assert.equal(extensionOf({ index: 0, path: 'x', bytes: 1, sniffed: { extension: 'webp', mediaType: 'image/webp' } as never }, 'image/png'), 'webp');
    assert.equal(extensionOf({ index: 0, path: 'x', bytes: 1 }, 'image/jpeg'), 'jpg');
    assert.equal(extensionOf({ index: 0, path: 'x', bytes: 1 }), 'png');
  });
});

describe('imageStore: a failed close', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-store-close-');
  });
  afterEach(() => removeDir(dir));

  it('a failed close after a good sync is not swallowed: durable settles with the error, the image and its bytes stay', async () => {
    const sink = new StagingSink(dir, { jobId: 'close' });
    makeCloseFail(sink);
    const writer = await sink.open(0);
    const bytes = Buffer.concat([TINY_PNG, Buffer.alloc(64 * 1024)]);
    await writer.write(bytes);
    await writer.close();
    const [image] = sink.images;
    const failure = await image!.durable;
    assert.ok(failure instanceof Error, `durable settled with ${String(failure)}`);
    assert.match(failure.message, /EBADF.*close/);
    assert.deepEqual(await sink.durable(), [failure]);
    assert.ok((await readFile(image!.path)).equals(bytes), 'the synced bytes are in the staged image');
  });
});
