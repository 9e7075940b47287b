// Minimal PNG encoder and a procedural painter: cheap, deterministic, decodable images.
import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pngChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** Encodes 8-bit RGB (3 channels) or RGBA (4) rows that already carry their filter byte 0. */
export function encodePng(width: number, height: number, channels: 3 | 4, filteredRows: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = channels === 4 ? 6 : 2; // colour type RGBA / RGB
  // Level 1: fast enough for 4K images; size hardly matters here.
  const idat = deflateSync(filteredRows, { level: 1 });
  return Buffer.concat([SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
}

/** Small deterministic PRNG (mulberry32); the tests use it too. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface PaintSpec {
  width: number;
  height: number;
  transparent: boolean;
  /** Everything that should change the picture: model, prompt, seed, index, references... */
  identity: string;
}

/** Paints a gradient with a few shapes whose colours and positions derive from `identity`. */
export function paintPng(spec: PaintSpec): Buffer {
  const { width: w, height: h, transparent } = spec;
  const ch = transparent ? 4 : 3;
  const rnd = prng(createHash('sha256').update(spec.identity).digest().readUInt32BE(0));
  const colour = (): [number, number, number] => [Math.floor(rnd() * 256), Math.floor(rnd() * 256), Math.floor(rnd() * 256)];
  const stride = 1 + w * ch;
  const rows = Buffer.alloc(h * stride); // zeros: filter bytes and transparent pixels

  if (!transparent) {
    const [a, b] = [colour(), colour()];
    for (let y = 0; y < h; y++) {
      const row = y * stride + 1;
      for (let x = 0; x < w; x++) {
        const t = (x / w + y / h) / 2;
        const p = row + x * 3;
        rows[p] = a[0] + (b[0] - a[0]) * t;
        rows[p + 1] = a[1] + (b[1] - a[1]) * t;
        rows[p + 2] = a[2] + (b[2] - a[2]) * t;
      }
    }
  }

  const shapes = 4 + Math.floor(rnd() * 5);
  for (let s = 0; s < shapes; s++) {
    const [r, g, b] = colour();
    const cx = rnd() * w;
    const cy = rnd() * h;
    const size = (0.08 + rnd() * 0.25) * Math.min(w, h);
    const circle = rnd() < 0.5;
    const y0 = Math.max(0, Math.floor(cy - size));
    const y1 = Math.min(h - 1, Math.ceil(cy + size));
    for (let y = y0; y <= y1; y++) {
      const half = circle ? Math.sqrt(Math.max(0, size * size - (y - cy) * (y - cy))) : size;
      const x0 = Math.max(0, Math.floor(cx - half));
      const x1 = Math.min(w - 1, Math.ceil(cx + half));
      let p = y * stride + 1 + x0 * ch;
      for (let x = x0; x <= x1; x++, p += ch) {
        rows[p] = r;
        rows[p + 1] = g;
        rows[p + 2] = b;
        if (ch === 4) rows[p + 3] = 255;
      }
    }
  }
  return encodePng(w, h, ch, rows);
}

// --- Padding for the `large` fault, without allocating the padding ---

const ZERO_BLOCK = Buffer.alloc(1024 * 1024);
const padCrcCache = new Map<number, number>();

/**
 * The PNG padded to `totalBytes` with a private ancillary 'gaPd' chunk of zeros before IEND,
 * as a list of buffers: the zeros are one shared block repeated, so no memory is spent on them.
 */
export function paddedPngParts(png: Buffer, totalBytes: number): Buffer[] {
  const padData = totalBytes - png.length - 12;
  if (padData <= 0) return [png];
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(padData, 0);
  head.write('gaPd', 4, 'latin1');
  let crc = padCrcCache.get(padData);
  if (crc === undefined) {
    crc = crc32(head.subarray(4));
    for (let left = padData; left > 0; left -= ZERO_BLOCK.length) crc = crc32(ZERO_BLOCK.subarray(0, Math.min(left, ZERO_BLOCK.length)), crc);
    padCrcCache.set(padData, crc);
  }
  const tail = Buffer.allocUnsafe(4);
  tail.writeUInt32BE(crc, 0);
  const parts = [png.subarray(0, png.length - 12), head];
  for (let left = padData; left > 0; left -= ZERO_BLOCK.length) parts.push(ZERO_BLOCK.subarray(0, Math.min(left, ZERO_BLOCK.length)));
  parts.push(tail, png.subarray(png.length - 12));
  return parts;
}

/** 768 KiB of input = 1 MiB of base64; a multiple of 3 so chunks concatenate cleanly. */
export const BASE64_INPUT_CHUNK = 768 * 1024;

export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/** Base64 of the concatenated parts, produced chunk by chunk. */
export function* base64Chunks(parts: readonly Buffer[], chunk = BASE64_INPUT_CHUNK): Generator<string> {
  const scratch = Buffer.allocUnsafe(chunk);
  let filled = 0;
  for (const part of parts) {
    let offset = 0;
    while (offset < part.length) {
      if (filled === 0 && part.length - offset >= chunk) {
        yield part.toString('base64', offset, offset + chunk); // no copy needed
        offset += chunk;
        continue;
      }
      const n = Math.min(chunk - filled, part.length - offset);
      part.copy(scratch, filled, offset, offset + n);
      filled += n;
      offset += n;
      if (filled === chunk) {
        yield scratch.toString('base64');
        filled = 0;
      }
    }
  }
  if (filled > 0) yield scratch.toString('base64', 0, filled);
}
