// Turns a validated request into image bytes: pixel size, deterministic identity, cache.
import { randomInt } from 'node:crypto';
import type { EmulatorImageModel } from './catalog';
import { paintPng } from './png';

/** Real gateways ignore absurd sizes; the emulator clamps them to keep memory bounded. */
const MIN_SIDE = 16;
const MAX_SIDE = 4096;

export interface SizeInput {
  resolution?: string;
  aspect_ratio?: string;
  size?: string;
}

function even(n: number): number {
  return Math.max(2, Math.round(n / 2) * 2);
}

function clampSide(n: number): number {
  return Math.min(MAX_SIDE, Math.max(MIN_SIDE, n));
}

/** Long side of a tier label such as '2K'. */
function tierSide(tier: string): number {
  return Number.parseInt(tier, 10) * 1024;
}

/**
 * Pixel size of the output: explicit `<W>x<H>` wins; otherwise a tier (resolution, else a tier
 * label in `size`, else the model's default: 1K when supported) shaped by the aspect ratio.
 */
export function pixelSize(model: EmulatorImageModel, input: SizeInput): { width: number; height: number } {
  const explicit = input.size ? /^(\d+)x(\d+)$/.exec(input.size) : null;
  if (explicit) return { width: clampSide(Number(explicit[1])), height: clampSide(Number(explicit[2])) };
  const sizeTier = input.size && /^\d+K$/.test(input.size) ? input.size : undefined;
  const defaultTier = model.supported_resolutions.includes('1K') ? '1K' : (model.supported_resolutions[0] ?? '1K');
  const long = clampSide(tierSide(input.resolution ?? sizeTier ?? defaultTier));
  const ratio = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(input.aspect_ratio ?? '1:1');
  const rw = ratio ? Number(ratio[1]) : 1;
  const rh = ratio ? Number(ratio[2]) : 1;
  if (!(rw > 0 && rh > 0)) return { width: long, height: long };
  return rw >= rh ? { width: long, height: clampSide(even((long * rh) / rw)) } : { width: clampSide(even((long * rw) / rh)), height: long };
}

export interface RenderInput {
  model: EmulatorImageModel;
  prompt: string;
  /** Already resolved: undefined means "random". */
  seed?: number;
  width: number;
  height: number;
  transparent: boolean;
  /** Digest of the reference images (editing), '' for generation. */
  referencesDigest: string;
  /** Anything else that changes the result (quality, passthrough values...). */
  extra: string;
}

const CACHE_LIMIT_BYTES = 256 * 1024 * 1024;
const cache = new Map<string, Buffer>();
let cachedBytes = 0;

/** The PNG of image `index`; the same inputs (with a seed) give identical bytes. */
export function renderImage(input: RenderInput, index: number): Buffer {
  const seed = input.seed ?? randomInt(0, 2 ** 32);
  const identity = [input.model.id, input.prompt, seed, index, input.width, input.height, input.transparent, input.referencesDigest, input.extra].join(
    '\u0000',
  );
  const hit = cache.get(identity);
  if (hit) {
    cache.delete(identity); // refresh LRU position
    cache.set(identity, hit);
    return hit;
  }
  const png = paintPng({ width: input.width, height: input.height, transparent: input.transparent, identity });
  if (input.seed !== undefined) {
    cache.set(identity, png);
    cachedBytes += png.length;
    for (const [k, v] of cache) {
      if (cachedBytes <= CACHE_LIMIT_BYTES) break;
      cache.delete(k);
      cachedBytes -= v.length;
    }
  }
  return png;
}
