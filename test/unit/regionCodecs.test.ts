// core/images/codecs.ts and pngDecode.ts: whole images to RGBA and back for region edits. PNGs of
// every colour type and bit depth, interlaced or not (written here by a small encoder), JPEG and WebP
// (Squoosh's encoders, as tools/emulator/formats.ts), and the refusals: SVG, GIF, animated PNG and
// WebP, oversized and damaged images.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { decodeImage, encodePng } from '../../src/core/images/codecs';
import { ImageRefused, type RgbaImage } from '../../src/core/images/pixels';
import { chunk, encodeJpeg, encodeWebp, noise, PNG_SIGNATURE as SIGNATURE, solid, withOrientation, writePng } from '../support/regionImages';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/images');

function pixelAt(image: RgbaImage, x: number, y: number): number[] {
  const p = (y * image.width + x) * 4;
  return Array.from(image.data.subarray(p, p + 4));
}

async function refusal(bytes: Uint8Array): Promise<ImageRefused> {
  try {
    await decodeImage(bytes);
  } catch (error) {
    assert.ok(error instanceof ImageRefused, `not an ImageRefused: ${String(error)}`);
    return error;
  }
  assert.fail('decoded, not refused');
}

describe('Region edit codecs: PNG, JPEG and WebP to RGBA and back', () => {
  it('encodePng is lossless: decodeImage gives the same bytes back, at odd sizes too', async () => {
    for (const [w, h] of [
      [1, 1],
      [7, 5],
      [33, 17],
      [128, 3],
    ] as const) {
      const image = noise(w, h, w * 31 + h);
      const decoded = await decodeImage(encodePng(image));
      assert.equal(decoded.mediaType, 'image/png');
      assert.equal(decoded.width, w);
      assert.equal(decoded.height, h);
      assert.deepEqual(Buffer.from(decoded.data), Buffer.from(image.data), `${w}×${h}`);
    }
  });

  it('encodePng refuses data of the wrong length', () => {
    assert.throws(() => encodePng({ width: 2, height: 2, data: new Uint8Array(15) }), RangeError);
  });

  it('reads every PNG colour type and bit depth, interlaced or not, with tRNS', async () => {
    const width = 13;
    const height = 11;
    for (const interlaced of [false, true]) {
      for (const depth of [1, 2, 4, 8, 16]) {
        const max = (1 << depth) - 1;
        const grey = (x: number, y: number) => (x * 5 + y * 3) % (max + 1);
        const to8 = (v: number) => Math.round((v * 255) / max);
        const png = writePng({ width, height, depth, colorType: 0, interlaced, samples: (x, y) => [grey(x, y)] });
        const image = await decodeImage(png);
        for (const [x, y] of [
          [0, 0],
          [12, 10],
          [5, 7],
          [3, 1],
        ] as const) {
          const g = to8(grey(x, y));
          assert.deepEqual(pixelAt(image, x, y), [g, g, g, 255], `grey ${depth}-bit ${interlaced ? 'Adam7' : ''} at ${x},${y}`);
        }
        if (depth <= 8) {
          // Palette: index → colour, with tRNS alpha for the first entries.
          const entries = max + 1;
          const plte = Buffer.alloc(entries * 3);
          for (let i = 0; i < entries; i++) plte.set([i, 255 - i, (i * 7) & 0xff], i * 3);
          const trns = Buffer.from([0, 100]);
          const indexed = writePng({
            width,
            height,
            depth,
            colorType: 3,
            interlaced,
            samples: (x, y) => [grey(x, y)],
            extra: [chunk('PLTE', plte), chunk('tRNS', trns)],
          });
          const decoded = await decodeImage(indexed);
          for (const [x, y] of [
            [0, 0],
            [12, 10],
            [5, 7],
            [1, 0],
          ] as const) {
            const i = grey(x, y);
            assert.deepEqual(pixelAt(decoded, x, y), [i, 255 - i, (i * 7) & 0xff, i < 2 ? trns[i]! : 255], `palette ${depth}-bit at ${x},${y}`);
          }
        }
        if (depth >= 8) {
          const v = (x: number, y: number, c: number) => ((x * 37 + y * 91 + c * 53) * (depth === 16 ? 257 : 1)) % (max + 1);
          const c8 = (n: number) => (depth === 16 ? Math.floor((n * 255 + 32767) / 65535) : n);
          const rgba = await decodeImage(writePng({ width, height, depth, colorType: 6, interlaced, samples: (x, y) => [0, 1, 2, 3].map((c) => v(x, y, c)) }));
          const rgb = await decodeImage(writePng({ width, height, depth, colorType: 2, interlaced, samples: (x, y) => [0, 1, 2].map((c) => v(x, y, c)) }));
          const greyAlpha = await decodeImage(writePng({ width, height, depth, colorType: 4, interlaced, samples: (x, y) => [v(x, y, 0), v(x, y, 3)] }));
          for (const [x, y] of [
            [0, 0],
            [12, 10],
            [6, 3],
          ] as const) {
            const at = (c: number) => c8(v(x, y, c));
            assert.deepEqual(pixelAt(rgba, x, y), [at(0), at(1), at(2), at(3)], `RGBA ${depth}-bit`);
            assert.deepEqual(pixelAt(rgb, x, y), [at(0), at(1), at(2), 255], `RGB ${depth}-bit`);
            assert.deepEqual(pixelAt(greyAlpha, x, y), [at(0), at(0), at(0), at(3)], `grey+alpha ${depth}-bit`);
          }
        }
      }
    }
  });

  it('a tRNS colour key makes that grey or RGB value transparent', async () => {
    const rgb = writePng({
      width: 2,
      height: 1,
      depth: 8,
      colorType: 2,
      samples: (x) => (x ? [10, 20, 30] : [1, 2, 3]),
      extra: [chunk('tRNS', Buffer.from([0, 10, 0, 20, 0, 30]))],
    });
    const image = await decodeImage(rgb);
    assert.deepEqual(pixelAt(image, 0, 0), [1, 2, 3, 255]);
    assert.deepEqual(pixelAt(image, 1, 0), [10, 20, 30, 0]);
    const grey = writePng({ width: 2, height: 1, depth: 4, colorType: 0, samples: (x) => [x ? 7 : 3], extra: [chunk('tRNS', Buffer.from([0, 7]))] });
    const g = await decodeImage(grey);
    assert.deepEqual(pixelAt(g, 0, 0), [51, 51, 51, 255]);
    assert.deepEqual(pixelAt(g, 1, 0), [119, 119, 119, 0]);
  });

  it('reads PNG rows written with every filter (as other encoders write them)', async () => {
    const image = noise(9, 6, 5);
    const ours = await decodeImage(encodePng(image)); // Sub and Paeth rows
    assert.deepEqual(Buffer.from(ours.data), Buffer.from(image.data));
    for (const interlaced of [false, true]) {
      for (const [depth, colorType] of [
        [8, 6],
        [16, 2],
        [4, 0],
        [8, 4],
      ] as const) {
        const max = (1 << depth) - 1;
        const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colorType];
        const samples = (x: number, y: number) => Array.from({ length: channels }, (_, c) => ((x * 29 + y * 71 + c * 13) * 2654435761) % (max + 1));
        const plain = await decodeImage(writePng({ width: 17, height: 9, depth, colorType, interlaced, samples }));
        const filtered = await decodeImage(writePng({ width: 17, height: 9, depth, colorType, interlaced, samples, cycleFilters: true }));
        assert.deepEqual(Buffer.from(filtered.data), Buffer.from(plain.data), `${depth}-bit type ${colorType}${interlaced ? ' Adam7' : ''}`);
      }
    }
    const fixture = await decodeImage(readFileSync(path.join(FIXTURES, 'python.png')));
    assert.equal(fixture.mediaType, 'image/png');
    assert.equal(fixture.data.length, fixture.width * fixture.height * 4);
  });

  it('JPEG: decoded at its size, close to what was encoded', async () => {
    const image = gradient(48, 32);
    const decoded = await decodeImage(await encodeJpeg(image, 95));
    assert.equal(decoded.mediaType, 'image/jpeg');
    assert.equal(decoded.width, 48);
    assert.equal(decoded.height, 32);
    let worst = 0;
    for (let i = 0; i < image.data.length; i++) worst = Math.max(worst, Math.abs(decoded.data[i]! - image.data[i]!));
    assert.ok(worst <= 16, `JPEG differs by up to ${worst}`);
    const fixture = await decodeImage(readFileSync(path.join(FIXTURES, 'python.jpg')));
    assert.ok(fixture.width > 0 && fixture.data.length === fixture.width * fixture.height * 4);
  });

  it('JPEG: applies the EXIF orientation, as viewers show the photo', async () => {
    // Stored 32×16: left half red, right half blue, with a green top-left 8×8 corner.
    const stored = solid(32, 16, [255, 0, 0, 255]);
    for (let y = 0; y < 16; y++) for (let x = 0; x < 32; x++) if (x >= 16) stored.data.set([0, 0, 255, 255], (y * 32 + x) * 4);
    for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) stored.data.set([0, 255, 0, 255], (y * 32 + x) * 4);
    const jpeg = await encodeJpeg(stored, 95);
    const colour = (image: RgbaImage, x: number, y: number) => {
      const [r, g, b] = pixelAt(image, x, y);
      return r! > 160 ? 'red' : g! > 160 ? 'green' : b! > 160 ? 'blue' : 'other';
    };
    // Where the green corner and the blue half are shown, per orientation (sampled at block centres).
    const expected: Record<number, { size: [number, number]; green: [number, number]; blue: [number, number] }> = {
      1: { size: [32, 16], green: [3, 3], blue: [28, 8] },
      2: { size: [32, 16], green: [28, 3], blue: [3, 8] },
      3: { size: [32, 16], green: [28, 12], blue: [3, 8] },
      4: { size: [32, 16], green: [3, 12], blue: [28, 8] },
      5: { size: [16, 32], green: [3, 3], blue: [8, 28] },
      6: { size: [16, 32], green: [12, 3], blue: [8, 28] },
      7: { size: [16, 32], green: [12, 28], blue: [8, 3] },
      8: { size: [16, 32], green: [3, 28], blue: [8, 3] },
    };
    for (const [orientation, want] of Object.entries(expected)) {
      for (const little of [true, false]) {
        const image = await decodeImage(withOrientation(jpeg, Number(orientation), little));
        assert.deepEqual([image.width, image.height], want.size, `orientation ${orientation}`);
        assert.equal(colour(image, ...want.green), 'green', `orientation ${orientation}: green corner`);
        assert.equal(colour(image, ...want.blue), 'blue', `orientation ${orientation}: blue half`);
      }
    }
  });

  it('WebP: lossless WebP decodes to exactly the encoded pixels', async () => {
    const image = noise(21, 13, 9);
    const decoded = await decodeImage(await encodeWebp(image, true));
    assert.equal(decoded.mediaType, 'image/webp');
    assert.deepEqual(Buffer.from(decoded.data), Buffer.from(image.data));
    const fixture = await decodeImage(readFileSync(path.join(FIXTURES, 'python.webp')));
    assert.ok(fixture.width > 0 && fixture.data.length === fixture.width * fixture.height * 4);
  });

  it("keeps the original's ICC colour profile (PNG iCCP, JPEG APP2 in parts, WebP ICCP) for encodePng to carry", async () => {
    const profile = Uint8Array.from({ length: 3000 }, (_, i) => (i * 7 + 3) & 0xff);
    const image = noise(12, 9, 21, true);
    const png = encodePng(image, { iccProfile: profile });
    const fromPng = await decodeImage(png);
    assert.deepEqual(Buffer.from(fromPng.iccProfile!), Buffer.from(profile));
    assert.deepEqual(Buffer.from(fromPng.data), Buffer.from(image.data));
    assert.equal((await decodeImage(encodePng(image))).iccProfile, undefined);

    const jpeg = await encodeJpeg(image, 90);
    const app2 = (seq: number, part: Uint8Array) => {
      const head = Buffer.alloc(4);
      head.writeUInt16BE(0xffe2, 0);
      head.writeUInt16BE(2 + 14 + part.length, 2);
      return Buffer.concat([head, Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([seq, 2]), part]);
    };
    const withIcc = Buffer.concat([jpeg.subarray(0, 2), app2(2, profile.subarray(1000)), app2(1, profile.subarray(0, 1000)), jpeg.subarray(2)]);
    const fromJpeg = await decodeImage(withIcc);
    assert.deepEqual(Buffer.from(fromJpeg.iccProfile!), Buffer.from(profile));
    const missingPart = Buffer.concat([jpeg.subarray(0, 2), app2(1, profile.subarray(0, 1000)), jpeg.subarray(2)]);
    assert.equal((await decodeImage(missingPart)).iccProfile, undefined);

    // Extended WebP: VP8X (ICC flag), ICCP, then the lossless image's VP8L chunk.
    const simple = await encodeWebp(image, true);
    const vp8x = Buffer.alloc(18);
    vp8x.write('VP8X', 0, 'latin1');
    vp8x.writeUInt32LE(10, 4);
    vp8x[8] = 0x20 | 0x10; // ICC profile, alpha
    vp8x.writeUIntLE(image.width - 1, 12, 3);
    vp8x.writeUIntLE(image.height - 1, 15, 3);
    const iccp = Buffer.alloc(8);
    iccp.write('ICCP', 0, 'latin1');
    iccp.writeUInt32LE(profile.length, 4);
    const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), vp8x, iccp, profile, simple.subarray(12)]);
    const riff = Buffer.alloc(8);
    riff.write('RIFF', 0, 'latin1');
    riff.writeUInt32LE(body.length, 4);
    const fromWebp = await decodeImage(Buffer.concat([riff, body]));
    assert.deepEqual(Buffer.from(fromWebp.iccProfile!), Buffer.from(profile));
    assert.deepEqual(Buffer.from(fromWebp.data), Buffer.from(image.data));
  });

  it('refuses SVG and GIF, saying what is allowed', async () => {
    const svg = await refusal(Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'));
    assert.equal(svg.reason, 'svg');
    assert.match(svg.message, /SVG/);
    assert.match(svg.message, /PNG, JPEG or WebP/);
    const gif = await refusal(readFileSync(path.join(FIXTURES, 'python.gif')));
    assert.equal(gif.reason, 'animated');
    assert.match(gif.message, /GIF/);
    assert.match(gif.message, /Edit Image for the whole image/);
    const other = await refusal(Buffer.from('just some text, not an image'));
    assert.equal(other.reason, 'unsupported');
  });

  it('refuses animated PNG (acTL) and animated WebP', async () => {
    const actl = Buffer.alloc(8);
    actl.writeUInt32BE(2, 0);
    const apng = writePng({ width: 2, height: 2, depth: 8, colorType: 6, samples: () => [1, 2, 3, 255], extra: [chunk('acTL', actl)] });
    const refusedPng = await refusal(apng);
    assert.equal(refusedPng.reason, 'animated');
    assert.match(refusedPng.message, /animated images cannot be region-edited; use Edit Image for the whole image/);
    // RIFF....WEBP, then a VP8X chunk (10 bytes) whose flags byte has the animation bit, then ANIM.
    const vp8x = Buffer.concat([Buffer.from('VP8X'), Buffer.from([10, 0, 0, 0, 0x02, 0, 0, 0, 1, 0, 0, 1, 0, 0])]);
    const anim = Buffer.concat([Buffer.from('ANIM'), Buffer.from([6, 0, 0, 0, 0, 0, 0, 0, 0, 0])]);
    const body = Buffer.concat([Buffer.from('WEBP'), vp8x, anim]);
    const size = Buffer.alloc(4);
    size.writeUInt32LE(body.length, 0);
    const refusedWebp = await refusal(Buffer.concat([Buffer.from('RIFF'), size, body]));
    assert.equal(refusedWebp.reason, 'animated');
  });

  it('refuses images over 4096×4096 × 2 pixels before decoding their pixels', async () => {
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(8192, 0);
    ihdr.writeUInt32BE(4097, 4);
    ihdr.set([8, 6, 0, 0, 0], 8);
    const huge = Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(10))), chunk('IEND', Buffer.alloc(0))]);
    const refused = await refusal(huge);
    assert.equal(refused.reason, 'tooLarge');
    assert.match(refused.message, /8192×4097/);
    // 4096×8192 exactly is allowed by size (refused here only because its pixel data is missing).
    ihdr.writeUInt32BE(4096, 0);
    ihdr.writeUInt32BE(8192, 4);
    const atLimit = Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(10))), chunk('IEND', Buffer.alloc(0))]);
    assert.equal((await refusal(atLimit)).reason, 'corrupt');
  });

  it('refuses a cut-off or damaged PNG as corrupt', async () => {
    const png = encodePng(noise(16, 16, 1));
    assert.equal((await refusal(png.subarray(0, png.length - 40))).reason, 'corrupt');
    assert.equal((await refusal(SIGNATURE)).reason, 'corrupt');
    const at = png.indexOf('IDAT') + 20;
    const damaged = Buffer.from(png);
    damaged.fill(0xff, at, at + 30);
    assert.equal((await refusal(damaged)).reason, 'corrupt');
  });
});

function gradient(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.set([Math.round((x * 255) / (width - 1)), Math.round((y * 255) / (height - 1)), 128, 255], (y * width + x) * 4);
  return { width, height, data };
}
