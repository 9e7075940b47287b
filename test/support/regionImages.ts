// Shared by the region-edit unit tests: deterministic pixels and JPEG / WebP bytes of them (Squoosh's
// encoders, loaded as tools/emulator/formats.ts loads them).
import { readFileSync } from 'node:fs';
import encodeJpegWasm, { init as initJpeg } from '@jsquash/jpeg/encode.js';
import encodeWebpWasm, { init as initWebp } from '@jsquash/webp/encode.js';
import type { RgbaImage } from '../../src/core/images/pixels';

let jpegReady: Promise<unknown> | undefined;
let webpReady: Promise<unknown> | undefined;

const pixelsOf = (image: RgbaImage) => ({ width: image.width, height: image.height, data: new Uint8ClampedArray(image.data) });

export async function encodeJpeg(image: RgbaImage, quality = 85): Promise<Buffer> {
  await (jpegReady ??= initJpeg({ wasmBinary: readFileSync(require.resolve('@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm')) }));
  return Buffer.from(await encodeJpegWasm(pixelsOf(image), { quality }));
}

export async function encodeWebp(image: RgbaImage, lossless = false): Promise<Buffer> {
  await (webpReady ??= initWebp({ wasmBinary: readFileSync(require.resolve('@jsquash/webp/codec/enc/webp_enc.wasm')) }));
  return Buffer.from(await encodeWebpWasm(pixelsOf(image), lossless ? { lossless: 1, quality: 100, exact: 1 } : { quality: 85 }));
}

/** Repeatable pseudo-random RGBA (alpha too) from a seed. */
export function noise(width: number, height: number, seed: number, opaque = false): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < data.length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    data[i] = opaque && i % 4 === 3 ? 255 : state & 0xff;
  }
  return { width, height, data };
}

/** A copy filled with one colour. */
export function solid(width: number, height: number, rgba: readonly number[]): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return { width, height, data };
}
