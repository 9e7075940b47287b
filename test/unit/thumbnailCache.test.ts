// The gallery's thumbnails: made once per image (and again when the image changes), small PNGs
// for PNG results, a stand-in naming format and size for JPEG and WebP, nothing for a missing file.
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { imageHeaderOf } from '../../src/core/imageHeader';
import { pngThumbnail } from '../../src/core/pngThumbnail';
import { ThumbnailCache } from '../../src/core/thumbnailCache';
import { ThumbnailWorker } from '../../src/core/thumbnailWorker';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'images');
const inProcess = (png: Buffer, side: number) => Promise.resolve(pngThumbnail(png, side));

describe('Thumbnail cache', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gi-thumbs-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a small PNG once per image, again when the image changes, and forgets it', async () => {
    const image = path.join(dir, 'result.png');
    await fs.copyFile(path.join(FIXTURES, 'python.png'), image);
    const cache = new ThumbnailCache(path.join(dir, 'thumbs'), inProcess, 64);
    const first = await cache.get(image);
    assert.ok('file' in first);
    const header = await imageHeaderOf(readFileSync(first.file));
    assert.equal(header?.mediaType, 'image/png');
    assert.ok(Math.max(header.width, header.height) <= 64, `thumbnail ${header?.width}×${header?.height}`);
    const made = (await fs.stat(first.file)).mtimeMs;
    const [again, together] = await Promise.all([cache.get(image), cache.get(image)]);
    assert.deepEqual(again, first);
    assert.deepEqual(together, first);
    assert.equal((await fs.stat(first.file)).mtimeMs, made, 'not made again');

    await fs.appendFile(image, Buffer.alloc(1)); // another size: another image
    const changed = await cache.get(image);
    assert.ok('file' in changed && changed.file !== first.file);
    await cache.forget(image);
    assert.deepEqual(await fs.readdir(path.join(dir, 'thumbs')), []);
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
    const worker = new ThumbnailWorker(path.resolve(__dirname, '..', '..', 'src', 'core', 'thumbnailWorkerMain.js'));
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
