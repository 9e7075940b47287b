// PNG → 8-bit RGBA without native modules: every standard colour type, bit depths 1–16, Adam7
// interlacing, tRNS. Animated PNGs (acTL) are refused: only their first frame would be edited.
import { createInflate, inflateSync } from 'node:zlib';
import * as l10n from '@vscode/l10n';
import { ImageRefused, MAX_REGION_PIXELS, type RgbaImage } from './pixels';

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Record<number, readonly number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
/** Adam7 passes: x start, y start, x step, y step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

interface Header {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  interlaced: boolean;
  palette?: Uint8Array;
  trns?: Uint8Array;
}

/** `why` is a short technical note (English), kept in `detail` for the log too. */
const corrupt = (why: string) => new ImageRefused(l10n.t('The PNG image cannot be read ({0}).', why), 'corrupt', why);

/** The chunks a decoder needs: the header (with palette and tRNS) and the IDAT parts, not joined. */
function readChunks(bytes: Uint8Array): { header: Header; idat: Uint8Array[] } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: Header | undefined;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 12 <= bytes.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (data.length < length) throw corrupt('cut off');
    if (type === 'IHDR') header = readHeader(data);
    else if (type === 'acTL') throw animatedRefusal();
    else if (type === 'PLTE' && header) header.palette = data;
    else if (type === 'tRNS' && header) header.trns = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  if (!header) throw corrupt('no IHDR');
  if (header.colorType === 3 && !header.palette) throw corrupt('no palette');
  return { header, idat };
}

/** PNG → RGBA in one go (the filtered rows inflated whole): for small images. */
export function decodePng(bytes: Uint8Array): RgbaImage {
  const { header, idat } = readChunks(bytes);
  const rows = new RowDecoder(header);
  let filtered: Buffer;
  try {
    filtered = inflateSync(idat.length === 1 ? idat[0]! : Buffer.concat(idat), { maxOutputLength: rows.expected });
  } catch {
    throw corrupt('damaged pixel data');
  }
  rows.push(filtered);
  return rows.finish();
}

/**
 * PNG → RGBA with the pixel data inflated as a stream: only the output and two rows are held, never
 * a whole inflated copy (64 MB more for 4096×4096) nor the IDAT chunks joined.
 * `onHeader` may refuse the image from its size before any pixel is decoded.
 */
export async function decodePngStreaming(bytes: Uint8Array, onHeader?: (width: number, height: number) => void): Promise<RgbaImage> {
  return decodeStreaming(bytes, onHeader);
}

/**
 * The rows of a PNG, top to bottom, each as RGBA (the buffer is reused: read it before returning),
 * without the whole image ever in memory (an interlaced PNG is decoded whole first). For masks.
 */
export async function decodePngRows(
  bytes: Uint8Array,
  onHeader: (width: number, height: number) => void,
  onRow: (y: number, rgba: Uint8Array) => void,
): Promise<void> {
  const { header } = readChunks(bytes);
  if (!header.interlaced) {
    await decodeStreaming(bytes, onHeader, onRow);
    return;
  }
  const image = await decodeStreaming(bytes, onHeader);
  const stride = image.width * 4;
  for (let y = 0; y < image.height; y++) onRow(y, image.data.subarray(y * stride, (y + 1) * stride));
}

async function decodeStreaming(
  bytes: Uint8Array,
  onHeader?: (width: number, height: number) => void,
  onRow?: (y: number, rgba: Uint8Array) => void,
): Promise<RgbaImage> {
  const { header, idat } = readChunks(bytes);
  onHeader?.(header.width, header.height);
  const rows = new RowDecoder(header, onRow);
  await new Promise<void>((resolve, reject) => {
    const inflate = createInflate({ chunkSize: 256 * 1024 });
    inflate.on('data', (chunk: Buffer) => {
      try {
        rows.push(chunk);
      } catch (error) {
        inflate.destroy();
        reject(error);
      }
    });
    inflate.on('end', resolve);
    inflate.on('error', () => reject(corrupt('damaged pixel data')));
    for (const part of idat) inflate.write(part);
    inflate.end();
  });
  return rows.finish();
}

/** Takes the inflated, filtered rows in pieces of any size; unfilters and expands each row as it completes. */
class RowDecoder {
  readonly expected: number;
  private readonly out: Uint8Array;
  private readonly passes: { x0: number; y0: number; dx: number; dy: number; w: number; h: number; stride: number }[] = [];
  private readonly bpp: number;
  private cur: Uint8Array;
  private prev: Uint8Array;
  private pass = 0;
  private y = 0;
  private filled = 0;

  /** `onRow` (not interlaced only): each row is given in turn, in one row's buffer, instead of the whole image. */
  constructor(
    private readonly header: Header,
    private readonly onRow?: (y: number, rgba: Uint8Array) => void,
  ) {
    const { width, height } = header;
    const bitsPerPixel = CHANNELS[header.colorType]! * header.depth;
    this.bpp = Math.max(1, bitsPerPixel >> 3);
    let expected = 0;
    let widest = 0;
    for (const [x0, y0, dx, dy] of header.interlaced ? ADAM7 : ([[0, 0, 1, 1]] as const)) {
      const w = Math.ceil((width - x0) / dx);
      const h = Math.ceil((height - y0) / dy);
      if (w <= 0 || h <= 0) continue;
      const stride = Math.ceil((w * bitsPerPixel) / 8);
      this.passes.push({ x0, y0, dx, dy, w, h, stride });
      expected += h * (1 + stride);
      widest = Math.max(widest, stride + 1);
    }
    this.expected = expected;
    this.cur = new Uint8Array(widest);
    this.prev = new Uint8Array(widest);
    this.out = new Uint8Array(width * (onRow ? 1 : height) * 4);
  }

  push(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length && this.pass < this.passes.length;) {
      const p = this.passes[this.pass]!;
      const n = Math.min(p.stride + 1 - this.filled, bytes.length - at);
      this.cur.set(bytes.subarray(at, at + n), this.filled);
      this.filled += n;
      at += n;
      if (this.filled < p.stride + 1) continue;
      unfilterRow(this.cur, this.y > 0 ? this.prev : undefined, p.stride, this.bpp);
      const to = this.onRow ? 0 : ((p.y0 + this.y * p.dy) * this.header.width + p.x0) * 4;
      expandRow(this.header, this.cur.subarray(1, 1 + p.stride), p.w, this.out, to, p.dx * 4);
      this.onRow?.(this.y, this.out);
      [this.cur, this.prev] = [this.prev, this.cur];
      this.filled = 0;
      if (++this.y === p.h) {
        this.pass++;
        this.y = 0;
      }
    }
  }

  finish(): RgbaImage {
    if (this.pass < this.passes.length) throw corrupt('too little pixel data');
    return { width: this.header.width, height: this.header.height, data: this.out };
  }
}

export function animatedRefusal(): ImageRefused {
  return new ImageRefused(l10n.t('This is an animated image: animated images cannot be region-edited; use Edit Image for the whole image.'), 'animated');
}

export function tooLargeRefusal(width: number, height: number): ImageRefused {
  return new ImageRefused(
    l10n.t('The image is {0}×{1} pixels: region edits take at most {2} megapixels (4096×8192); use Edit Image for the whole image.', width, height, '33.5'),
    'tooLarge',
  );
}

function readHeader(data: Uint8Array): Header {
  if (data.length < 13) throw corrupt('short IHDR');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = view.getUint32(0);
  const height = view.getUint32(4);
  const [depth, colorType, compression, filter, interlace] = [data[8]!, data[9]!, data[10]!, data[11]!, data[12]!];
  if (!DEPTHS[colorType]?.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1) throw corrupt('unknown format');
  if (!width || !height) throw corrupt('no pixels');
  if (width * height > MAX_REGION_PIXELS) throw tooLargeRefusal(width, height);
  return { width, height, depth, colorType, interlaced: interlace === 1 };
}

/** Reverses one row's filter in place: `row` and `prev` (the previous row, unfiltered; none for the first) start with their filter byte. */
function unfilterRow(row: Uint8Array, prev: Uint8Array | undefined, stride: number, bpp: number): void {
  const filter = row[0]!;
  if (filter === 0) return;
  if (filter > 4) throw corrupt(`filter ${filter}`);
  for (let x = 1; x <= stride; x++) {
    const a = x > bpp ? row[x - bpp]! : 0;
    const b = prev ? prev[x]! : 0;
    let predictor: number;
    if (filter === 1) predictor = a;
    else if (filter === 2) predictor = b;
    else if (filter === 3) predictor = (a + b) >> 1;
    else {
      const c = x > bpp && prev ? prev[x - bpp]! : 0;
      const pa = Math.abs(b - c);
      const pb = Math.abs(a - c);
      const pc = Math.abs(a + b - 2 * c);
      predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    row[x] = (row[x]! + predictor) & 0xff;
  }
}

/** One unfiltered row of `count` pixels → RGBA at `to`, `step` bytes apart (4, or more for an Adam7 pass). */
function expandRow(header: Header, row: Uint8Array, count: number, out: Uint8Array, to: number, step: number): void {
  const { depth, colorType, palette, trns } = header;
  if (depth === 8 && colorType === 6 && step === 4) return out.set(row.subarray(0, count * 4), to);
  const channels = CHANNELS[colorType]!;
  // A sample at bit depth `depth` (16-bit: the raw 0..65535 value) and its 8-bit value.
  const sample = (i: number): number => {
    if (depth === 8) return row[i]!;
    if (depth === 16) return (row[2 * i]! << 8) | row[2 * i + 1]!;
    const bit = i * depth;
    return (row[bit >> 3]! >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
  };
  const to8 = depth === 16 ? (v: number) => ((v * 255 + 32767) / 65535) | 0 : depth === 8 ? (v: number) => v : (v: number) => (v * 255) / ((1 << depth) - 1);
  const key = trnsKey(header);
  for (let x = 0, o = to; x < count; x++, o += step) {
    const s = x * channels;
    if (colorType === 3) {
      const index = sample(s);
      out[o] = palette![index * 3] ?? 0;
      out[o + 1] = palette![index * 3 + 1] ?? 0;
      out[o + 2] = palette![index * 3 + 2] ?? 0;
      out[o + 3] = trns?.[index] ?? 255;
    } else if (colorType === 0 || colorType === 4) {
      const g = sample(s);
      out[o] = out[o + 1] = out[o + 2] = to8(g);
      out[o + 3] = colorType === 4 ? to8(sample(s + 1)) : key && key[0] === g ? 0 : 255;
    } else {
      const r = sample(s);
      const g = sample(s + 1);
      const b = sample(s + 2);
      out[o] = to8(r);
      out[o + 1] = to8(g);
      out[o + 2] = to8(b);
      out[o + 3] = colorType === 6 ? to8(sample(s + 3)) : key && key[0] === r && key[1] === g && key[2] === b ? 0 : 255;
    }
  }
}

/** The transparent colour of a grey or RGB PNG without alpha (tRNS: 16-bit values), or undefined. */
function trnsKey({ colorType, trns }: Header): number[] | undefined {
  if (!trns || (colorType !== 0 && colorType !== 2)) return undefined;
  const values = colorType === 0 ? 1 : 3;
  if (trns.length < values * 2) return undefined;
  return Array.from({ length: values }, (_, i) => (trns[2 * i]! << 8) | trns[2 * i + 1]!);
}
