// Fixtures of the region-edit wiring tests: RGBA PNG bytes made by the emulator's own encoder (not
// the code under test), masks that mark a box, and an image whose every pixel differs.
import { encodePng } from '../../../tools/emulator/png';

export interface Pixels {
  width: number;
  height: number;
  data: Uint8Array;
}

/** 8-bit RGBA PNG of `image` (filter 0 on every row). */
export function rgbaPng(image: Pixels): Buffer {
  const stride = image.width * 4;
  const rows = Buffer.alloc(image.height * (stride + 1));
  for (let y = 0; y < image.height; y++) rows.set(image.data.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  return encodePng(image.width, image.height, 4, rows);
}

/** Opaque, each pixel its own colour (a pasted or shifted pixel shows). */
export function gradient(width: number, height: number): Pixels {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.set([(x * 7 + y) & 0xff, (y * 5 + x * 3) & 0xff, (x * y) & 0xff, 255], (y * width + x) * 4);
  return { width, height, data };
}

/**
 * A mask marking `box`: 'black-white' is opaque black with a white box; 'alpha' is transparent with
 * an opaque white box; `box` undefined marks nothing.
 */
export function boxMask(
  width: number,
  height: number,
  box: { x: number; y: number; width: number; height: number } | undefined,
  mode: 'black-white' | 'alpha' = 'black-white',
): Pixels {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const inside = !!box && x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height;
      const pixel = inside ? [255, 255, 255, 255] : mode === 'alpha' ? [0, 0, 0, 0] : [0, 0, 0, 255];
      data.set(pixel, (y * width + x) * 4);
    }
  return { width, height, data };
}

/** Pixels of `image` at (x, y). */
export function pixelAt(image: Pixels, x: number, y: number): number[] {
  const i = (y * image.width + x) * 4;
  return [...image.data.subarray(i, i + 4)];
}
