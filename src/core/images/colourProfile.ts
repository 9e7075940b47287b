// The ICC colour profile of an original, so the region edit's PNG can carry it: without it, a wide-
// gamut photo (Display P3, Adobe RGB) would look duller than its original in colour-managed viewers
// even where every byte is the original's.
import { inflateSync } from 'node:zlib';

/** Larger profiles are not carried (real ones are a few kB; a few embed big lookup tables). */
const MAX_PROFILE_BYTES = 4 * 1024 * 1024;

const fourcc = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));

/** The ICC profile embedded in a PNG (iCCP), JPEG (APP2 ICC_PROFILE) or WebP (ICCP), or undefined. */
export function iccProfileOf(bytes: Uint8Array, mediaType: 'image/png' | 'image/jpeg' | 'image/webp'): Uint8Array | undefined {
  try {
    const profile = mediaType === 'image/png' ? fromPng(bytes) : mediaType === 'image/jpeg' ? fromJpeg(bytes) : fromWebp(bytes);
    return profile && profile.length >= 128 && profile.length <= MAX_PROFILE_BYTES ? profile : undefined;
  } catch {
    return undefined; // a damaged profile is dropped, never a reason to refuse the image
  }
}

function fromPng(bytes: Uint8Array): Uint8Array | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 8; at + 12 <= bytes.length;) {
    const length = view.getUint32(at);
    const type = fourcc(bytes, at + 4);
    if (type === 'IDAT' || type === 'IEND') return undefined;
    if (type === 'iCCP') {
      const data = bytes.subarray(at + 8, at + 8 + length);
      const nul = data.indexOf(0);
      if (nul < 1 || data[nul + 1] !== 0) return undefined;
      return new Uint8Array(inflateSync(data.subarray(nul + 2), { maxOutputLength: MAX_PROFILE_BYTES }));
    }
    at += 12 + length;
  }
  return undefined;
}

/** APP2 segments "ICC_PROFILE\0", sequence number, count, then a part of the profile. */
function fromJpeg(bytes: Uint8Array): Uint8Array | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts = new Map<number, Uint8Array>();
  let count = 0;
  for (let at = 2; at + 4 <= bytes.length && bytes[at] === 0xff;) {
    const marker = bytes[at + 1]!;
    if (marker === 0xda || marker === 0xd9) break;
    const length = view.getUint16(at + 2);
    if (marker === 0xe2 && length > 16 && String.fromCharCode(...bytes.subarray(at + 4, at + 16)) === 'ICC_PROFILE\0') {
      parts.set(bytes[at + 16]!, bytes.subarray(at + 18, at + 2 + length));
      count = bytes[at + 17]!;
    }
    at += 2 + length;
  }
  if (!count || parts.size !== count) return undefined;
  const ordered: Uint8Array[] = [];
  for (let i = 1; i <= count; i++) {
    const part = parts.get(i);
    if (!part) return undefined;
    ordered.push(part);
  }
  return new Uint8Array(Buffer.concat(ordered));
}

function fromWebp(bytes: Uint8Array): Uint8Array | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 12; at + 8 <= bytes.length;) {
    const type = fourcc(bytes, at);
    const length = view.getUint32(at + 4, true);
    if (type === 'ICCP') return bytes.slice(at + 8, at + 8 + length);
    if (type === 'VP8 ' || type === 'VP8L') return undefined;
    at += 8 + length + (length & 1);
  }
  return undefined;
}
