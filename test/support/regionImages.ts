// Shared by the region-edit unit tests: deterministic pixels, JPEG / WebP bytes of them (Squoosh's
// encoders, loaded as tools/emulator/formats.ts loads them) and PNGs of any colour type, bit depth,
// row filter and interlacing, written here so the decoder is checked against an independent encoder.
import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';
import encodeJpegWasm, { init as initJpeg } from '@jsquash/jpeg/encode.js';
import encodeWebpWasm, { init as initWebp } from '@jsquash/webp/encode.js';
import type { RgbaImage } from '../../src/core/images/pixels';

let jpegReady: Promise<unknown> | undefined;
let webpReady: Promise<unknown> | undefined;

const pixelsOf = (image: RgbaImage) => ({ width: image.width, height: image.height, data: new Uint8ClampedArray(image.data) });

/** mozjpeg's defaults (progressive; 4:4:4 at quality 90 and above) unless `baseline`: not progressive, 4:2:0, as cameras write. */
export async function encodeJpeg(image: RgbaImage, quality = 85, options: { baseline?: boolean } = {}): Promise<Buffer> {
  await (jpegReady ??= initJpeg({ wasmBinary: readFileSync(require.resolve('@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm')) }));
  const baseline = options.baseline ? { progressive: false, auto_subsample: false, chroma_subsample: 2 } : {};
  return Buffer.from(await encodeJpegWasm(pixelsOf(image), { quality, ...baseline }));
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

export function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ADAM7: number[][] = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** A PNG of raw samples (`samples(x, y)` → one value per channel at `depth`), filter 0, optionally Adam7. */
export function writePng(o: {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  interlaced?: boolean;
  samples: (x: number, y: number) => number[];
  extra?: Buffer[];
  /** Row filters 0–4 in turn (filter 0 on every row when absent). */
  cycleFilters?: boolean;
}): Buffer {
  const passes: number[][] = o.interlaced ? ADAM7 : [[0, 0, 1, 1]];
  const rows: number[] = [];
  const bpp = Math.max(1, ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[o.colorType] ?? 1) * (o.depth / 8));
  let filterTurn = 0;
  let previous: number[] | undefined;
  for (const [x0, y0, dx, dy] of passes) {
    for (let y = y0!; y < o.height; y += dy!) {
      const bits: number[] = [];
      for (let x = x0!; x < o.width; x += dx!) for (const v of o.samples(x, y)) bits.push(v);
      if (!bits.length) continue;
      const raw: number[] = [];
      if (o.depth === 16) for (const v of bits) raw.push(v >> 8, v & 0xff);
      else if (o.depth === 8) raw.push(...bits);
      else {
        const perByte = 8 / o.depth;
        for (let i = 0; i < bits.length; i += perByte) {
          let byte = 0;
          for (let k = 0; k < perByte; k++) byte |= (bits[i + k] ?? 0) << (8 - o.depth * (k + 1));
          raw.push(byte);
        }
      }
      const filter = o.cycleFilters ? filterTurn++ % 5 : 0;
      rows.push(filter, ...filterRow(filter, raw, y === y0 ? undefined : previous, bpp));
      previous = raw;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(o.width, 0);
  ihdr.writeUInt32BE(o.height, 4);
  ihdr.set([o.depth, o.colorType, 0, 0, o.interlaced ? 1 : 0], 8);
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), ...(o.extra ?? []), chunk('IDAT', deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0))]);
}

/** One row filtered as an encoder would (the reverse of what the decoder undoes). */
function filterRow(filter: number, raw: number[], previous: number[] | undefined, bpp: number): number[] {
  return raw.map((value, x) => {
    const a = x >= bpp ? raw[x - bpp]! : 0;
    const b = previous ? previous[x]! : 0;
    const c = previous && x >= bpp ? previous[x - bpp]! : 0;
    const p = a + b - c;
    const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
    const predictor = [0, a, b, (a + b) >> 1, paeth][filter]!;
    return (value - predictor) & 0xff;
  });
}

/** The JPEG with an EXIF APP1 segment carrying `orientation` (1–8), in little- or big-endian TIFF. */
export function withOrientation(jpeg: Buffer, orientation: number, little: boolean): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12 + 4);
  tiff.write(little ? 'II' : 'MM', 0, 'latin1');
  const u16 = (v: number, at: number) => (little ? tiff.writeUInt16LE(v, at) : tiff.writeUInt16BE(v, at));
  const u32 = (v: number, at: number) => (little ? tiff.writeUInt32LE(v, at) : tiff.writeUInt32BE(v, at));
  u16(42, 2);
  u32(8, 4);
  u16(1, 8); // one entry
  u16(0x0112, 10); // Orientation
  u16(3, 12); // SHORT
  u32(1, 14);
  u16(orientation, 18);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xffe1, 0);
  segment.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, payload, jpeg.subarray(2)]);
}

/** Gradients with noise on them (a photograph-like picture: a PNG of it is not trivially small). */
export function photoLike(width: number, height: number, seed: number): { width: number; height: number; data: Uint8Array } {
  const data = new Uint8Array(width * height * 4);
  let state = seed >>> 0 || 1;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 4) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      const n = (state & 31) - 16;
      data[i] = Math.max(0, Math.min(255, ((x * 255) / width + n) | 0));
      data[i + 1] = Math.max(0, Math.min(255, ((y * 255) / height + ((state >> 5) & 31) - 16) | 0));
      data[i + 2] = Math.max(0, Math.min(255, (((x + y) * 127) / width + ((state >> 10) & 15) - 8) | 0));
      data[i + 3] = 255;
    }
  }
  return { width, height, data };
}
