// JPEG EXIF orientation, applied at decoding: a phone photo stored sideways is shown upright by
// viewers, masks are drawn on what is shown, and the saved PNG result carries no EXIF — so the pixels
// must be turned as viewers turn them, or the result would come out sideways.
import type { RgbaImage } from './pixels';

/** The EXIF orientation (1–8) of a JPEG, or 1 when it has none or it cannot be read. */
export function jpegOrientation(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Segments after SOI until the image data (SOS) begins: the APP1 "Exif" one holds a TIFF header.
  for (let at = 2; at + 4 <= bytes.length && bytes[at] === 0xff;) {
    const marker = bytes[at + 1]!;
    if (marker === 0xda || marker === 0xd9) break;
    const length = view.getUint16(at + 2);
    if (marker === 0xe1 && length >= 16 && String.fromCharCode(...bytes.subarray(at + 4, at + 10)) === 'Exif\0\0') {
      return tiffOrientation(view, at + 10, Math.min(bytes.length, at + 2 + length)) ?? 1;
    }
    at += 2 + length;
  }
  return 1;
}

function tiffOrientation(view: DataView, tiff: number, end: number): number | undefined {
  if (tiff + 8 > end) return undefined;
  const order = view.getUint16(tiff);
  if (order !== 0x4949 && order !== 0x4d4d) return undefined;
  const little = order === 0x4949;
  const ifd = tiff + view.getUint32(tiff + 4, little);
  if (ifd + 2 > end) return undefined;
  const count = view.getUint16(ifd, little);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) return undefined;
    if (view.getUint16(entry, little) !== 0x0112) continue;
    const value = view.getUint16(entry + 8, little);
    return value >= 1 && value <= 8 ? value : undefined;
  }
  return undefined;
}

/** The pixels as a viewer shows them for EXIF `orientation` (the same image for 1). */
export function oriented(image: RgbaImage, orientation: number): RgbaImage {
  if (orientation < 2 || orientation > 8) return image;
  const { width: w, height: h, data } = image;
  const swap = orientation >= 5;
  const width = swap ? h : w;
  const height = swap ? w : h;
  const out = new Uint8Array(data.length);
  // One 32-bit word per pixel: a typed view needs 4-byte alignment, else a copy.
  const pixels = data.byteOffset % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, w * h) : new Uint32Array(data.slice().buffer);
  const target = new Uint32Array(out.buffer);
  // For each shown pixel (x, y): the stored pixel it comes from.
  const source: (x: number, y: number) => number = [
    (x: number, y: number) => y * w + x,
    (x: number, y: number) => y * w + (w - 1 - x),
    (x: number, y: number) => (h - 1 - y) * w + (w - 1 - x),
    (x: number, y: number) => (h - 1 - y) * w + x,
    (x: number, y: number) => x * w + y,
    (x: number, y: number) => (h - 1 - x) * w + y,
    (x: number, y: number) => (h - 1 - x) * w + (w - 1 - y),
    (x: number, y: number) => x * w + (w - 1 - y),
  ][orientation - 1]!;
  for (let y = 0, i = 0; y < height; y++) for (let x = 0; x < width; x++, i++) target[i] = pixels[source(x, y)]!;
  return { width, height, data: out };
}
