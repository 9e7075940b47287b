// Decoded pixels shared by the region-edit steps (codecs, resize, mask, crop, composite).

/** 8-bit RGBA, row-major, 4 bytes per pixel: the one pixel form every step takes and gives. */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Why an image was refused, so callers can branch without reading the (localised) message. */
export type RefusalReason = 'svg' | 'animated' | 'tooLarge' | 'unsupported' | 'corrupt';

/** A clear, user-facing reason why an image cannot be region-edited (what it is and what is allowed). */
export class ImageRefused extends Error {
  constructor(
    message: string,
    readonly reason: RefusalReason = 'unsupported',
    /** What exactly was wrong, in English, for the log. */
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'ImageRefused';
  }
}

/** 4096×4096 × 2 (33.5 MP): above this the RGBA copies alone would pass half a gigabyte. */
export const MAX_REGION_PIXELS = 4096 * 4096 * 2;
