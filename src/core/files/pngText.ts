// PNG text chunks for provenance: an iTXt chunk (UTF-8 text, uncompressed) added before IEND, and
// read back by walking chunk headers. Pure, no vscode import. Files may be tens of MiB: nothing here
// reads image data. The chunk is added while an image is written (StagingSink), before its IEND.
import { promises as fs } from 'node:fs';
import { crc32 } from 'node:zlib';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The IEND chunk is always these 12 bytes: length 0, type, CRC of the type. */
export const IEND_CHUNK = Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
/** Text chunks larger than this are not read (nor written): provenance is a few KiB at most. */
export const MAX_TEXT_CHUNK_BYTES = 1024 * 1024;
/** The PNG limit on a chunk's length (2^31 - 1). */
const MAX_CHUNK_LENGTH = 0x7fffffff;

/** Why bytes that do not start with the PNG signature cannot take (or hold) a text chunk. */
export const NOT_A_PNG = 'Not a PNG file.';

export class PngFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PngFormatError';
  }
}

/** Keywords are 1-79 Latin-1 printable characters, no leading, trailing or double spaces. */
function checkKeyword(keyword: string): void {
  if (!/^[\x20-\x7e\xa1-\xff]{1,79}$/.test(keyword) || /^ | $| {2}/.test(keyword)) {
    throw new RangeError(`Invalid PNG text keyword "${keyword}".`);
  }
}

/** A complete iTXt chunk (length, type, data, CRC): keyword, no compression, no language tag, UTF-8 text. */
export function buildITXtChunk(keyword: string, text: string): Buffer {
  checkKeyword(keyword);
  const data = Buffer.concat([
    Buffer.from(keyword, 'latin1'),
    // null separator, compression flag 0, compression method 0, empty language tag + null, empty translated keyword + null
    Buffer.from([0, 0, 0, 0, 0]),
    Buffer.from(text, 'utf8'),
  ]);
  if (data.length > MAX_TEXT_CHUNK_BYTES) throw new RangeError(`PNG text of ${data.length} bytes is too large.`);
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write('iTXt', 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/** The text of a tEXt or uncompressed iTXt chunk's data when its keyword matches; undefined otherwise. */
export function parseTextChunkData(type: string, data: Buffer, keyword: string): string | undefined {
  const end = data.indexOf(0);
  if (end < 1 || data.subarray(0, end).toString('latin1') !== keyword) return undefined;
  if (type === 'tEXt') return data.subarray(end + 1).toString('latin1');
  if (type !== 'iTXt') return undefined;
  const compressed = data[end + 1];
  if (compressed !== 0) return undefined; // only uncompressed text is written and read here
  const languageEnd = data.indexOf(0, end + 3);
  if (languageEnd < 0) return undefined;
  const translatedEnd = data.indexOf(0, languageEnd + 1);
  if (translatedEnd < 0) return undefined;
  return data.subarray(translatedEnd + 1).toString('utf8');
}

/** Adds the chunk to an in-memory PNG (for small images and tests). */
export function addPngTextChunkToBuffer(png: Buffer, keyword: string, text: string): Buffer {
  checkPngEnds(png, png.subarray(Math.max(0, png.length - 12)), png.length);
  return Buffer.concat([png.subarray(0, png.length - 12), buildITXtChunk(keyword, text), IEND_CHUNK]);
}

/**
 * Throws PngFormatError unless `head` starts with the PNG signature and `tail` (the last 12 of
 * `size` bytes) is IEND: what adding a chunk before IEND needs (StagingSink does, as it writes).
 */
export function checkPngEnds(head: Buffer, tail: Buffer, size: number): void {
  if (size < PNG_SIGNATURE.length + 12 + 12 || !head.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) throw new PngFormatError(NOT_A_PNG);
  if (!tail.equals(IEND_CHUNK)) throw new PngFormatError('The PNG file does not end with an IEND chunk (damaged, or data after it).');
}

/**
 * The text of the first tEXt/iTXt chunk with this keyword, or undefined when there is none.
 * Walks the chunk headers (8 bytes each) and reads only text chunks' data.
 */
export async function readPngTextChunk(file: string, keyword: string): Promise<string | undefined> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const header = Buffer.alloc(8);
    if (size < 8) throw new PngFormatError(NOT_A_PNG);
    await readExactly(handle, header, 0);
    if (!header.equals(PNG_SIGNATURE)) throw new PngFormatError(NOT_A_PNG);
    let offset = 8;
    while (offset + 12 <= size) {
      await readExactly(handle, header, offset);
      const length = header.readUInt32BE(0);
      const type = header.toString('latin1', 4, 8);
      if (length > MAX_CHUNK_LENGTH || offset + 12 + length > size) throw new PngFormatError(`The PNG chunk "${type}" runs past the end of the file.`);
      if (type === 'IEND') return undefined;
      if ((type === 'iTXt' || type === 'tEXt') && length <= MAX_TEXT_CHUNK_BYTES) {
        const data = Buffer.alloc(length + 4);
        await readExactly(handle, data, offset + 8);
        const crc = data.readUInt32BE(length);
        const text = parseTextChunkData(type, data.subarray(0, length), keyword);
        if (text !== undefined && crc32(Buffer.concat([header.subarray(4, 8), data.subarray(0, length)])) === crc) return text;
      }
      offset += 12 + length;
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

async function readExactly(handle: fs.FileHandle, buffer: Buffer, position: number): Promise<void> {
  let read = 0;
  while (read < buffer.length) {
    const { bytesRead } = await handle.read(buffer, read, buffer.length - read, position + read);
    if (bytesRead === 0) throw new PngFormatError('The PNG file ended early.');
    read += bytesRead;
  }
}
