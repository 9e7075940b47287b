// A small preview without native dependencies: decode a PNG (8-bit, non-interlaced, any colour
// type), or take pixels another decoder made (rgbaImage), average boxes down to at most `maxSide`
// pixels, encode as an RGBA PNG. Unusual PNGs (16-bit, interlaced, huge) get no thumbnail: callers
// then show no preview, never the full image.
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { PNG_SIGNATURE } from './pngText';

/** Decoded pixels above this many bytes are not decoded (a 4096×4096 RGBA image is 64 MiB). */
const MAX_DECODED_BYTES = 64 * 1024 * 1024;
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export interface DecodedImage {
  width: number;
  height: number;
  /** RGBA of pixel `i` into `out` at `o`. */
  pixel(i: number, out: Float64Array, o: number): void;
}

export function pngThumbnail(png: Buffer, maxSide = 128): Buffer | undefined {
  let decoded: DecodedImage | undefined;
  try {
    decoded = decodePng(png);
  } catch {
    return undefined;
  }
  return decoded && thumbnail(decoded, maxSide);
}

/** Pixels as 8-bit RGBA rows (what WASM decoders give), or undefined when the sizes do not match. */
export function rgbaImage(width: number, height: number, rgba: Uint8Array | Uint8ClampedArray): DecodedImage | undefined {
  if (!(width > 0 && height > 0) || rgba.length !== width * height * 4) return undefined;
  return {
    width,
    height,
    pixel: (i, out, o) => {
      for (let c = 0; c < 4; c++) out[o + c] = rgba[i * 4 + c]!;
    },
  };
}

/** The thumbnail (an RGBA PNG of at most `maxSide` px on its long side) of decoded pixels. */
export function thumbnail(decoded: DecodedImage, maxSide = 128): Buffer {
  const { width, height } = decoded;
  const scale = Math.min(1, maxSide / Math.max(width, height));
  const tw = Math.max(1, Math.round(width * scale));
  const th = Math.max(1, Math.round(height * scale));
  const sums = new Float64Array(tw * th * 4);
  const counts = new Uint32Array(tw * th);
  const px = new Float64Array(4);
  for (let y = 0; y < height; y++) {
    const ty = Math.min(th - 1, Math.floor((y * th) / height));
    for (let x = 0; x < width; x++) {
      const t = ty * tw + Math.min(tw - 1, Math.floor((x * tw) / width));
      decoded.pixel(y * width + x, px, 0);
      // Colours weighted by alpha so transparent pixels do not darken the edges.
      // Indices here and below are in range by construction (t < tw * th, px has 4 entries).
      const a = px[3]!;
      sums[t * 4]! += px[0]! * a;
      sums[t * 4 + 1]! += px[1]! * a;
      sums[t * 4 + 2]! += px[2]! * a;
      sums[t * 4 + 3]! += a;
      counts[t]!++;
    }
  }
  const rows = Buffer.alloc(th * (tw * 4 + 1));
  for (let y = 0; y < th; y++) {
    const row = y * (tw * 4 + 1);
    for (let x = 0; x < tw; x++) {
      const t = y * tw + x;
      const alpha = sums[t * 4 + 3]!;
      const count = counts[t]!;
      const o = row + 1 + x * 4;
      for (let c = 0; c < 3; c++) rows[o + c] = alpha ? Math.round(sums[t * 4 + c]! / alpha) : 0;
      rows[o + 3] = count ? Math.round(alpha / count) : 0;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(tw, 0);
  ihdr.writeUInt32BE(th, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

function decodePng(png: Buffer): DecodedImage | undefined {
  if (png.length < 33 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  let width = 0;
  let height = 0;
  let colorType = -1;
  let palette: Buffer | undefined;
  let paletteAlpha: Buffer | undefined;
  const idat: Buffer[] = [];
  for (let offset = 8; offset + 12 <= png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const bitDepth = data[8];
      colorType = data[9] ?? -1;
      if (bitDepth !== 8 || data[12] !== 0 || !(colorType in CHANNELS)) return undefined;
    } else if (type === 'PLTE') palette = data;
    else if (type === 'tRNS') paletteAlpha = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const channels = CHANNELS[colorType];
  if (!channels || !width || !height || (colorType === 3 && !palette)) return undefined;
  const stride = width * channels;
  if (stride * height > MAX_DECODED_BYTES) return undefined;
  const filtered = inflateSync(Buffer.concat(idat), { maxOutputLength: (stride + 1) * height });
  if (filtered.length < (stride + 1) * height) return undefined;
  const raw = unfilter(filtered, stride, height, channels);
  // i < width * height and raw holds stride * height bytes: the reads of raw are in range.
  const pixel = (i: number, out: Float64Array, o: number) => {
    const p = i * channels;
    if (colorType === 0 || colorType === 4) {
      out[o] = out[o + 1] = out[o + 2] = raw[p]!;
      out[o + 3] = colorType === 4 ? raw[p + 1]! : 255;
    } else if (colorType === 3) {
      const index = raw[p]!;
      out[o] = palette![index * 3] ?? 0;
      out[o + 1] = palette![index * 3 + 1] ?? 0;
      out[o + 2] = palette![index * 3 + 2] ?? 0;
      out[o + 3] = paletteAlpha?.[index] ?? 255;
    } else {
      out[o] = raw[p]!;
      out[o + 1] = raw[p + 1]!;
      out[o + 2] = raw[p + 2]!;
      out[o + 3] = colorType === 6 ? raw[p + 3]! : 255;
    }
  };
  return { width, height, pixel };
}

/** Reverses the five PNG row filters (None, Sub, Up, Average, Paeth). */
function unfilter(data: Buffer, stride: number, height: number, bpp: number): Buffer {
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = data[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    const prev = row - stride;
    // All reads are inside out (stride * height) and data ((stride + 1) * height, checked by the caller).
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[row + x - bpp]! : 0;
      const b = y > 0 ? out[prev + x]! : 0;
      const c = x >= bpp && y > 0 ? out[prev + x - bpp]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else if (filter !== 0) throw new Error(`bad PNG filter ${filter}`);
      out[row + x] = (data[src + x]! + predictor) & 0xff;
    }
  }
  return out;
}
