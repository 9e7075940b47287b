// RGBA → JPEG for a region edit saved as JPEG (issue 41): jpeg-js's encoder alone (pure JS, BSD-3; its
// decoder never bundled), baseline, 4:4:4 (it never subsamples), quality 90. The original's ICC profile
// goes in as APP2 segments and short texts as COM segments, right after the encoder's JFIF APP0.
// A JPEG has no alpha: callers refuse an original with transparency first (hasTransparency).
import encode from 'jpeg-js/lib/encoder';
import { JPEG_QUALITY } from './jpegQuality';
import type { RgbaImage } from './pixels';

export { JPEG_QUALITY };
/** A segment's length field counts itself: at most 65535, so 65533 bytes of data. */
const MAX_SEGMENT_DATA = 0xffff - 2;
const ICC_HEADER = Buffer.from('ICC_PROFILE\0', 'latin1');

export interface JpegOptions {
  quality?: number;
  /** The original's ICC profile: so viewers show the original's colours. */
  iccProfile?: Uint8Array;
  /** Texts (Latin-1) each written as a COM segment. */
  comments?: readonly string[];
}

export function encodeJpeg(image: RgbaImage, options: JpegOptions = {}): Buffer {
  const { width, height, data } = image;
  if (data.length !== width * height * 4) throw new RangeError(`RGBA of ${width}×${height} needs ${width * height * 4} bytes, got ${data.length}`);
  const jpeg = encode({ width, height, data }, options.quality ?? JPEG_QUALITY).data;
  const segments = [...(options.comments ?? []).map((text) => segment(0xfe, Buffer.from(text, 'latin1'))), ...iccSegments(options.iccProfile)];
  if (!segments.length) return jpeg;
  // SOI, then the encoder's APP0 (JFIF must come first), then ours.
  const afterApp0 = jpeg[2] === 0xff && jpeg[3] === 0xe0 ? 4 + jpeg.readUInt16BE(4) : 2;
  return Buffer.concat([jpeg.subarray(0, afterApp0), ...segments, jpeg.subarray(afterApp0)]);
}

/** Whether any pixel is not fully opaque (a JPEG would lose it). */
export function hasTransparency(image: RgbaImage): boolean {
  const { data } = image;
  for (let at = 3; at < data.length; at += 4) if (data[at] !== 255) return true;
  return false;
}

/** The profile split into APP2 "ICC_PROFILE" segments, each with its 1-based number and the count (ICC.1 B.4). */
function iccSegments(profile: Uint8Array | undefined): Buffer[] {
  if (!profile?.length) return [];
  const room = MAX_SEGMENT_DATA - ICC_HEADER.length - 2;
  const count = Math.ceil(profile.length / room);
  if (count > 255) return [];
  return Array.from({ length: count }, (_, i) =>
    segment(0xe2, Buffer.concat([ICC_HEADER, Buffer.of(i + 1, count), profile.subarray(i * room, (i + 1) * room)])),
  );
}

function segment(marker: number, data: Buffer): Buffer {
  if (data.length > MAX_SEGMENT_DATA) throw new RangeError(`a JPEG segment holds at most ${MAX_SEGMENT_DATA} bytes`);
  const head = Buffer.of(0xff, marker, 0, 0);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/** The COM segments before the image data (SOS) of a JPEG's first bytes, as Latin-1 texts. */
export function jpegComments(head: Uint8Array): string[] {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const comments: string[] = [];
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return comments;
  for (let at = 2; at + 4 <= bytes.length && bytes[at] === 0xff;) {
    const marker = bytes[at + 1]!;
    if (marker === 0xda || marker === 0xd9) break;
    const length = bytes.readUInt16BE(at + 2);
    if (marker === 0xfe && at + 2 + length <= bytes.length) comments.push(bytes.toString('latin1', at + 4, at + 2 + length));
    at += 2 + length;
  }
  return comments;
}
