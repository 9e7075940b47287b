import * as assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { imageHeaderOf, readImageHeaderFile } from '../../src/core/images/imageHeader';
import { encodePng, paintPng, pngChunk } from '../../tools/emulator/png';

const FIXTURES = join(__dirname, '../../../test/fixtures/images');
// Real WebP encodings (the feature-detection images of Modernizr): lossy VP8, lossless VP8L with alpha.
const WEBP_LOSSY = Buffer.from('UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'base64');
const WEBP_LOSSLESS_ALPHA = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');

/** A real RGB PNG with a tRNS chunk inserted after IHDR. */
function rgbPngWithTrns(): Buffer {
  const png = paintPng({ width: 8, height: 4, transparent: false, identity: 'trns' });
  const ihdrEnd = 8 + 8 + 13 + 4;
  return Buffer.concat([png.subarray(0, ihdrEnd), pngChunk('tRNS', Buffer.from([0, 0, 0, 0, 0, 0])), png.subarray(ihdrEnd)]);
}

describe('imageHeader', () => {
  it('reads size and alpha of real RGBA and RGB PNGs', async () => {
    assert.deepEqual(await imageHeaderOf(paintPng({ width: 40, height: 30, transparent: true, identity: 'a' })), {
      mediaType: 'image/png',
      width: 40,
      height: 30,
      alpha: true,
    });
    assert.deepEqual(await imageHeaderOf(paintPng({ width: 40, height: 30, transparent: false, identity: 'a' })), {
      mediaType: 'image/png',
      width: 40,
      height: 30,
      alpha: false,
    });
  });

  it('takes a tRNS chunk before IDAT as alpha (RGB and palette PNG)', async () => {
    assert.equal((await imageHeaderOf(rgbPngWithTrns()))?.alpha, true);
    assert.deepEqual(await readImageHeaderFile(join(FIXTURES, 'python.png')), { mediaType: 'image/png', width: 16, height: 16, alpha: true });
  });

  it('does not take a tRNS-like chunk after IDAT for alpha', async () => {
    const png = encodePng(2, 2, 3, Buffer.alloc(2 * 7));
    const iend = png.length - 12;
    const late = Buffer.concat([png.subarray(0, iend), pngChunk('tRNS', Buffer.alloc(6)), png.subarray(iend)]);
    assert.equal((await imageHeaderOf(late))?.alpha, false);
  });

  it('reads a real JPEG: size from the frame header, never alpha', async () => {
    assert.deepEqual(await readImageHeaderFile(join(FIXTURES, 'python.jpg')), { mediaType: 'image/jpeg', width: 16, height: 16, alpha: false });
  });

  it('skips a large APP1 (Exif) segment before the frame header', async () => {
    const jpeg = await readFile(join(FIXTURES, 'python.jpg'));
    const exif = Buffer.alloc(4 + 60_000);
    exif.writeUInt16BE(0xffe1, 0);
    exif.writeUInt16BE(60_000 + 2, 2);
    const withExif = Buffer.concat([jpeg.subarray(0, 2), exif, jpeg.subarray(2)]);
    assert.deepEqual(await imageHeaderOf(withExif), { mediaType: 'image/jpeg', width: 16, height: 16, alpha: false });
  });

  it('reads real WebP files: VP8X alpha flag, VP8L alpha hint, lossy VP8 without alpha', async () => {
    assert.deepEqual(await readImageHeaderFile(join(FIXTURES, 'python.webp')), { mediaType: 'image/webp', width: 16, height: 16, alpha: true });
    assert.deepEqual(await imageHeaderOf(WEBP_LOSSLESS_ALPHA), { mediaType: 'image/webp', width: 1, height: 1, alpha: true });
    assert.deepEqual(await imageHeaderOf(WEBP_LOSSY), { mediaType: 'image/webp', width: 1, height: 1, alpha: false });
  });

  it('reads a GIF logical screen size', async () => {
    assert.deepEqual(await readImageHeaderFile(join(FIXTURES, 'python.gif')), { mediaType: 'image/gif', width: 16, height: 16, alpha: false });
  });

  it('gives undefined for cut-off headers and other files', async () => {
    const png = paintPng({ width: 4, height: 4, transparent: true, identity: 'x' });
    assert.equal(await imageHeaderOf(png.subarray(0, 20)), undefined);
    assert.equal(await imageHeaderOf(Buffer.from('hello world, not an image')), undefined);
    const jpeg = await readFile(join(FIXTURES, 'python.jpg'));
    assert.equal(await imageHeaderOf(jpeg.subarray(0, 30)), undefined);
  });
});
