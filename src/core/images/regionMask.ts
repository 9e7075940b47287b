// The region of a region edit: which pixels of the original may change, and by how much at the edge.
import type { RgbaImage } from './pixels';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface RegionMask {
  width: number;
  height: number;
  /** 0..255 per pixel: 255 = changes, 0 = stays exactly as it was. */
  alpha: Uint8Array;
  /** Bounding box of the non-zero pixels; undefined when the mask is empty. */
  box: Box | undefined;
}

/** Opaque enough and bright enough (each half of the range) to mark a pixel. */
const MARK_ALPHA = 128;
const MARK_LUMA = 128;
/** Widest soft edge, in pixels: distances are kept in bytes. */
export const MAX_FEATHER = 254;

/**
 * The region a mask image marks. A pixel marks the region when it is opaque (alpha ≥ 128) AND
 * white-ish (Rec. 601 luma 0.299 R + 0.587 G + 0.114 B ≥ 128): white on black marks the white; white
 * strokes on a transparent background mark the strokes; black, dark colours and transparency mark
 * nothing. The caller checks that the mask has the original's size.
 */
export function maskFromImage(mask: RgbaImage): RegionMask {
  const { width, height, data } = mask;
  const alpha = new Uint8Array(width * height);
  let [x0, y0, x1, y1] = [width, height, -1, -1];
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      const p = i * 4;
      if (data[p + 3]! < MARK_ALPHA || 299 * data[p]! + 587 * data[p + 1]! + 114 * data[p + 2]! < MARK_LUMA * 1000) continue;
      alpha[i] = 255;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return { width, height, alpha, box: x1 < 0 ? undefined : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 } };
}

/**
 * The mask with a soft edge `feather` px wide outside the region (0 = hard edge): a pixel at
 * Euclidean distance d (1 ≤ d ≤ feather) from the nearest marked pixel gets 255 × (1 − d / (feather + 1)),
 * so coverage falls linearly and is 0 beyond `feather`. Marked pixels keep their value. The box grows by
 * `feather` (clamped to the image). Only the box grown by `feather` is visited.
 */
export function featherMask(mask: RegionMask, feather: number): RegionMask {
  if (!(Number.isInteger(feather) && feather >= 0 && feather <= MAX_FEATHER))
    throw new RangeError(`feather must be a whole number 0..${MAX_FEATHER}, got ${feather}`);
  const { width, height, box } = mask;
  const alpha = mask.alpha.slice();
  if (!box || feather === 0) return { width, height, alpha, box: box && { ...box } };
  const grown = growBox(box, feather, width, height);
  const { x: gx, y: gy, width: gw, height: gh } = grown;
  // Per column of the grown box: vertical distance to the nearest marked pixel, capped at feather + 1.
  const far = feather + 1;
  const vertical = new Uint8Array(gw * gh).fill(far);
  for (let x = 0; x < gw; x++) {
    let d = far;
    for (let y = 0; y < gh; y++) {
      d = mask.alpha[(gy + y) * width + gx + x]! > 0 ? 0 : Math.min(far, d + 1);
      vertical[y * gw + x] = d;
    }
    d = far;
    for (let y = gh - 1; y >= 0; y--) {
      d = vertical[y * gw + x] === 0 ? 0 : Math.min(far, d + 1);
      if (d < vertical[y * gw + x]!) vertical[y * gw + x] = d;
    }
  }
  // Exact distance: the nearest over the columns within reach, d² = dx² + dy².
  const limit = feather * feather;
  for (let y = 0; y < gh; y++) {
    const row = y * gw;
    for (let x = 0; x < gw; x++) {
      const i = (gy + y) * width + gx + x;
      if (mask.alpha[i]! > 0) continue;
      let best = limit + 1;
      const from = Math.max(0, x - feather);
      const to = Math.min(gw - 1, x + feather);
      for (let c = from; c <= to; c++) {
        const dy = vertical[row + c]!;
        if (dy > feather) continue;
        const d2 = (c - x) * (c - x) + dy * dy;
        if (d2 < best) best = d2;
      }
      if (best > limit) continue;
      const coverage = Math.round(255 * (1 - Math.sqrt(best) / far));
      if (coverage > alpha[i]!) alpha[i] = coverage;
    }
  }
  return { width, height, alpha, box: grown };
}

/** `box` grown by `by` on every side, clamped to the image. */
export function growBox(box: Box, by: number, width: number, height: number): Box {
  const x = Math.max(0, box.x - by);
  const y = Math.max(0, box.y - by);
  return { x, y, width: Math.min(width, box.x + box.width + by) - x, height: Math.min(height, box.y + box.height + by) - y };
}
