// RGBA → PNG in pieces, for region edits of large originals: rows are filtered a piece (~1 MB) at a
// time and each piece is deflated on its own (with the previous piece's last 32 KB as its dictionary,
// so compression is as good as one stream), each compressed piece its own IDAT chunk. So a 4096×4096
// image never has a whole filtered copy (64 MB) nor a joined compressed copy beside its chunks.
import { constants, crc32, deflateRawSync, deflateSync } from 'node:zlib';
import type { RgbaImage } from './pixels';

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
/** Filtered bytes per deflated piece (whole rows, at least one). */
const PIECE_BYTES = 1 << 20;
const WINDOW = 32 * 1024;
/** zlib header: deflate, 32 KB window, default compression (what deflateSync writes for level 6). */
const ZLIB_HEADER = Uint8Array.of(0x78, 0x9c);

export interface PngOptions {
  /** The original's ICC profile (decodeImage's `iccProfile`): written as iCCP so viewers show the original's colours. */
  iccProfile?: Uint8Array;
  /** Whole chunks (e.g. pngText.ts buildITXtChunk) written before IEND. */
  chunks?: readonly Uint8Array[];
}

/**
 * An RGBA PNG as its parts, in order (write them one after the other, or Buffer.concat them):
 * Paeth-filtered rows (the first row Sub), zlib level 6. Lossless: decodeImage of it equals `image`.
 */
export function encodePngParts(image: RgbaImage, options: PngOptions = {}): Buffer[] {
  const { width, height, data } = image;
  const stride = width * 4;
  if (data.length !== stride * height) throw new RangeError(`RGBA of ${width}×${height} needs ${stride * height} bytes, got ${data.length}`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const parts: Buffer[] = [Buffer.from(PNG_SIGNATURE), ...chunk('IHDR', ihdr)];
  if (options.iccProfile) {
    // iCCP: a profile name, NUL, compression method 0, the zlib-compressed profile.
    parts.push(...chunk('iCCP', Buffer.concat([Buffer.from('ICC profile\0\0', 'latin1'), deflateSync(options.iccProfile)])));
  }
  const rowsPerPiece = Math.max(1, Math.floor(PIECE_BYTES / (stride + 1)));
  const piece = Buffer.alloc(Math.min(height, rowsPerPiece) * (stride + 1));
  let adler = 1;
  let dictionary: Buffer | undefined;
  for (let y0 = 0; y0 < height; y0 += rowsPerPiece) {
    const rows = Math.min(rowsPerPiece, height - y0);
    for (let r = 0; r < rows; r++) filterRow(data, y0 + r, stride, piece, r * (stride + 1));
    const filtered = piece.subarray(0, rows * (stride + 1));
    adler = adler32(filtered, adler);
    const last = y0 + rows >= height;
    // A sync flush ends each piece on a byte boundary, not final: the pieces join into one deflate stream.
    let compressed = deflateRawSync(filtered, { level: 6, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH, ...(dictionary && { dictionary }) });
    if (y0 === 0) compressed = Buffer.concat([ZLIB_HEADER, compressed]);
    if (last) compressed = Buffer.concat([compressed, uint32(adler)]);
    dictionary = Buffer.from(filtered.subarray(Math.max(0, filtered.length - WINDOW)));
    parts.push(...chunk('IDAT', compressed));
  }
  for (const extra of options.chunks ?? []) parts.push(Buffer.from(extra.buffer, extra.byteOffset, extra.byteLength));
  parts.push(...chunk('IEND', Buffer.alloc(0)));
  return parts;
}

/** The whole PNG in one buffer (small images, tests). */
export function encodePng(image: RgbaImage, options?: PngOptions): Buffer {
  return Buffer.concat(encodePngParts(image, options));
}

/** Row `y` of `data`, filtered (Sub for the first row, Paeth after), with its filter byte at `to`. */
function filterRow(data: Uint8Array, y: number, stride: number, out: Uint8Array, to: number): void {
  const cur = y * stride;
  const prev = cur - stride;
  out[to] = y > 0 ? 4 : 1; // first row: Sub (Paeth would equal it), then Paeth
  const o = to + 1;
  if (y === 0) {
    for (let x = 0; x < stride; x++) out[o + x] = (data[cur + x]! - (x >= 4 ? data[cur + x - 4]! : 0)) & 0xff;
    return;
  }
  for (let x = 0; x < 4; x++) out[o + x] = (data[cur + x]! - data[prev + x]!) & 0xff; // a = c = 0: Paeth is b
  for (let x = 4; x < stride; x++) {
    const a = data[cur + x - 4]!;
    const b = data[prev + x]!;
    const c = data[prev + x - 4]!;
    const pa = Math.abs(b - c);
    const pb = Math.abs(a - c);
    const pc = Math.abs(a + b - 2 * c);
    out[o + x] = (data[cur + x]! - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff;
  }
}

/** zlib's checksum (RFC 1950) of `bytes`, continuing from `adler`: the trailer of the joined pieces. */
function adler32(bytes: Uint8Array, adler = 1): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  // 5552: the most bytes before b can pass 2^32 (zlib's NMAX).
  for (let start = 0; start < bytes.length; start += 5552) {
    const end = Math.min(bytes.length, start + 5552);
    for (let i = start; i < end; i++) {
      a += bytes[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const uint32 = (value: number): Buffer => {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0, 0);
  return out;
};

/** A PNG chunk as [length and type, data, CRC]. */
function chunk(type: string, data: Buffer): Buffer[] {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return [head, data, crc];
}
