// core/images regionMask.ts, resize.ts and composite.ts, and the whole region-edit pipeline on PNG,
// JPEG and WebP originals: every pixel outside the region and its feather stays the original's decoded
// pixel, byte for byte; the feather stays within its width.
import * as assert from 'node:assert/strict';
import { decodeImage, encodePng } from '../../src/core/images/codecs';
import { compositeRegion } from '../../src/core/images/composite';
import type { RgbaImage } from '../../src/core/images/pixels';
import { cropBoxFor, cropRgba } from '../../src/core/images/regionCrop';
import { featherMask, maskFromImage, type RegionMask } from '../../src/core/images/regionMask';
import { resizeRgba } from '../../src/core/images/resize';
import { encodeJpeg, encodeWebp, noise, solid } from '../support/regionImages';

const px = (image: RgbaImage, x: number, y: number) => Array.from(image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 4));

/** An opaque black mask with white ellipses (centre x, y, radii rx, ry). */
function ellipseMask(width: number, height: number, ellipses: [number, number, number, number][]): RgbaImage {
  const mask = solid(width, height, [0, 0, 0, 255]);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (ellipses.some(([cx, cy, rx, ry]) => ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1)) mask.data.set([255, 255, 255, 255], (y * width + x) * 4);
  return mask;
}

/** Distance from each pixel to the nearest marked one, by brute force (small images only). */
function distances(mask: RegionMask): Float64Array {
  // The nearest marked pixel of an outside pixel is on the region's edge: only those are tried.
  const marked: number[] = [];
  const on = (x: number, y: number) => x >= 0 && y >= 0 && x < mask.width && y < mask.height && mask.alpha[y * mask.width + x] === 255;
  mask.alpha.forEach((a, i) => {
    const x = i % mask.width;
    const y = (i - x) / mask.width;
    if (a === 255 && !(on(x - 1, y) && on(x + 1, y) && on(x, y - 1) && on(x, y + 1))) marked.push(i);
  });
  const out = new Float64Array(mask.alpha.length).fill(Infinity);
  for (let i = 0; i < out.length; i++) {
    const x = i % mask.width;
    const y = (i - x) / mask.width;
    if (mask.alpha[i] === 255) out[i] = 0;
    else for (const m of marked) out[i] = Math.min(out[i]!, Math.hypot(x - (m % mask.width), y - Math.floor(m / mask.width)));
  }
  return out;
}

describe('Region mask: what a mask image marks, and its feather', () => {
  it('marks opaque white-ish pixels only (alpha ≥ 128 and luma ≥ 128), with their bounding box', () => {
    const mask = solid(6, 4, [0, 0, 0, 255]);
    const set = (x: number, y: number, rgba: number[]) => mask.data.set(rgba, (y * 6 + x) * 4);
    set(1, 1, [255, 255, 255, 255]); // white: marks
    set(4, 2, [128, 128, 128, 128]); // mid grey, half opaque: marks (both at the threshold)
    set(2, 3, [255, 255, 255, 127]); // white but mostly transparent: does not
    set(3, 0, [127, 127, 127, 255]); // dark grey: does not
    set(5, 3, [255, 0, 0, 255]); // red (luma 76): does not
    set(0, 3, [255, 255, 0, 255]); // yellow (luma 226): marks
    const region = maskFromImage(mask);
    const marked = [...region.alpha.keys()].filter((i) => region.alpha[i] === 255);
    assert.deepEqual(marked, [7, 16, 18]);
    assert.ok(region.alpha.every((a) => a === 0 || a === 255));
    assert.deepEqual(region.box, { x: 0, y: 1, width: 5, height: 3 });
    assert.equal(maskFromImage(solid(3, 3, [0, 0, 0, 255])).box, undefined);
    assert.equal(maskFromImage(solid(3, 3, [255, 255, 255, 0])).box, undefined);
    assert.deepEqual(maskFromImage(solid(3, 2, [255, 255, 255, 255])).box, { x: 0, y: 0, width: 3, height: 2 });
  });

  it('feathers linearly outside the region, exactly within its width, and grows the box by it', () => {
    const region = maskFromImage(
      ellipseMask(60, 50, [
        [25, 20, 6, 9],
        [44, 36, 3, 2],
      ]),
    );
    const d = distances(region);
    for (const feather of [1, 2, 8, 13, 40, 256]) {
      const soft = featherMask(region, feather);
      for (let i = 0; i < d.length; i++) {
        const expected = d[i] === 0 ? 255 : d[i]! <= feather ? Math.round(255 * (1 - d[i]! / (feather + 1))) : 0;
        assert.equal(soft.alpha[i], expected, `feather ${feather}: pixel ${i % 60},${Math.floor(i / 60)} at distance ${d[i]}`);
      }
    }
    const soft = featherMask(region, 8);
    assert.deepEqual(soft.box, { x: region.box!.x - 8, y: region.box!.y - 8, width: region.box!.width + 16, height: region.box!.height + 16 });
    const again = maskFromImage(
      ellipseMask(60, 50, [
        [25, 20, 6, 9],
        [44, 36, 3, 2],
      ]),
    );
    assert.deepEqual(Array.from(region.alpha), Array.from(again.alpha), 'the input is not changed');
  });

  it('feather 0 is the hard mask; the box is clamped at the image edges; bad feathers are refused', () => {
    const region = maskFromImage(ellipseMask(20, 20, [[1, 1, 3, 3]]));
    assert.deepEqual(Array.from(featherMask(region, 0).alpha), Array.from(region.alpha));
    const soft = featherMask(region, 5);
    assert.deepEqual(soft.box, { x: 0, y: 0, width: 10, height: 10 });
    assert.equal(featherMask(maskFromImage(solid(4, 4, [0, 0, 0, 255])), 3).box, undefined);
    for (const bad of [-1, 1.5, NaN, 257]) assert.throws(() => featherMask(region, bad), RangeError);
  });
});

describe('Region resize: premultiplied, exact size', () => {
  it('keeps the size when asked for it, as a copy', () => {
    const image = noise(7, 5, 2);
    const same = resizeRgba(image, 7, 5);
    assert.deepEqual(Buffer.from(same.data), Buffer.from(image.data));
    assert.notEqual(same.data, image.data);
  });

  it('gives exactly the size asked, and a flat colour stays flat shrinking and enlarging', () => {
    const flat = solid(40, 30, [12, 200, 99, 255]);
    for (const [w, h] of [
      [13, 7],
      [97, 61],
      [40, 3],
      [1, 1],
    ] as const) {
      const out = resizeRgba(flat, w, h);
      assert.equal(out.data.length, w * h * 4);
      for (let i = 0; i < w * h; i++) assert.deepEqual(Array.from(out.data.subarray(i * 4, i * 4 + 4)), [12, 200, 99, 255], `${w}×${h}`);
    }
  });

  it('averages areas when shrinking: a 1-px checkerboard halves to grey', () => {
    const board = solid(64, 64, [0, 0, 0, 255]);
    for (let y = 0; y < 64; y++) for (let x = 0; x < 64; x++) if ((x + y) % 2) board.data.set([255, 255, 255, 255], (y * 64 + x) * 4);
    const out = resizeRgba(board, 16, 16);
    for (let i = 0; i < out.data.length; i += 4) assert.ok(Math.abs(out.data[i]! - 128) <= 2, `grey, got ${out.data[i]}`);
  });

  it('lets no colour of transparent pixels bleed into the visible ones', () => {
    const image = solid(20, 20, [0, 255, 0, 0]); // transparent green
    for (let y = 0; y < 20; y++) for (let x = 0; x < 10; x++) image.data.set([255, 0, 0, 255], (y * 20 + x) * 4);
    for (const [w, h] of [
      [7, 7],
      [53, 31],
    ] as const) {
      const out = resizeRgba(image, w, h);
      for (let i = 0; i < out.data.length; i += 4) if (out.data[i + 3]! > 0) assert.deepEqual(Array.from(out.data.subarray(i, i + 3)), [255, 0, 0]);
    }
    assert.throws(() => resizeRgba(image, 0, 3), RangeError);
  });
});

describe('Region composite: the answer only inside the region and its feather', () => {
  it('takes the answer where the mask is 255, blends the feather, keeps every other byte', () => {
    const original = noise(30, 20, 11);
    const mask = featherMask(maskFromImage(ellipseMask(30, 20, [[15, 10, 4, 3]])), 3);
    const crop = { x: 5, y: 2, width: 20, height: 16 };
    const answer = solid(20, 16, [1, 2, 3, 255]);
    const result = compositeRegion(original, answer, crop, mask);
    const before = Buffer.from(original.data);
    for (let y = 0; y < 20; y++)
      for (let x = 0; x < 30; x++) {
        const m = mask.alpha[y * 30 + x]!;
        if (m === 0) assert.deepEqual(px(result, x, y), px(original, x, y));
        else if (m === 255) assert.deepEqual(px(result, x, y), [1, 2, 3, 255]);
        else assert.equal(result.data[(y * 30 + x) * 4 + 3], Math.round(((255 - m) * px(original, x, y)[3]! + m * 255) / 255));
      }
    assert.deepEqual(Buffer.from(original.data), before, 'the original is not changed');
  });

  it('keeps the original where the mask reaches outside the crop, and refuses mismatched sizes', () => {
    const original = noise(10, 10, 4);
    const mask = maskFromImage(solid(10, 10, [255, 255, 255, 255]));
    const result = compositeRegion(original, solid(4, 4, [9, 9, 9, 255]), { x: 3, y: 3, width: 4, height: 4 }, mask);
    for (let y = 0; y < 10; y++)
      for (let x = 0; x < 10; x++) {
        const inCrop = x >= 3 && x < 7 && y >= 3 && y < 7;
        assert.deepEqual(px(result, x, y), inCrop ? [9, 9, 9, 255] : px(original, x, y));
      }
    assert.throws(() => compositeRegion(original, solid(4, 5, [0, 0, 0, 255]), { x: 3, y: 3, width: 4, height: 4 }, mask), RangeError);
    assert.throws(() => compositeRegion(original, solid(4, 4, [0, 0, 0, 255]), { x: 8, y: 3, width: 4, height: 4 }, mask), RangeError);
    assert.throws(() => compositeRegion(noise(9, 10, 1), solid(4, 4, [0, 0, 0, 255]), { x: 3, y: 3, width: 4, height: 4 }, mask), RangeError);
  });

  // One region for the three formats: its brute-force distances take a while.
  const [width, height] = [240, 160];
  const region = maskFromImage(
    ellipseMask(width, height, [
      [70, 60, 18, 12],
      [100, 90, 10, 20],
    ]),
  );
  let d: Float64Array;
  before(() => {
    d = distances(region);
  });
  for (const format of ['png', 'jpeg', 'webp'] as const) {
    it(`the whole pipeline on a ${format.toUpperCase()} original: outside the region and its feather, the original's decoded bytes`, async () => {
      const source = noise(width, height, 77, format !== 'png');
      const bytes = format === 'png' ? encodePng(source) : format === 'jpeg' ? await encodeJpeg(source) : await encodeWebp(source);
      const original = await decodeImage(bytes);
      assert.equal(original.mediaType, `image/${format}`);
      const feather = 8;
      const soft = featherMask(region, feather);
      const crop = cropBoxFor(region.box!, original, ['1:1', '3:2', '16:9'], { feather });
      const sent = await decodeImage(encodePng(cropRgba(original, crop)));
      assert.deepEqual([sent.width, sent.height], [crop.width, crop.height]);
      // The model answers at its own size, in the crop's ratio.
      const answer = resizeRgba(solid(768, Math.round(768 / (crop.width / crop.height)), [250, 10, 240, 255]), crop.width, crop.height);
      const result = await decodeImage(encodePng(compositeRegion(original, answer, crop, soft)));
      let changed = 0;
      for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++) {
          const i = y * width + x;
          if (d[i]! > feather) assert.deepEqual(px(result, x, y), px(original, x, y), `${x},${y} at distance ${d[i]} changed`);
          else if (d[i] === 0) assert.deepEqual(px(result, x, y), [250, 10, 240, 255], `${x},${y} is in the region`);
          else changed++;
        }
      assert.ok(changed > 0, 'a feather band exists');
    });
  }
});
