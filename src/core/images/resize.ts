// Resampling for region edits: the model's answer back to the crop's size. Separable triangle filter,
// widened to the scale when shrinking (so it averages areas, no aliasing), on premultiplied alpha so
// transparent pixels do not bleed their colour. Rows are resampled on demand and only the few a
// vertical window needs are kept: memory is the output plus a handful of rows, never a whole float copy.
import type { RgbaImage } from './pixels';

/** For each output index: its first source index, how many taps, and their weights (summing to 1). */
interface Taps {
  first: Int32Array;
  count: Int32Array;
  weights: Float32Array;
  stride: number;
}

function tapsFor(source: number, target: number): Taps {
  const scale = target / source;
  const support = scale < 1 ? 1 / scale : 1;
  const stride = Math.ceil(support) * 2 + 1;
  const first = new Int32Array(target);
  const count = new Int32Array(target);
  const weights = new Float32Array(target * stride);
  for (let i = 0; i < target; i++) {
    const center = (i + 0.5) / scale - 0.5;
    const lo = Math.max(0, Math.ceil(center - support));
    const hi = Math.min(source - 1, Math.floor(center + support));
    let sum = 0;
    let n = 0;
    let start = -1;
    for (let j = lo; j <= hi; j++) {
      const w = 1 - Math.abs(j - center) / support;
      if (w <= 0) continue;
      if (start < 0) start = j;
      // Taps are contiguous: a zero weight can only sit at the ends, skipped above.
      weights[i * stride + (j - start)] = w;
      sum += w;
      n = j - start + 1;
    }
    if (start < 0) {
      // Narrower than a pixel's reach (cannot happen for scale ≥ 1 / source): take the nearest.
      start = Math.min(source - 1, Math.max(0, Math.round(center)));
      weights[i * stride] = 1;
      sum = 1;
      n = 1;
    }
    for (let k = 0; k < n; k++) weights[i * stride + k]! /= sum;
    first[i] = start;
    count[i] = n;
  }
  return { first, count, weights, stride };
}

/** Resamples to exactly width×height (triangle filter, area-averaging when shrinking), alpha-premultiplied. */
export function resizeRgba(image: RgbaImage, width: number, height: number): RgbaImage {
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) throw new RangeError(`Invalid size ${width}×${height}`);
  const { width: sw, height: sh, data } = image;
  if (sw === width && sh === height) return { width, height, data: data.slice() };
  const horizontal = tapsFor(sw, width);
  const vertical = tapsFor(sh, height);
  const out = new Uint8Array(width * height * 4);
  // Horizontally resampled source rows (premultiplied r, g, b and a), kept while a window needs them.
  const rows = new Map<number, Float32Array>();
  const spare: Float32Array[] = [];
  const rowOf = (y: number): Float32Array => {
    let row = rows.get(y);
    if (!row) {
      row = spare.pop() ?? new Float32Array(width * 4);
      resampleRow(data, y * sw * 4, horizontal, row);
      rows.set(y, row);
    }
    return row;
  };
  const acc = new Float32Array(width * 4);
  for (let y = 0; y < height; y++) {
    const first = vertical.first[y]!;
    const n = vertical.count[y]!;
    for (const [key, row] of rows) {
      if (key < first) {
        rows.delete(key);
        spare.push(row);
      }
    }
    acc.fill(0);
    for (let k = 0; k < n; k++) {
      const w = vertical.weights[y * vertical.stride + k]!;
      const row = rowOf(first + k);
      for (let i = 0; i < acc.length; i++) acc[i]! += row[i]! * w;
    }
    const o = y * width * 4;
    for (let x = 0; x < width; x++) {
      const a = acc[x * 4 + 3]!;
      const p = o + x * 4;
      if (a > 0) {
        out[p] = clamp(acc[x * 4]! / a);
        out[p + 1] = clamp(acc[x * 4 + 1]! / a);
        out[p + 2] = clamp(acc[x * 4 + 2]! / a);
      }
      out[p + 3] = clamp(a);
    }
  }
  return { width, height, data: out };
}

function resampleRow(data: Uint8Array, at: number, taps: Taps, row: Float32Array): void {
  const { first, count, weights, stride } = taps;
  for (let x = 0; x < first.length; x++) {
    let r = 0;
    let g = 0;
    let b = 0;
    let a = 0;
    for (let k = 0, s = at + first[x]! * 4; k < count[x]!; k++, s += 4) {
      const w = weights[x * stride + k]!;
      const wa = w * data[s + 3]!;
      r += data[s]! * wa;
      g += data[s + 1]! * wa;
      b += data[s + 2]! * wa;
      a += wa;
    }
    row[x * 4] = r;
    row[x * 4 + 1] = g;
    row[x * 4 + 2] = b;
    row[x * 4 + 3] = a;
  }
}

const clamp = (v: number): number => (v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v));
