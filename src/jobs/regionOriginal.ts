// What the region editor needs to know of an original before anyone paints on it: its size as a
// viewer shows it (a JPEG's EXIF turn applied, as the page's <img> and the decoder do) and whether a
// region edit can take it at all (the decoder's refusals: SVG, GIF, animated, too large). Read from
// the header, without decoding the pixels, so that the editor opens at once. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../core/gateway/errors';
import { decodeImage, isAnimatedWebp } from '../core/images/codecs';
import { imageHeaderOf } from '../core/images/imageHeader';
import { sniffImage, SNIFF_HEAD_BYTES } from '../core/images/imageSniff';
import { jpegOrientation } from '../core/images/orientation';
import { ImageRefused, MAX_REGION_PIXELS } from '../core/images/pixels';
import { animatedRefusal, tooLargeRefusal } from '../core/images/pngDecode';

/** The largest original a region edit reads (the decoder refuses larger ones too). */
const MAX_ORIGINAL_BYTES = 64 * 1024 * 1024;

export interface RegionOriginalInfo {
  width: number;
  height: number;
}

/** The original's shown size, or a ValidationError naming "images" with why it cannot be region-edited. */
export function regionOriginalInfo(file: string): Promise<RegionOriginalInfo> {
  return readRegionOriginal(file, shownSize);
}

/**
 * `use` of the original's bytes (at most 64 MB), every failure a ValidationError naming "images":
 * unreadable, or refused by `use` (an ImageRefused says why; anything else, that it cannot be decoded).
 */
export async function readRegionOriginal<T>(file: string, use: (bytes: Buffer) => Promise<T>): Promise<T> {
  const name = path.basename(file);
  let bytes: Buffer;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > MAX_ORIGINAL_BYTES) throw new Error('not readable');
    bytes = await fs.readFile(file);
  } catch {
    throw new ValidationError('images', l10n.t('Cannot read "{0}": the file does not exist, is not readable or is larger than 64 MB.', name));
  }
  try {
    return await use(bytes);
  } catch (error) {
    const why = error instanceof ImageRefused ? error.message : l10n.t('it cannot be decoded as PNG, JPEG or WebP');
    throw new ValidationError('images', l10n.t('"{0}" cannot be region-edited: {1}', name, why));
  }
}

async function shownSize(bytes: Uint8Array): Promise<RegionOriginalInfo> {
  const kind = sniffImage(bytes.subarray(0, SNIFF_HEAD_BYTES));
  // Anything but PNG, JPEG or WebP: the decoder refuses it at once, with its own words.
  if (kind?.mediaType !== 'image/png' && kind?.mediaType !== 'image/jpeg' && kind?.mediaType !== 'image/webp') {
    await decodeImage(bytes);
    throw new ImageRefused(l10n.t('This is not a PNG, JPEG or WebP image: only those can be region-edited.'));
  }
  if (kind.mediaType === 'image/png' && hasPngChunkBeforeData(bytes, 'acTL')) throw animatedRefusal();
  if (kind.mediaType === 'image/webp' && isAnimatedWebp(bytes)) throw animatedRefusal();
  const header = await imageHeaderOf(bytes);
  if (!header) throw new ImageRefused(l10n.t('The image cannot be read (its header is cut off or damaged).'), 'corrupt', 'no header');
  if (header.width * header.height > MAX_REGION_PIXELS) throw tooLargeRefusal(header.width, header.height);
  // EXIF orientations 5–8 turn the picture a quarter: a viewer shows it with width and height swapped.
  const turned = kind.mediaType === 'image/jpeg' && jpegOrientation(bytes) >= 5;
  return turned ? { width: header.height, height: header.width } : { width: header.width, height: header.height };
}

function hasPngChunkBeforeData(bytes: Uint8Array, wanted: string): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 8; at + 8 <= bytes.length;) {
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (type === wanted) return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    at += 12 + view.getUint32(at);
  }
  return false;
}
