// core/images/regionCrop.ts: what part of the original a region edit sends — the region's box with a
// margin of context and the feather, clamped at every edge, widened to a ratio the model takes.
import * as assert from 'node:assert/strict';
import type { RgbaImage } from '../../src/core/images/pixels';
import { type CropBox, cropBoxFor, cropRgba, describeCrop } from '../../src/core/images/regionCrop';
import type { Box } from '../../src/core/images/regionMask';
import { noise } from '../support/regionImages';

const IMAGE = { width: 2048, height: 1536 };
const ratioOf = (crop: Box) => crop.width / crop.height;
const contains = (outer: Box, inner: Box) =>
  outer.x <= inner.x && outer.y <= inner.y && outer.x + outer.width >= inner.x + inner.width && outer.y + outer.height >= inner.y + inner.height;
const inside = (crop: Box, image: { width: number; height: number }) =>
  Number.isInteger(crop.x) &&
  Number.isInteger(crop.y) &&
  crop.x >= 0 &&
  crop.y >= 0 &&
  crop.x + crop.width <= image.width &&
  crop.y + crop.height <= image.height;

describe('Region crop: the box, its margin and feather, an aspect ratio the model takes', () => {
  it('a small box gets at least 32 px of context on each side', () => {
    const crop = cropBoxFor({ x: 1000, y: 700, width: 100, height: 60 }, IMAGE, []);
    assert.deepEqual(crop, { x: 968, y: 668, width: 164, height: 124, ratio: '41:31' });
  });

  it('a large box gets a quarter of its larger side as margin, plus the feather', () => {
    const box = { x: 800, y: 600, width: 400, height: 200 };
    assert.deepEqual(cropBoxFor(box, IMAGE, []), { x: 700, y: 500, width: 600, height: 400, ratio: '3:2' });
    assert.deepEqual(cropBoxFor(box, IMAGE, [], { feather: 8 }), { x: 692, y: 492, width: 616, height: 416, ratio: '77:52' });
    assert.deepEqual(cropBoxFor(box, IMAGE, [], { margin: 0 }), { ...box, ratio: '2:1' });
  });

  it('is clamped at each edge of the image', () => {
    const left = cropBoxFor({ x: 10, y: 700, width: 100, height: 100 }, IMAGE, []);
    assert.deepEqual([left.x, left.width], [0, 142]);
    const top = cropBoxFor({ x: 700, y: 5, width: 100, height: 100 }, IMAGE, []);
    assert.deepEqual([top.y, top.height], [0, 137]);
    const right = cropBoxFor({ x: 1940, y: 700, width: 100, height: 100 }, IMAGE, []);
    assert.deepEqual([right.x, right.x + right.width], [1908, 2048]);
    const bottom = cropBoxFor({ x: 700, y: 1500, width: 100, height: 36 }, IMAGE, []);
    assert.deepEqual([bottom.y, bottom.y + bottom.height], [1468, 1536]);
    const whole = cropBoxFor({ x: 0, y: 0, width: 2048, height: 1536 }, IMAGE, []);
    assert.deepEqual(whole, { x: 0, y: 0, width: 2048, height: 1536, ratio: '4:3' });
  });

  it('is widened (never narrowed) to the nearest supported ratio', () => {
    const box = { x: 800, y: 600, width: 400, height: 200 }; // 600×400 with its margin: 3:2
    const wide = cropBoxFor(box, IMAGE, ['1:1', '16:9', '9:16']);
    assert.equal(wide.ratio, '16:9'); // log distance 0.17 against 0.41 for 1:1
    assert.equal(wide.height, 400);
    assert.equal(wide.width, 712); // ceil(400 × 16 / 9)
    assert.ok(contains(wide, { x: 700, y: 500, width: 600, height: 400 }));
    const square = cropBoxFor(box, IMAGE, ['1:1']);
    assert.deepEqual(square, { x: 700, y: 400, width: 600, height: 600, ratio: '1:1' });
    const tall = cropBoxFor({ x: 1000, y: 300, width: 100, height: 500 }, IMAGE, ['2:3', '16:9']);
    assert.equal(tall.ratio, '2:3');
    assert.ok(Math.abs(ratioOf(tall) - 2 / 3) < 0.01);
  });

  it('shifts a widened crop back inside the image rather than cutting it', () => {
    const crop = cropBoxFor({ x: 0, y: 0, width: 300, height: 100 }, IMAGE, ['1:1']);
    assert.deepEqual(crop, { x: 0, y: 0, width: 375, height: 375, ratio: '1:1' }); // 375×175 with its margin, clamped
    const corner = cropBoxFor({ x: 1900, y: 1400, width: 148, height: 136 }, IMAGE, ['16:9']);
    assert.equal(corner.x + corner.width, 2048);
    assert.equal(corner.y + corner.height, 1536);
    assert.ok(contains(corner, { x: 1900, y: 1400, width: 148, height: 136 }));
  });

  it('takes the nearest ratio that fits when the nearest does not', () => {
    // 2000 wide with its margin: 1:1 would need 2000 px of height, the image has 1536.
    const crop = cropBoxFor({ x: 24, y: 600, width: 2000, height: 1000 }, IMAGE, ['1:1', '4:3', '21:9']);
    assert.equal(crop.ratio, '4:3');
    assert.ok(inside(crop, IMAGE));
  });

  it('with no ratio fitting widened, takes the largest crop of a ratio that still holds the box and feather', () => {
    // With its margin the whole 4:3 image; 1:1 (as near as 16:9) cannot hold the box's 1816 px width.
    const box = { x: 100, y: 200, width: 1800, height: 900 };
    const crop = cropBoxFor(box, IMAGE, ['1:1', '16:9'], { feather: 8 });
    assert.deepEqual(crop, { x: 0, y: 74, width: 2048, height: 1152, ratio: '16:9' });
    assert.ok(contains(crop, { x: 92, y: 192, width: 1816, height: 916 }));
    // No ratio can hold it at all: the clamped box under the nearest ratio's name.
    const whole = cropBoxFor({ x: 0, y: 0, width: 2048, height: 1536 }, IMAGE, ['21:9', '1:1']);
    assert.deepEqual(whole, { x: 0, y: 0, width: 2048, height: 1536, ratio: '1:1' });
  });

  it('ignores ratios it cannot read', () => {
    assert.equal(cropBoxFor({ x: 800, y: 600, width: 400, height: 200 }, IMAGE, ['auto', '16x9', '0:1', '2.39:1']).ratio, '2.39:1');
  });

  it('always lies inside the image and holds the box grown by the feather', () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const sets = [[], ['1:1'], ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9'], ['2:3', '3:2']];
    for (let i = 0; i < 500; i++) {
      const image = { width: 1 + next(3000), height: 1 + next(3000) };
      const x = next(image.width);
      const y = next(image.height);
      const box = { x, y, width: 1 + next(image.width - x), height: 1 + next(image.height - y) };
      const feather = next(20);
      const crop = cropBoxFor(box, image, sets[i % sets.length]!, { feather });
      assert.ok(inside(crop, image), JSON.stringify({ image, box, crop }));
      const grown = { x: Math.max(0, x - feather), y: Math.max(0, y - feather), width: 0, height: 0 };
      grown.width = Math.min(image.width, x + box.width + feather) - grown.x;
      grown.height = Math.min(image.height, y + box.height + feather) - grown.y;
      assert.ok(contains(crop, grown), JSON.stringify({ image, box, feather, crop }));
    }
  });

  it('describeCrop names the region, the image and the ratio sent', () => {
    const box = { x: 800, y: 600, width: 412, height: 300 };
    const crop: CropBox = { x: 700, y: 500, width: 612, height: 408, ratio: '3:2' };
    assert.equal(describeCrop(box, crop, IMAGE), 'region 412×300 of 2048×1536, sent as 3:2');
  });

  it('cropRgba copies exactly the pixels inside the box and refuses a box outside', () => {
    const image: RgbaImage = noise(10, 8, 3);
    const crop = cropRgba(image, { x: 2, y: 3, width: 5, height: 4 });
    assert.equal(crop.width, 5);
    assert.equal(crop.height, 4);
    for (let y = 0; y < 4; y++)
      for (let x = 0; x < 5; x++) {
        const from = ((y + 3) * 10 + x + 2) * 4;
        assert.deepEqual(Array.from(crop.data.subarray((y * 5 + x) * 4, (y * 5 + x) * 4 + 4)), Array.from(image.data.subarray(from, from + 4)));
      }
    const before = Buffer.from(image.data);
    crop.data.fill(0);
    assert.deepEqual(Buffer.from(image.data), before, 'the crop is a copy, not a view');
    assert.throws(() => cropRgba(image, { x: 6, y: 0, width: 5, height: 1 }), RangeError);
    assert.throws(() => cropRgba(image, { x: -1, y: 0, width: 2, height: 1 }), RangeError);
    assert.throws(() => cropRgba(image, { x: 0, y: 0, width: 0, height: 1 }), RangeError);
  });
});
