// Whole images in and out of RGBA for region edits. PNG by pngDecode.ts; JPEG and WebP by the WASM
// decoders of Squoosh (@jsquash, as files/imagePreview.ts), loaded on first use from next to the bundle
// (esbuild.mjs copies the .wasm into dist/) or from the package when run from the sources.
import { crc32, deflateSync } from 'node:zlib';
import * as l10n from '@vscode/l10n';
import { iccProfileOf } from './colourProfile';
import { imageHeaderOf } from './imageHeader';
import { SNIFF_HEAD_BYTES, sniffImage } from './imageSniff';
import { jpegOrientation, oriented } from './orientation';
import { ImageRefused, MAX_REGION_PIXELS, type RgbaImage } from './pixels';
import { animatedRefusal, decodePng, tooLargeRefusal } from './pngDecode';
import { decodeWithWasm, type WasmPixels } from './wasmDecoders';

export type DecodedMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

export interface DecodedImage extends RgbaImage {
  mediaType: DecodedMediaType;
  /** The original's ICC colour profile, when it has one: pass it to encodePng to keep its colours. */
  iccProfile?: Uint8Array;
}

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

/**
 * PNG (any standard colour type, 8/16-bit, interlaced or not), JPEG, WebP → RGBA. SVG, GIF, animated
 * PNG (acTL) and animated WebP are refused with ImageRefused; so are images over 4096×4096 × 2 pixels.
 * A JPEG's EXIF orientation is applied (orientation.ts): the pixels come as viewers show them.
 */
export async function decodeImage(bytes: Uint8Array): Promise<DecodedImage> {
  const kind = sniffImage(bytes.subarray(0, SNIFF_HEAD_BYTES));
  switch (kind?.mediaType) {
    case 'image/png':
    case 'image/jpeg':
    case 'image/webp': {
      const image = kind.mediaType === 'image/png' ? decodePng(bytes) : await decodeWasm(bytes, kind.mediaType);
      const iccProfile = iccProfileOf(bytes, kind.mediaType);
      return iccProfile ? { ...image, mediaType: kind.mediaType, iccProfile } : { ...image, mediaType: kind.mediaType };
    }
    case 'image/svg+xml':
      throw new ImageRefused(l10n.t('This is an SVG image: region edits take PNG, JPEG or WebP pixels; use Edit Image for the whole image.'), 'svg');
    case 'image/gif':
      throw new ImageRefused(
        l10n.t('This is a GIF image: GIF and animated images cannot be region-edited (PNG, JPEG or WebP only); use Edit Image for the whole image.'),
        'animated',
      );
    default:
      throw new ImageRefused(l10n.t('This is not a PNG, JPEG or WebP image: only those can be region-edited.'), 'unsupported');
  }
}

async function decodeWasm(bytes: Uint8Array, mediaType: 'image/jpeg' | 'image/webp'): Promise<RgbaImage> {
  if (mediaType === 'image/webp' && isAnimatedWebp(bytes)) throw animatedRefusal();
  const header = await imageHeaderOf(bytes);
  if (!header) throw new ImageRefused(l10n.t('The image cannot be read (its header is cut off or damaged).'), 'corrupt', 'no header');
  if (header.width * header.height > MAX_REGION_PIXELS) throw tooLargeRefusal(header.width, header.height);
  let pixels: WasmPixels;
  try {
    pixels = await decodeWithWasm(mediaType, bytes);
  } catch {
    throw new ImageRefused(l10n.t('The image cannot be read (its pixel data is damaged).'), 'corrupt', `${mediaType} decoder failed`);
  }
  // A view, not a copy: the decoder's buffer becomes the image's (unless EXIF asks for a turn).
  const image = { width: pixels.width, height: pixels.height, data: new Uint8Array(pixels.data.buffer, pixels.data.byteOffset, pixels.data.byteLength) };
  return mediaType === 'image/jpeg' ? oriented(image, jpegOrientation(bytes)) : image;
}

/** VP8X with its animation flag, or an ANIM chunk (RIFF chunks from byte 12). */
export function isAnimatedWebp(bytes: Uint8Array): boolean {
  const fourcc = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 12; at + 8 <= bytes.length;) {
    const type = fourcc(at);
    if (type === 'ANIM' || type === 'ANMF') return true;
    if (type === 'VP8X' && ((bytes[at + 8] ?? 0) & 0x02) !== 0) return true;
    if (type === 'VP8 ' || type === 'VP8L') return false; // image data: a still picture
    at += 8 + view.getUint32(at + 4, true) + (view.getUint32(at + 4, true) & 1);
  }
  return false;
}

/**
 * An RGBA PNG, Paeth-filtered rows, zlib level 6. Lossless: decodeImage(encodePng(x)) equals x.
 * With `iccProfile` (decodeImage's), the PNG carries it (iCCP) so viewers show the original's colours.
 */
export function encodePng(image: RgbaImage, options?: { iccProfile?: Uint8Array }): Buffer {
  const { width, height, data } = image;
  const stride = width * 4;
  if (data.length !== stride * height) throw new RangeError(`RGBA of ${width}×${height} needs ${stride * height} bytes, got ${data.length}`);
  const rows = Buffer.alloc(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const at = y * (stride + 1);
    const cur = y * stride;
    const prev = cur - stride;
    rows[at] = y > 0 ? 4 : 1; // first row: Sub (Paeth would equal it), then Paeth
    for (let x = 0; x < stride; x++) {
      const a = x >= 4 ? data[cur + x - 4]! : 0;
      const b = y > 0 ? data[prev + x]! : 0;
      const c = x >= 4 && y > 0 ? data[prev + x - 4]! : 0;
      const pa = Math.abs(b - c);
      const pb = Math.abs(a - c);
      const pc = Math.abs(a + b - 2 * c);
      const predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      rows[at + 1 + x] = (data[cur + x]! - predictor) & 0xff;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const pixels = deflateSync(rows, { level: 6 });
  // Header and CRC around the compressed pixels, which are copied once (into the result) and no more.
  const profile = options?.iccProfile;
  // iCCP: a profile name, NUL, compression method 0, the zlib-compressed profile.
  const iccp = profile ? chunk('iCCP', Buffer.concat([Buffer.from('ICC profile\0\0', 'latin1'), deflateSync(profile)])) : [];
  return Buffer.concat([PNG_SIGNATURE, ...chunk('IHDR', ihdr), ...iccp, ...chunk('IDAT', pixels), ...chunk('IEND', Buffer.alloc(0))]);
}

/** A PNG chunk as [length and type, data, CRC]. */
function chunk(type: string, data: Buffer): Buffer[] {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return [head, data, crc];
}
