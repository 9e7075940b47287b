// Whole images in and out of RGBA for region edits. PNG by pngDecode.ts; JPEG and WebP by the WASM
// decoders of Squoosh (@jsquash, as files/imagePreview.ts), loaded on first use from next to the bundle
// (esbuild.mjs copies the .wasm into dist/) or from the package when run from the sources.
import * as l10n from '@vscode/l10n';
import { iccProfileOf } from './colourProfile';
import { imageHeaderOf } from './imageHeader';
import { SNIFF_HEAD_BYTES, sniffImage } from './imageSniff';
import { jpegOrientation, oriented } from './orientation';
import { ImageRefused, MAX_REGION_PIXELS, type RgbaImage } from './pixels';
import { animatedRefusal, decodePngStreaming, tooLargeRefusal } from './pngDecode';
import { decodeWithWasm, type WasmPixels } from './wasmDecoders';
export { encodePng, encodePngParts, type PngOptions } from './pngEncode';

export type DecodedMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

export interface DecodedImage extends RgbaImage {
  mediaType: DecodedMediaType;
  /** The original's ICC colour profile, when it has one: pass it to encodePng to keep its colours. */
  iccProfile?: Uint8Array;
}

/**
 * PNG (any standard colour type, 8/16-bit, interlaced or not), JPEG, WebP → RGBA. SVG, GIF, animated
 * PNG (acTL) and animated WebP are refused with ImageRefused; so are images over 4096×4096 × 2 pixels.
 * A JPEG's EXIF orientation is applied (orientation.ts): the pixels come as viewers show them.
 * `transfer`: a large JPEG's or WebP's bytes may be handed over to the decode worker (their buffer
 * detached): for a caller that does not use them again.
 */
export async function decodeImage(bytes: Uint8Array, options: { transfer?: boolean } = {}): Promise<DecodedImage> {
  const kind = sniffImage(bytes.subarray(0, SNIFF_HEAD_BYTES));
  switch (kind?.mediaType) {
    case 'image/png':
    case 'image/jpeg':
    case 'image/webp': {
      // Read before the pixels: a large JPEG's or WebP's bytes are handed over to the decode worker.
      const profile = iccProfileOf(bytes, kind.mediaType);
      // A copy (a view of `bytes` would be emptied with them): new Uint8Array, as a Buffer's slice() is no copy.
      const iccProfile = profile && new Uint8Array(profile);
      const image = kind.mediaType === 'image/png' ? await decodePngStreaming(bytes) : await decodeWasm(bytes, kind.mediaType, options);
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

async function decodeWasm(bytes: Uint8Array, mediaType: 'image/jpeg' | 'image/webp', options: { transfer?: boolean }): Promise<RgbaImage> {
  if (mediaType === 'image/webp' && isAnimatedWebp(bytes)) throw animatedRefusal();
  const header = await imageHeaderOf(bytes);
  if (!header) throw new ImageRefused(l10n.t('The image cannot be read (its header is cut off or damaged).'), 'corrupt', 'no header');
  if (header.width * header.height > MAX_REGION_PIXELS) throw tooLargeRefusal(header.width, header.height);
  const orientation = mediaType === 'image/jpeg' ? jpegOrientation(bytes) : 1;
  let pixels: WasmPixels;
  try {
    pixels = await decodeWithWasm(mediaType, bytes, options);
  } catch {
    throw new ImageRefused(l10n.t('The image cannot be read (its pixel data is damaged).'), 'corrupt', `${mediaType} decoder failed`);
  }
  // A view, not a copy: the decoder's buffer becomes the image's (unless EXIF asks for a turn).
  const image = { width: pixels.width, height: pixels.height, data: new Uint8Array(pixels.data.buffer, pixels.data.byteOffset, pixels.data.byteLength) };
  return oriented(image, orientation);
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
