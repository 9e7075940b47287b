// Decoded pixels shared by the region-edit steps (codecs, resize, mask, crop, composite).

/** 8-bit RGBA, row-major, 4 bytes per pixel: the one pixel form every step takes and gives. */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A clear, user-facing reason why an image cannot be region-edited (what it is and what is allowed). */
export class ImageRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageRefused';
  }
}
