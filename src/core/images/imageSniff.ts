// Image type from the first bytes of a file. Pure: no vscode import.
// Used to name saved images correctly and to check references before upload,
// because file extensions and the gateway's optional media_type cannot be trusted.

import { open } from 'node:fs/promises';
import { MEDIA_TYPES } from '../gateway/types';

export type ImageKind = {
  mediaType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif' | 'image/svg+xml';
  extension: 'png' | 'jpg' | 'webp' | 'gif' | 'svg';
};

/** Media types the gateway accepts as references (input_references, image / image[]). */
export const EDITABLE_MEDIA_TYPES: readonly string[] = MEDIA_TYPES;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];

function startsWith(head: Uint8Array, bytes: readonly number[], at = 0): boolean {
  if (head.length < at + bytes.length) return false;
  return bytes.every((b, i) => head[at + i] === b);
}

function ascii(text: string): number[] {
  return Array.from(text, (c) => c.charCodeAt(0));
}

export function sniffImage(head: Uint8Array): ImageKind | undefined {
  if (startsWith(head, PNG)) return { mediaType: 'image/png', extension: 'png' };
  if (startsWith(head, JPEG)) return { mediaType: 'image/jpeg', extension: 'jpg' };
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) {
    return { mediaType: 'image/webp', extension: 'webp' };
  }
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) {
    return { mediaType: 'image/gif', extension: 'gif' };
  }
  if (looksLikeSvg(head)) return { mediaType: 'image/svg+xml', extension: 'svg' };
  return undefined;
}

/**
 * How many leading bytes sniffing needs. Binary formats need 12; an SVG may open with a BOM, an XML
 * declaration, processing instructions, comments (Inkscape writes one) and a DOCTYPE before <svg.
 */
export const SNIFF_HEAD_BYTES = 2048;

/**
 * SVG is text: after an optional BOM, whitespace, XML declaration and other processing
 * instructions, comments and a DOCTYPE, the first element must be <svg. Anything cut off by the head
 * is "not SVG".
 */
function looksLikeSvg(head: Uint8Array): boolean {
  let text = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1');
  if (text.startsWith('\xef\xbb\xbf')) text = text.slice(3);
  let rest = text.trimStart();
  for (;;) {
    if (/^<svg[\s/>]/.test(rest)) return true;
    if (/^<!DOCTYPE\s+svg[\s>]/i.test(rest)) return true;
    const close = rest.startsWith('<?') ? '?>' : rest.startsWith('<!--') ? '-->' : undefined;
    const at = close === undefined ? -1 : rest.indexOf(close, 2);
    if (close === undefined || at < 0) return false;
    rest = rest.slice(at + close.length).trimStart();
  }
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/jpg': 'jpg', // not registered, but seen in the wild
  'image/pjpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/svg+xml': 'svg',
};

/** File extension (without dot) for a media type such as `Image/PNG; charset=x`; undefined when unknown. */
export function extensionForMediaType(mediaType: string | undefined): string | undefined {
  if (typeof mediaType !== 'string') return undefined;
  const essence = (mediaType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(EXTENSIONS, essence) ? EXTENSIONS[essence] : undefined;
}

/** Reads at most `bytes` bytes from the start of a file (fewer when the file is shorter). */
export async function readImageHead(path: string, bytes = SNIFF_HEAD_BYTES): Promise<Buffer> {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`Invalid head length: ${bytes}`);
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    let filled = 0;
    // read() may return fewer bytes than asked for before the end of the file.
    while (filled < bytes) {
      const { bytesRead } = await handle.read(buffer, filled, bytes - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
