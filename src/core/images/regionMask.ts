import type { RgbaImage } from './pixels';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface RegionMask {
  width: number;
  height: number;
  /** 0..255 per pixel: 255 = changes, 0 = stays exactly as it was. */
  alpha: Uint8Array;
  /** Bounding box of the non-zero pixels; undefined when the mask is empty. */
  box: Box | undefined;
}

/** A pixel marks the region when it is opaque (alpha ≥ 128) AND white-ish (luma ≥ 128). */
export function maskFromImage(mask: RgbaImage): RegionMask {
  void mask;
  throw new Error('not yet');
}

/** The mask with a soft edge `feather` px wide outside the region (0 = hard edge). */
export function featherMask(mask: RegionMask, feather: number): RegionMask {
  void mask;
  void feather;
  throw new Error('not yet');
}
