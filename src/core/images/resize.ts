import type { RgbaImage } from './pixels';

/** Resamples to exactly width×height (triangle filter, widened when shrinking), alpha-premultiplied. */
export function resizeRgba(image: RgbaImage, width: number, height: number): RgbaImage {
  void image;
  void width;
  void height;
  throw new Error('not yet');
}
