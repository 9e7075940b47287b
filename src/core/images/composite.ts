// Pasting a region edit's answer into the original: only where the (feathered) mask says, so every
// other pixel stays the original's decoded pixel, byte for byte.
import type { RgbaImage } from './pixels';
import type { Box, RegionMask } from './regionMask';

/**
 * The original with the answer (already resized to crop.width×crop.height) pasted at the crop,
 * weighted by the feathered mask: m = 255 takes the answer's pixel, 0 < m < 255 blends (alpha-
 * premultiplied), m = 0 keeps the original's bytes. Mask pixels outside the crop keep the original too.
 * One copy of the original is made; the inputs are not changed.
 */
export function compositeRegion(original: RgbaImage, answer: RgbaImage, crop: Box, mask: RegionMask): RgbaImage {
  const { width, height } = original;
  if (mask.width !== width || mask.height !== height) throw new RangeError(`Mask ${mask.width}×${mask.height} is not the original's ${width}×${height}`);
  if (answer.width !== crop.width || answer.height !== crop.height)
    throw new RangeError(`Answer ${answer.width}×${answer.height} is not the crop's ${crop.width}×${crop.height}`);
  if (crop.x < 0 || crop.y < 0 || crop.x + crop.width > width || crop.y + crop.height > height) throw new RangeError('Crop is not inside the original');
  const data = original.data.slice();
  const box = mask.box;
  if (!box) return { width, height, data };
  // Only where the mask's box and the crop overlap can anything change.
  const x0 = Math.max(box.x, crop.x);
  const y0 = Math.max(box.y, crop.y);
  const x1 = Math.min(box.x + box.width, crop.x + crop.width);
  const y1 = Math.min(box.y + box.height, crop.y + crop.height);
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const m = mask.alpha[y * width + x]!;
      if (m === 0) continue;
      const o = (y * width + x) * 4;
      const a = ((y - crop.y) * crop.width + (x - crop.x)) * 4;
      if (m === 255) {
        data[o] = answer.data[a]!;
        data[o + 1] = answer.data[a + 1]!;
        data[o + 2] = answer.data[a + 2]!;
        data[o + 3] = answer.data[a + 3]!;
        continue;
      }
      // Weights of each side's colour: its coverage by the mask times its own alpha.
      const wo = (255 - m) * data[o + 3]!;
      const wa = m * answer.data[a + 3]!;
      const sum = wo + wa;
      data[o + 3] = Math.round(sum / 255);
      if (sum === 0) continue;
      for (let c = 0; c < 3; c++) data[o + c] = Math.round((data[o + c]! * wo + answer.data[a + c]! * wa) / sum);
    }
  }
  return { width, height, data };
}
