// The mask of a region edit (issue 41): a PNG in the workspace where white or opaque marks what
// changes. Every check runs before any money moves: the path is confined like every reference
// (outputPath.ts confine), the bytes are a PNG, the mask is the image's size and marks something.
// Each refusal names the field "mask" and what is allowed. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../gateway/errors';
import { decodePngRows } from '../images/pngDecode';
import { ImageRefused } from '../images/pixels';
import { maskFromRows, type RegionMask } from '../images/regionMask';
import { placeInWorkspace } from './workspaceReferences';

export const MASK_FIELD = 'mask';
/** Same limit as a reference image. */
export const MAX_MASK_BYTES = 25 * 1024 * 1024;
export const FEATHER_DEFAULT = 8;
export const FEATHER_MAX = 256;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** What a region edit adds to an edit's arguments. */
export interface RegionArgs {
  /** The mask PNG: a workspace-relative or absolute path, or a file URI. */
  mask?: string;
  /** Soft edge in pixels outside the region (default 8). */
  feather?: number;
  /** The result's format (default PNG: nothing outside the region re-compressed). */
  format?: 'png' | 'jpeg';
  /** true: the plain edit of the whole image (no mask). */
  wholeImage?: boolean;
}

export const REGION_FORMATS = ['png', 'jpeg'] as const;

/** Picks and checks `mask`, `feather`, `format` and `wholeImage` of an argument object; each refusal names its field. */
export function regionArgsOf(args: Record<string, unknown>): RegionArgs {
  const result: RegionArgs = {};
  if (args.mask !== undefined) {
    if (typeof args.mask !== 'string' || !args.mask.trim()) {
      throw new ValidationError(MASK_FIELD, l10n.t('"mask" must be the path of a PNG in the workspace (white or opaque marks what changes).'));
    }
    result.mask = args.mask.trim();
  }
  if (args.feather !== undefined) result.feather = checkFeather(args.feather);
  if (args.format !== undefined) {
    if (!REGION_FORMATS.includes(args.format as 'png')) {
      throw new ValidationError('format', l10n.t('"format" must be "png" (the default) or "jpeg".'), [...REGION_FORMATS]);
    }
    result.format = args.format as 'png' | 'jpeg';
  }
  if (args.wholeImage !== undefined) {
    if (typeof args.wholeImage !== 'boolean') throw new ValidationError('wholeImage', l10n.t('"wholeImage" must be true or false.'), ['true', 'false']);
    result.wholeImage = args.wholeImage;
  }
  if (result.wholeImage && result.mask !== undefined) {
    throw new ValidationError(MASK_FIELD, l10n.t('Give either "mask" (a region edit) or "wholeImage": true (the whole image), not both.'));
  }
  if (result.feather !== undefined && result.mask === undefined) {
    throw new ValidationError('feather', l10n.t('"feather" applies only to a region edit: give "mask" too.'));
  }
  if (result.format !== undefined && result.mask === undefined) {
    throw new ValidationError('format', l10n.t('"format" applies only to a region edit: give "mask" too.'), [...REGION_FORMATS]);
  }
  return result;
}

export function checkFeather(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > FEATHER_MAX) {
    throw new ValidationError('feather', l10n.t('"feather" must be a whole number of pixels from 0 to {0}.', FEATHER_MAX));
  }
  return value;
}

/** The absolute path of the mask, inside one of `roots` (links resolved), or a ValidationError naming "mask". */
export async function resolveMaskPath(input: string, roots: readonly string[]): Promise<string> {
  const text = input.trim();
  if (!roots.length) throw new ValidationError(MASK_FIELD, l10n.t('Open a workspace folder first: a mask is read from it only.'));
  const place = await placeInWorkspace(text, roots);
  if ('inside' in place) return place.inside;
  if ('invalidUri' in place)
    throw new ValidationError(MASK_FIELD, l10n.t('"mask" ({0}) is not a valid file URI; give a path relative to the workspace folder.', text));
  const { throughLink } = place;
  throw new ValidationError(
    MASK_FIELD,
    throughLink
      ? l10n.t('"mask" ({0}) leads outside the workspace folder through a symbolic link; only a PNG inside the workspace is read.', text)
      : l10n.t('"mask" ({0}) leads outside the workspace folder; only a PNG inside the workspace is read.', text),
  );
}

export function isPngBytes(bytes: Uint8Array): boolean {
  return bytes.length >= PNG_SIGNATURE.length && PNG_SIGNATURE.every((b, i) => bytes[i] === b);
}

/**
 * Reads the mask at `file` (already confined) for an image of `image`'s size: a PNG by its bytes,
 * decodable, the same width and height, marking at least one pixel. `shown`: the name in messages.
 */
export async function readMask(file: string, image: { width: number; height: number }, shown = path.basename(file)): Promise<RegionMask> {
  let bytes: Buffer;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw new Error('not a file');
    if (stat.size > MAX_MASK_BYTES) {
      throw new ValidationError(MASK_FIELD, l10n.t('"mask" ({0}) is larger than 25 MB; give a PNG of the image\'s size.', shown));
    }
    bytes = await fs.readFile(file);
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError(MASK_FIELD, l10n.t('Cannot read "mask" ({0}): the file does not exist or is not readable.', shown));
  }
  if (!isPngBytes(bytes)) {
    throw new ValidationError(
      MASK_FIELD,
      l10n.t('"mask" ({0}) is not a PNG (checked by its content): give a PNG where white or opaque marks what changes.', shown),
      ['png'],
    );
  }
  // Row by row into one byte a pixel: the mask's RGBA (64 MB for 4096×4096) is never whole in memory.
  let rows: ReturnType<typeof maskFromRows> | undefined;
  try {
    await decodePngRows(
      bytes,
      (width, height) => {
        if (width !== image.width || height !== image.height) {
          throw new ValidationError(
            MASK_FIELD,
            l10n.t('"mask" ({0}) is {1}×{2}; it must be the same size as the image, {3}×{4}.', shown, width, height, image.width, image.height),
          );
        }
        rows = maskFromRows(width, height);
      },
      (y, rgba) => rows!.row(y, rgba),
    );
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    const why = error instanceof ImageRefused ? error.message : l10n.t('it cannot be decoded');
    throw new ValidationError(MASK_FIELD, l10n.t('"mask" ({0}) cannot be used: {1}', shown, why));
  }
  const mask = rows!.mask();
  if (!mask.box) {
    throw new ValidationError(
      MASK_FIELD,
      l10n.t('"mask" ({0}) marks nothing: paint the region to change white (or opaque) and the rest black (or transparent).', shown),
    );
  }
  return mask;
}
