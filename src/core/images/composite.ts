import type { RgbaImage } from './pixels';
import type { Box, RegionMask } from './regionMask';

/**
 * The original with the answer (already resized to crop.width×crop.height) pasted at the crop,
 * weighted by the feathered mask. Every pixel where the mask is 0 is byte-equal to the original's.
 */
export function compositeRegion(original: RgbaImage, answer: RgbaImage, crop: Box, mask: RegionMask): RgbaImage {
  void original;
  void answer;
  void crop;
  void mask;
  throw new Error('not yet');
}
