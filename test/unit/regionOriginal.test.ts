// jobs/regionOriginal.ts: what the studio's region editor learns of an original before anyone paints
// on it: the size a viewer shows (a JPEG's EXIF quarter turn swaps width and height, as the decoder
// does), and the decoder's refusals said at once, from the header, without decoding the pixels.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { decodeImage, encodePng } from '../../src/core/images/codecs';
import { ValidationError } from '../../src/core/gateway/errors';
import { regionOriginalInfo } from '../../src/jobs/regionOriginal';
import { chunk, encodeJpeg, noise, PNG_SIGNATURE, solid, withOrientation, writePng } from '../support/regionImages';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/images');

describe('Region editor: the original measured and checked from its header', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'region-original-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, bytes: Uint8Array) => {
    const file = path.join(dir, name);
    writeFileSync(file, bytes);
    return file;
  };

  async function refused(file: string): Promise<ValidationError> {
    try {
      await regionOriginalInfo(file);
    } catch (error) {
      assert.ok(error instanceof ValidationError, String(error));
      assert.equal(error.field, 'images');
      return error;
    }
    assert.fail(`${path.basename(file)} was not refused`);
  }

  it('gives the size of a PNG and of a WebP fixture, as decoding does', async () => {
    assert.deepEqual(await regionOriginalInfo(write('noise.png', encodePng(noise(37, 21, 5)))), { width: 37, height: 21 });
    for (const name of ['python.png', 'python.webp', 'python.jpg']) {
      const bytes = readFileSync(path.join(FIXTURES, name));
      const decoded = await decodeImage(bytes);
      assert.deepEqual(await regionOriginalInfo(path.join(FIXTURES, name)), { width: decoded.width, height: decoded.height }, name);
    }
  });

  it('turns a JPEG as its EXIF orientation says: 5 to 8 swap width and height, like the decoder and the page', async () => {
    const jpeg = await encodeJpeg(solid(32, 16, [200, 10, 10, 255]), 90);
    for (let orientation = 1; orientation <= 8; orientation++) {
      const file = write(`turned-${orientation}.jpg`, withOrientation(jpeg, orientation, orientation % 2 === 0));
      const decoded = await decodeImage(readFileSync(file));
      const info = await regionOriginalInfo(file);
      assert.deepEqual(info, { width: decoded.width, height: decoded.height }, `orientation ${orientation}`);
      assert.deepEqual(info, orientation >= 5 ? { width: 16, height: 32 } : { width: 32, height: 16 });
    }
  });

  it('refuses SVG, GIF, animated PNG and WebP, oversized and missing files with the field and what is allowed', async () => {
    const svg = await refused(write('drawing.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')));
    assert.match(svg.message, /"drawing\.svg" cannot be region-edited: .*SVG.*PNG, JPEG or WebP/);
    const gif = await refused(path.join(FIXTURES, 'python.gif'));
    assert.match(gif.message, /GIF/);
    const actl = Buffer.alloc(8);
    actl.writeUInt32BE(2, 0);
    const apng = await refused(
      write('moving.png', writePng({ width: 2, height: 2, depth: 8, colorType: 6, samples: () => [1, 2, 3, 255], extra: [chunk('acTL', actl)] })),
    );
    assert.match(apng.message, /animated images cannot be region-edited/);
    const vp8x = Buffer.concat([Buffer.from('VP8X'), Buffer.from([10, 0, 0, 0, 0x02, 0, 0, 0, 1, 0, 0, 1, 0, 0])]);
    const body = Buffer.concat([Buffer.from('WEBP'), vp8x]);
    const size = Buffer.alloc(4);
    size.writeUInt32LE(body.length, 0);
    assert.match((await refused(write('moving.webp', Buffer.concat([Buffer.from('RIFF'), size, body])))).message, /animated/);
    // Only a header: the refusal comes before any pixel would be decoded.
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(8192, 0);
    ihdr.writeUInt32BE(4097, 4);
    ihdr.set([8, 6, 0, 0, 0], 8);
    const huge = Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(10))), chunk('IEND', Buffer.alloc(0))]);
    assert.match((await refused(write('huge.png', huge))).message, /8192×4097.*at most/);
    assert.match((await refused(path.join(dir, 'gone.png'))).message, /Cannot read "gone\.png"/);
    assert.match((await refused(write('text.png', Buffer.from('not an image')))).message, /PNG, JPEG or WebP/);
  });
});
