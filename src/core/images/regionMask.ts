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
/** Widest soft edge, in pixels (the wiring's `feather` bound). */
export const MAX_FEATHER = 256;

/**
 * The region a mask image marks. A pixel marks the region when it is opaque (alpha ≥ 128) AND
 * white-ish (Rec. 601 luma 0.299 R + 0.587 G + 0.114 B ≥ 128): white on black marks the white; white
 * strokes on a transparent background mark the strokes; black, dark colours and transparency mark
 * nothing. The caller checks that the mask has the original's size.
 */
export function maskFromImage(mask: RgbaImage): RegionMask {
  const { width, height, data } = mask;
  const rows = maskFromRows(width, height);
  for (let y = 0; y < height; y++) rows.row(y, data.subarray(y * width * 4, (y + 1) * width * 4));
  return rows.mask();
}

/** maskFromImage a row at a time (pngDecode.ts decodePngRows): the mask's RGBA is never whole in memory. */
export function maskFromRows(width: number, height: number): { row(y: number, rgba: Uint8Array): void; mask(): RegionMask } {
  const alpha = new Uint8Array(width * height);
  let [x0, y0, x1, y1] = [width, height, -1, -1];
  return {
    row(y, data) {
      for (let x = 0, i = y * width; x < width; x++, i++) {
        const p = x * 4;
        if (data[p + 3]! < MARK_ALPHA || 299 * data[p]! + 587 * data[p + 1]! + 114 * data[p + 2]! < MARK_LUMA * 1000) continue;
        alpha[i] = 255;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        y1 = y;
      }
    },
    mask: () => ({ width, height, alpha, box: x1 < 0 ? undefined : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 } }),
  };
}

/**
 * The mask with a soft edge `feather` px wide outside the region (0 = hard edge): a pixel at
 * Euclidean distance d (1 ≤ d ≤ feather) from the nearest marked pixel gets 255 × (1 − d / (feather + 1)),
 * so coverage falls linearly and is 0 beyond `feather`. Marked pixels keep their value. The box grows by
 * `feather` (clamped to the image). Only the box grown by `feather` is visited. `inPlace`: into
 * `mask.alpha` itself, without a copy (safe: every distance is measured before any pixel is written).
 */
export function featherMask(mask: RegionMask, feather: number, options?: { inPlace?: boolean }): RegionMask {
  if (!(Number.isInteger(feather) && feather >= 0 && feather <= MAX_FEATHER))
    throw new RangeError(`feather must be a whole number 0..${MAX_FEATHER}, got ${feather}`);
  const { width, height, box } = mask;
  const alpha = options?.inPlace ? mask.alpha : mask.alpha.slice();
  if (!box || feather === 0) return { width, height, alpha, box: box && { ...box } };
  const grown = growBox(box, feather, width, height);
  const { x: gx, y: gy, width: gw, height: gh } = grown;
  // Per column of the grown box: vertical distance to the nearest marked pixel, capped at feather + 1.
  const far = feather + 1;
  const vertical = far < 256 ? new Uint8Array(gw * gh) : new Uint16Array(gw * gh);
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
  // Exact distance along each row (Felzenszwalb–Huttenlocher): d² = min over columns c of (c − x)² + dy(c)².
  // A capped dy only yields d > feather, which is coverage 0 anyway. Per-row scratch only.
  const f = new Float64Array(gw);
  const d2 = new Float64Array(gw);
  const v = new Int32Array(gw);
  const z = new Float64Array(gw + 1);
  const limit = feather * feather;
  for (let y = 0; y < gh; y++) {
    for (let x = 0; x < gw; x++) f[x] = vertical[y * gw + x]! ** 2;
    lowerEnvelope(f, d2, v, z);
    for (let x = 0; x < gw; x++) {
      const i = (gy + y) * width + gx + x;
      if (mask.alpha[i]! > 0 || d2[x]! > limit) continue;
      const coverage = Math.round(255 * (1 - Math.sqrt(d2[x]!) / far));
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

/** d[q] = min over p of (q − p)² + f[p], in one pass (the lower envelope of parabolas). */
function lowerEnvelope(f: Float64Array, d: Float64Array, v: Int32Array, z: Float64Array): void {
  const n = f.length;
  const meet = (q: number, p: number) => (f[q]! + q * q - (f[p]! + p * p)) / (2 * q - 2 * p);
  let k = 0;
  v[0] = 0;
  z[0] = -Infinity;
  z[1] = Infinity;
  for (let q = 1; q < n; q++) {
    let s = meet(q, v[k]!);
    while (s <= z[k]!) s = meet(q, v[--k]!);
    v[++k] = q;
    z[k] = s;
    z[k + 1] = Infinity;
  }
  k = 0;
  for (let q = 0; q < n; q++) {
    while (z[k + 1]! < q) k++;
    d[q] = (q - v[k]!) ** 2 + f[v[k]!]!;
  }
}
