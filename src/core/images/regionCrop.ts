// What part of the original a region edit sends: the region's box with context around it, shaped
// to an aspect ratio the model takes so the answer comes back undistorted.
import * as l10n from '@vscode/l10n';
import type { RgbaImage } from './pixels';
import { type Box, growBox } from './regionMask';

export interface CropBox extends Box {
  /** e.g. "3:2": one of the model's supported ratios, or the box's own reduced ratio when none are given. */
  ratio: string;
}

interface Size {
  width: number;
  height: number;
}

/** Context around the region: a quarter of its larger side, at least this many pixels. */
const MIN_MARGIN = 32;

/** "16:9" → 16/9; "2.39:1" too; undefined for anything else. */
function ratioValue(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  const value = match ? Number(match[1]) / Number(match[2]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The smallest size of ratio `r` that holds `size` (widened, never narrowed). */
function widened(size: Size, r: number): Size {
  return size.width / size.height < r
    ? { width: Math.ceil(size.height * r - 1e-9), height: size.height }
    : { width: size.width, height: Math.ceil(size.width / r - 1e-9) };
}

const fits = (size: Size, image: Size) => size.width <= image.width && size.height <= image.height;
const holds = (size: Size, inner: Size) => size.width >= inner.width && size.height >= inner.height;

/** `size` placed around `around`'s centre, shifted to stay inside the image, then clamped to it. */
function placed(size: Size, around: Box, image: Size): Box {
  const width = Math.min(size.width, image.width);
  const height = Math.min(size.height, image.height);
  const x = Math.round(around.x + around.width / 2 - width / 2);
  const y = Math.round(around.y + around.height / 2 - height / 2);
  return { x: Math.min(Math.max(0, x), image.width - width), y: Math.min(Math.max(0, y), image.height - height), width, height };
}

function ownRatio({ width, height }: Size): string {
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const d = gcd(width, height);
  return `${width / d}:${height / d}`;
}

/**
 * The crop sent for a region: its bounding box grown by a margin (default: 25 % of the box's larger
 * side, at least 32 px) plus the feather, clamped to the image, then widened (never narrowed) to the
 * nearest of `ratios` ("W:H"; empty = keep the grown box's own ratio) and shifted to stay inside the
 * image. When no ratio fits widened, the largest crop of the nearest ratio that still holds the box and
 * its feather is taken (less context); when none does, the clamped box with the nearest ratio's name.
 * The crop always holds the box grown by the feather.
 */
export function cropBoxFor(box: Box, image: Size, ratios: readonly string[], options?: { margin?: number; feather?: number }): CropBox {
  const feather = Math.max(0, Math.round(options?.feather ?? 0));
  const margin = Math.max(0, Math.round(options?.margin ?? Math.max(MIN_MARGIN, Math.max(box.width, box.height) / 4)));
  const core = growBox(box, feather, image.width, image.height);
  const wanted = growBox(box, feather + margin, image.width, image.height);
  const aspect = wanted.width / wanted.height;
  // Nearest first, on a log scale (2:1 and 1:2 are as far from 1:1).
  const candidates = ratios
    .map((text) => ({ text, value: ratioValue(text) }))
    .filter((c): c is { text: string; value: number } => c.value !== undefined)
    .sort((a, b) => Math.abs(Math.log(a.value / aspect)) - Math.abs(Math.log(b.value / aspect)));
  if (!candidates.length) return { ...wanted, ratio: ownRatio(wanted) };
  for (const c of candidates) {
    const size = widened(wanted, c.value);
    if (fits(size, image)) return { ...placed(size, wanted, image), ratio: c.text };
  }
  for (const c of candidates) {
    const largest =
      image.width / image.height > c.value
        ? { width: Math.round(image.height * c.value), height: image.height }
        : { width: image.width, height: Math.round(image.width / c.value) };
    if (fits(largest, image) && holds(largest, core)) return { ...placed(largest, core, image), ratio: c.text };
  }
  return { ...wanted, ratio: candidates[0]!.text };
}

/** "region 412×300 of 2048×1536, sent as 3:2" */
export function describeCrop(box: Box, crop: CropBox, image: Size): string {
  return l10n.t('region {0}×{1} of {2}×{3}, sent as {4}', box.width, box.height, image.width, image.height, crop.ratio);
}

/** A copy of the pixels inside `box` (which must lie inside the image). */
export function cropRgba(image: RgbaImage, box: Box): RgbaImage {
  const { x, y, width, height } = box;
  if (!(Number.isInteger(x) && Number.isInteger(y) && width > 0 && height > 0 && x >= 0 && y >= 0 && x + width <= image.width && y + height <= image.height))
    throw new RangeError(`Crop ${width}×${height}+${x}+${y} is not inside ${image.width}×${image.height}`);
  const data = new Uint8Array(width * height * 4);
  for (let row = 0; row < height; row++) {
    const from = ((y + row) * image.width + x) * 4;
    data.set(image.data.subarray(from, from + width * 4), row * width * 4);
  }
  return { width, height, data };
}
