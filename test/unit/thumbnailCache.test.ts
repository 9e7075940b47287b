// The gallery's thumbnails: made once per image (and again when the image changes), small PNGs
// for PNG results, a stand-in naming format and size for JPEG and WebP, nothing for a missing file;
// a folder bounded by bytes, the thumbnails shown longest ago removed first and made again when shown.
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { imageHeaderOf } from '../../src/core/images/imageHeader';
import { pngThumbnail } from '../../src/core/files/pngThumbnail';
import { ThumbnailCache } from '../../src/core/files/thumbnailCache';
import { ThumbnailWorker } from '../../src/core/files/thumbnailWorker';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'images');
const inProcess = (png: Buffer, side: number) => Promise.resolve(pngThumbnail(png, side));
/** The in-process decoder, counting its calls: a thumbnail made again is one more. */
function countingDecoder(): { decode: typeof inProcess; readonly calls: number } {
  let calls = 0;
  return {
    decode: (png, side) => {
      calls++;
      return inProcess(png, side);
    },
    get calls() {
      return calls;
    },
  };
}

describe('Thumbnail cache', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gi-thumbs-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a small PNG once per image, again when the image changes, and forgets it', async () => {
    const image = path.join(dir, 'result.png');
    await fs.copyFile(path.join(FIXTURES, 'python.png'), image);
    const decoder = countingDecoder();
    const cache = new ThumbnailCache(path.join(dir, 'thumbs'), decoder.decode, { side: 64 });
    const first = await cache.get(image);
    assert.ok('file' in first);
    const header = await imageHeaderOf(readFileSync(first.file));
    assert.equal(header?.mediaType, 'image/png');
    assert.ok(Math.max(header.width, header.height) <= 64, `thumbnail ${header?.width}×${header?.height}`);
    const [again, together] = await Promise.all([cache.get(image), cache.get(image)]);
    assert.deepEqual(again, first);
    assert.deepEqual(together, first);
    assert.equal(decoder.calls, 1, 'not made again');

    await fs.appendFile(image, Buffer.alloc(1)); // another size: another image
    const changed = await cache.get(image);
    assert.ok('file' in changed && changed.file !== first.file);
    await cache.forget(image);
    assert.deepEqual(await fs.readdir(path.join(dir, 'thumbs')), []);
  });

  it('keeps the folder within its bytes: the thumbnail shown longest ago goes first, and is made again when it is shown again', async () => {
    const images = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        const image = path.join(dir, `${name}.png`);
        await fs.copyFile(path.join(FIXTURES, 'python.png'), image);
        return image;
      }),
    );
    const [a, b, c] = images as [string, string, string];
    const thumbs = path.join(dir, 'thumbs');
    const bytes = pngThumbnail(readFileSync(a), 64)!.length;
    const decoder = countingDecoder();
    // Room for two thumbnails, not three.
    const cache = new ThumbnailCache(thumbs, decoder.decode, { side: 64, maxBytes: Math.floor(bytes * 2.5) });
    const fileOf = async (image: string) => ((await cache.get(image)) as { file: string }).file;
    const [ofA, ofB] = [await fileOf(a), await fileOf(b)];
    assert.equal(await fileOf(a), ofA, 'a shown again: now the one shown last');
    assert.equal(decoder.calls, 2);
    const ofC = await fileOf(c);
    assert.equal(decoder.calls, 3);
    assert.deepEqual((await fs.readdir(thumbs)).sort(), [ofA, ofC].map((f) => path.basename(f)).sort(), 'b, shown longest ago, was removed');

    assert.equal(await fileOf(b), ofB, 'b shown again');
    assert.equal(decoder.calls, 4, 'b was made again');
    assert.ok(readFileSync(ofB).equals(pngThumbnail(readFileSync(b), 64)!));
    assert.deepEqual((await fs.readdir(thumbs)).sort(), [ofB, ofC].map((f) => path.basename(f)).sort(), 'now a went: c and b were shown after it');

    // A restart: the folder is read oldest first (by the time each was made or last shown), and cut to a smaller bound.
    const now = Date.now() / 1000;
    await fs.utimes(ofB, now - 60, now - 60);
    await fs.utimes(ofC, now, now);
    await fs.writeFile(path.join(thumbs, `${path.basename(ofA)}.1234.deadbeef.tmp`), 'left by a process that died');
    const oneHourAgo = now - 3601;
    await fs.utimes(path.join(thumbs, `${path.basename(ofA)}.1234.deadbeef.tmp`), oneHourAgo, oneHourAgo);
    const restarted = new ThumbnailCache(thumbs, decoder.decode, { side: 64, maxBytes: Math.floor(bytes * 1.5) });
    assert.equal(((await restarted.get(c)) as { file: string }).file, ofC);
    assert.equal(decoder.calls, 4, 'c was still there');
    assert.deepEqual(await fs.readdir(thumbs), [path.basename(ofC)], 'b (older) went, and so did the stale temporary file');
  });

  it('JPEG and WebP get a stand-in with format and size; a missing file gets none', async () => {
    const cache = new ThumbnailCache(path.join(dir, 'thumbs'), inProcess);
    const jpeg = await cache.get(path.join(FIXTURES, 'python.jpg'));
    const size = await imageHeaderOf(readFileSync(path.join(FIXTURES, 'python.jpg')));
    assert.deepEqual(jpeg, { format: 'JPEG', width: size!.width, height: size!.height });
    assert.equal(((await cache.get(path.join(FIXTURES, 'python.webp'))) as { format: string }).format, 'WEBP');
    assert.deepEqual(await cache.get(path.join(dir, 'gone.png')), { missing: true });
  });

  it('the worker thread makes the same thumbnail as the extension host would, and reports what it cannot decode', async () => {
    const worker = new ThumbnailWorker(path.resolve(__dirname, '..', '..', 'src', 'core', 'files', 'thumbnailWorkerMain.js'));
    try {
      const png = readFileSync(path.join(FIXTURES, 'python.png'));
      const [fromWorker, again] = await Promise.all([worker.decode(png, 48), worker.decode(png, 48)]);
      assert.deepEqual(fromWorker, pngThumbnail(png, 48));
      assert.deepEqual(again, fromWorker);
      assert.equal(await worker.decode(Buffer.from('not a png'), 48), undefined);
    } finally {
      worker.dispose();
    }
  });
});
