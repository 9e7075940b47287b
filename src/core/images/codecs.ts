import type { RgbaImage } from './pixels';

export type DecodedMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

/**
 * PNG (any standard colour type, 8/16-bit, interlaced or not), JPEG, WebP → RGBA. SVG, GIF, animated
 * PNG (acTL) and animated WebP are refused with ImageRefused; so are images over 4096×4096 × 2 pixels.
 */
export async function decodeImage(bytes: Uint8Array): Promise<RgbaImage & { mediaType: DecodedMediaType }> {
  void bytes;
  throw new Error('not yet');
}

/** An RGBA PNG (zlib level 6). Lossless: decodeImage(encodePng(x)) equals x. */
export function encodePng(image: RgbaImage): Buffer {
  void image;
  throw new Error('not yet');
}
