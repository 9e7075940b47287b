// Pixel dimensions and alpha of an image from its header, without decoding it. Pure: no vscode import.
// Used to keep an edit's shape (aspect ratio of the source) and to check that a "transparent"
// result really has an alpha channel.
import { open } from 'node:fs/promises';
import { sniffImage } from './imageSniff';

export interface ImageHeader {
  mediaType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
  width: number;
  height: number;
  /** Whether the format's header declares an alpha channel (JPEG never; GIF: not judged, false). */
  alpha: boolean;
}

/** Reads `length` bytes at `position` (fewer at the end of the data). */
export type ByteReader = (position: number, length: number) => Promise<Uint8Array>;

const ascii = (bytes: Uint8Array, at: number, length: number) => String.fromCharCode(...bytes.subarray(at, at + length));
// Callers check the length first; a byte past the end reads as 0 (as `undefined` did in the bit operations).
const byte = (b: Uint8Array, at: number) => b[at] ?? 0;
const u16be = (b: Uint8Array, at: number) => (byte(b, at) << 8) | byte(b, at + 1);
const u32be = (b: Uint8Array, at: number) => ((byte(b, at) << 24) >>> 0) + ((byte(b, at + 1) << 16) | (byte(b, at + 2) << 8) | byte(b, at + 3));
const u16le = (b: Uint8Array, at: number) => byte(b, at) | (byte(b, at + 1) << 8);
const u24le = (b: Uint8Array, at: number) => byte(b, at) | (byte(b, at + 1) << 8) | (byte(b, at + 2) << 16);
const u32le = (b: Uint8Array, at: number) => u24le(b, at) + byte(b, at + 3) * 0x1000000;

/** Walks only as far as the header needs: PNG chunks up to IDAT, JPEG segments up to SOF. */
export async function readImageHeader(read: ByteReader): Promise<ImageHeader | undefined> {
  const head = await read(0, 64);
  const kind = sniffImage(head);
  switch (kind?.mediaType) {
    case 'image/png':
      return pngHeader(head, read);
    case 'image/jpeg':
      return jpegHeader(read);
    case 'image/webp':
      return webpHeader(head);
    case 'image/gif':
      return head.length >= 10 ? { mediaType: 'image/gif', width: u16le(head, 6), height: u16le(head, 8), alpha: false } : undefined;
    default:
      return undefined;
  }
}

/** The header of bytes already in memory. */
export function imageHeaderOf(bytes: Uint8Array): Promise<ImageHeader | undefined> {
  return readImageHeader((position, length) => Promise.resolve(bytes.subarray(position, position + length)));
}

/** The header of a file; undefined when it is not a PNG, JPEG, WebP or GIF or the header is cut off. */
export async function readImageHeaderFile(path: string): Promise<ImageHeader | undefined> {
  const handle = await open(path, 'r');
  try {
    return await readImageHeader(async (position, length) => {
      const buffer = Buffer.alloc(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    });
  } finally {
    await handle.close();
  }
}

/** IHDR gives the size and colour type (4 grey+alpha, 6 RGBA); a tRNS chunk before IDAT also means alpha. */
async function pngHeader(head: Uint8Array, read: ByteReader): Promise<ImageHeader | undefined> {
  if (head.length < 26 || ascii(head, 12, 4) !== 'IHDR') return undefined;
  const width = u32be(head, 16);
  const height = u32be(head, 20);
  const colourType = head[25];
  let alpha = colourType === 4 || colourType === 6;
  // Chunks after IHDR, until the image data starts: tRNS may only come before IDAT.
  let at = 8 + 8 + u32be(head, 8) + 4;
  for (let guard = 0; !alpha && guard < 1000; guard++) {
    const chunk = await read(at, 8);
    if (chunk.length < 8) break;
    const type = ascii(chunk, 4, 4);
    if (type === 'tRNS') alpha = true;
    if (type === 'IDAT' || type === 'IEND') break;
    at += 12 + u32be(chunk, 0);
  }
  return { mediaType: 'image/png', width, height, alpha };
}

const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/** Segments from SOI until a start-of-frame marker, which holds height then width. */
async function jpegHeader(read: ByteReader): Promise<ImageHeader | undefined> {
  let at = 2;
  for (let guard = 0; guard < 10_000; guard++) {
    const segment = await read(at, 9);
    if (segment.length < 4 || segment[0] !== 0xff) return undefined;
    const marker = byte(segment, 1);
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or scan data before any frame
    if (SOF_MARKERS.has(marker)) {
      if (segment.length < 9) return undefined;
      return { mediaType: 'image/jpeg', width: u16be(segment, 7), height: u16be(segment, 5), alpha: false };
    }
    at += 2 + u16be(segment, 2);
  }
  return undefined;
}

/** VP8X carries the canvas size and an alpha flag; VP8L a size and an alpha hint; plain VP8 has no alpha. */
function webpHeader(head: Uint8Array): ImageHeader | undefined {
  if (head.length < 30) return undefined;
  const chunk = ascii(head, 12, 4);
  if (chunk === 'VP8X') {
    return { mediaType: 'image/webp', width: u24le(head, 24) + 1, height: u24le(head, 27) + 1, alpha: (byte(head, 20) & 0x10) !== 0 };
  }
  if (chunk === 'VP8L') {
    if (head[20] !== 0x2f) return undefined;
    const bits = u32le(head, 21);
    return { mediaType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, alpha: ((bits >>> 28) & 1) === 1 };
  }
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height.
    if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return undefined;
    return { mediaType: 'image/webp', width: u16le(head, 26) & 0x3fff, height: u16le(head, 28) & 0x3fff, alpha: false };
  }
  return undefined;
}

/** Files whose header says "no alpha" (unreadable or unknown formats such as SVG are not judged). */
export async function filesWithoutAlpha(files: readonly string[]): Promise<string[]> {
  const opaque: string[] = [];
  for (const file of files) {
    const header = await readImageHeaderFile(file).catch(() => undefined);
    if (header && !header.alpha) opaque.push(file);
  }
  return opaque;
}
