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
  const data = original.data.slice();
  const area = changedArea(original, answer, crop, mask);
  if (area) paste({ ...original, data }, answer, crop, mask, area);
  return { width: original.width, height: original.height, data };
}

/**
 * compositeRegion without the copy of the original (64 MB for 4096×4096): the answer is pasted into
 * `original` itself, `use` gets it, and the original's bytes are put back afterwards (also when `use`
 * throws), from a copy of the few rows that change. For a region edit's several answers, one by one.
 */
export function withRegionComposited<T>(original: RgbaImage, answer: RgbaImage, crop: Box, mask: RegionMask, use: (composited: RgbaImage) => T): T {
  const area = changedArea(original, answer, crop, mask);
  if (!area) return use(original);
  const stride = original.width * 4;
  const saved = original.data.slice(area.y * stride, (area.y + area.height) * stride);
  try {
    paste(original, answer, crop, mask, area);
    return use(original);
  } finally {
    original.data.set(saved, area.y * stride);
  }
}

/** Where anything can change: the mask's box and the crop overlapping; undefined when nowhere. Checks the sizes. */
function changedArea(original: RgbaImage, answer: RgbaImage, crop: Box, mask: RegionMask): Box | undefined {
  const { width, height } = original;
  if (mask.width !== width || mask.height !== height) throw new RangeError(`Mask ${mask.width}×${mask.height} is not the original's ${width}×${height}`);
  if (answer.width !== crop.width || answer.height !== crop.height)
    throw new RangeError(`Answer ${answer.width}×${answer.height} is not the crop's ${crop.width}×${crop.height}`);
  if (crop.x < 0 || crop.y < 0 || crop.x + crop.width > width || crop.y + crop.height > height) throw new RangeError('Crop is not inside the original');
  const box = mask.box;
  if (!box) return undefined;
  const x = Math.max(box.x, crop.x);
  const y = Math.max(box.y, crop.y);
  const x1 = Math.min(box.x + box.width, crop.x + crop.width);
  const y1 = Math.min(box.y + box.height, crop.y + crop.height);
  return x1 > x && y1 > y ? { x, y, width: x1 - x, height: y1 - y } : undefined;
}

/** The answer pasted into `image` (the original's pixels) through the mask, inside `area`. */
function paste(image: RgbaImage, answer: RgbaImage, crop: Box, mask: RegionMask, area: Box): void {
  const { width, data } = image;
  for (let y = area.y; y < area.y + area.height; y++) {
    for (let x = area.x; x < area.x + area.width; x++) {
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
}
