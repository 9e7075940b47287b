// Whether a staged image file holds a whole image: it ends where its format says it ends (PNG with
// its IEND chunk, JPEG with its end marker, WebP at its RIFF length, GIF with its trailer, SVG with </svg>). What a
// crash leaves behind is judged by this, not by its name alone. Pure: no vscode import.
import { promises as fs } from 'node:fs';
import { SNIFF_HEAD_BYTES, sniffImage } from '../images/imageSniff';
import { IEND_CHUNK } from './pngText';

const TAIL_BYTES = 16;

export async function isWholeImage(file: string): Promise<boolean> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(file, 'r');
    const { size } = await handle.stat();
    if (size < TAIL_BYTES) return false;
    const head = Buffer.alloc(Math.min(SNIFF_HEAD_BYTES, size));
    await handle.read(head, 0, head.length, 0);
    const tail = Buffer.alloc(TAIL_BYTES);
    await handle.read(tail, 0, TAIL_BYTES, size - TAIL_BYTES);
    switch (sniffImage(head)?.extension) {
      case 'png':
        return tail.subarray(TAIL_BYTES - IEND_CHUNK.length).equals(IEND_CHUNK);
      case 'jpg':
        return tail[TAIL_BYTES - 2] === 0xff && tail[TAIL_BYTES - 1] === 0xd9;
      case 'webp':
        return head.readUInt32LE(4) + 8 === size;
      case 'gif':
        return tail[TAIL_BYTES - 1] === 0x3b;
      case 'svg':
        return tail.toString('latin1').trimEnd().endsWith('</svg>');
      default:
        return false;
    }
  } catch {
    return false;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
