import type { RgbaImage } from './pixels';
import type { Box } from './regionMask';

export interface CropBox extends Box {
  /** e.g. "3:2": one of the model's supported ratios, or the box's own reduced ratio when none are given. */
  ratio: string;
}

/** Bounding box + margin + feather, clamped to the image, widened to the nearest of `ratios`. */
export function cropBoxFor(
  box: Box,
  image: { width: number; height: number },
  ratios: readonly string[],
  options?: { margin?: number; feather?: number },
): CropBox {
  void box;
  void image;
  void ratios;
  void options;
  throw new Error('not yet');
}

/** "region 412×300 of 2048×1536, sent as 3:2" */
export function describeCrop(box: Box, crop: CropBox, image: { width: number; height: number }): string {
  void box;
  void crop;
  void image;
  throw new Error('not yet');
}

export function cropRgba(image: RgbaImage, box: Box): RgbaImage {
  void image;
  void box;
  throw new Error('not yet');
}
