// Request bodies that carry reference images, streamed from disk. Pure: no vscode import.
// Up to 10 files of 25 MB each: they are never read whole into memory, and the exact
// Content-Length is known in advance from the file sizes.

import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../gateway/errors';
import { MEDIA_TYPES } from '../gateway/types';

export interface ReferenceFile {
  path: string;
  /** image/png, image/jpeg or image/webp. */
  mediaType: string;
  /** Size in bytes, as measured when the file was chosen. */
  size: number;
}

/** The file changed on disk between measuring and sending: the announced length would be wrong. */
export class ReferenceFileChangedError extends Error {
  constructor(
    readonly path: string,
    readonly expectedSize: number,
    message = `The file ${path} changed while it was being sent (expected ${expectedSize} bytes).`,
  ) {
    super(message);
    this.name = 'ReferenceFileChangedError';
  }
}

// Read sizes, multiples of 3 so base64 chunks rarely need a carry. With 96 KiB reads a 100 MB upload
// spent about twice the CPU of writing the same bytes raw (per-chunk stream and GC overhead; npm run bench).
// Both are read 1.5 MiB at a time; base64 is encoded in slices (BASE64_SLICE_BYTES) so that no
// string is a large object (one string per 1.5 MiB chunk grew RSS by ~75 MB over a 4 × 25 MB body).
const RAW_CHUNK_BYTES = 3 * 512 * 1024;
const BASE64_CHUNK_BYTES = 3 * 512 * 1024;
/** Encoded this much at a time (a multiple of 3): a 64 KiB string, well below V8's large-object size. */
const BASE64_SLICE_BYTES = 3 * 16 * 1024;

/**
 * Chunks of at least this many bytes are handed over in a buffer that is reused for the next one.
 * undici writes each chunk with socket.write() and, when that returns false, waits for 'drain'
 * before it asks for the next; write() returns false for any chunk at or above the socket's
 * highWaterMark (16 KiB in Node 20, 64 KiB in Node 22), and 'drain' comes only once every byte
 * was handed to the kernel. So a reused chunk is never overwritten while it is being sent.
 * Smaller chunks (a file's tail) are copies. With a fresh 1.5 MiB buffer per chunk the first
 * 100 MB upload of a process took ~210 ms against ~125 ms (page faults of new memory);
 * test/unit/requestBodies.test.ts checks the bytes through undici against a slow reader.
 */
const REUSE_MIN_BYTES = 256 * 1024;

type Piece = Uint8Array | { file: ReferenceFile; base64: boolean };

const text = (s: string): Uint8Array => Buffer.from(s, 'utf8');

function checkFiles(files: readonly ReferenceFile[], field: string): void {
  for (const f of files) {
    if (!(MEDIA_TYPES as readonly string[]).includes(f.mediaType)) {
      throw new ValidationError(field, l10n.t('Unsupported reference type {0} ({1}).', f.mediaType, basename(f.path)), MEDIA_TYPES);
    }
    if (!Number.isSafeInteger(f.size) || f.size < 0) throw new RangeError(`Invalid size ${f.size} of ${f.path}`);
  }
}

/** A chunk of a reused buffer: itself when it is large (see REUSE_MIN_BYTES), otherwise a copy. */
function handOver(buffer: Buffer, length: number): Buffer {
  return length >= REUSE_MIN_BYTES ? buffer.subarray(0, length) : Buffer.from(buffer.subarray(0, length));
}

/**
 * Raw bytes of a file, checked against its announced size; opened only when first pulled. Read
 * into two buffers in turn: while the consumer sends one chunk, the next is read into the other.
 * A chunk is only valid until the next is asked for (see REUSE_MIN_BYTES).
 */
async function* fileBytes(file: ReferenceFile, buffers: ReadBuffers): AsyncGenerator<Buffer> {
  const handle = await open(file.path, 'r');
  let ahead: Promise<number> | undefined;
  try {
    // Checked before the first byte so a changed file fails early rather than mid-body.
    if ((await handle.stat()).size !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
    const readInto = (buffer: Buffer, position: number) => handle.read(buffer, 0, buffer.length, position).then((r) => r.bytesRead);
    let total = 0;
    let turn = 0;
    ahead = readInto(buffers[0], 0);
    for (;;) {
      const bytesRead = await ahead;
      ahead = undefined;
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > file.size) throw new ReferenceFileChangedError(file.path, file.size);
      const current = buffers[turn]!;
      turn ^= 1;
      // The other buffer is free: the consumer asked for this chunk, so it is done with the one before.
      ahead = readInto(buffers[turn]!, total);
      ahead.catch(() => undefined); // awaited on the next turn, or in finally
      yield handOver(current, bytesRead);
    }
    // Bytes appended after the last read are seen by the size check.
    if (total !== file.size || (await handle.stat()).size !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
  } finally {
    // Also runs when the consumer stops early (return()): no read in flight, and the descriptor released.
    await ahead?.catch(() => undefined);
    await handle.close();
  }
}

/**
 * Base64 of `data[0, end)` written into `out` from its start; returns the bytes written. In slices
 * whose strings stay in V8's young generation: a string of a whole 1.5 MiB chunk is a large object,
 * mapped and unmapped each time (35k page faults per 100 MB; npm run bench).
 */
export function base64Into(out: Buffer, data: Buffer, end: number): number {
  let written = 0;
  for (let at = 0; at < end; at += BASE64_SLICE_BYTES)
    written += out.write(data.toString('base64', at, Math.min(at + BASE64_SLICE_BYTES, end)), written, 'latin1');
  return written;
}

/**
 * Base64 of a byte stream, encoded in runs of whole 3-byte groups; a 1–2 byte carry joins the next
 * chunk. Keeps no chunk it was given. The next chunk is encoded while the consumer sends this one
 * (the main thread is idle then, waiting for the socket), into two output buffers in turn: pass the
 * same `outputs` to the encoders of one body's files, one after another, so that they share them
 * (they are grown as needed).
 */
export async function* base64Chunks(source: AsyncIterable<Uint8Array>, outputs: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)]): AsyncGenerator<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  let turn = 0;
  let carry: Buffer = Buffer.alloc(0);
  let finished = false;
  /** The next encoded chunk (empty when a source chunk held less than 3 bytes), or undefined at the end. */
  const encodeNext = async (): Promise<Buffer | undefined> => {
    if (finished) return undefined;
    const step = await iterator.next();
    if (step.done) {
      finished = true;
      return carry.length > 0 ? Buffer.from(carry.toString('base64'), 'latin1') : undefined;
    }
    const chunk = step.value;
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const data = carry.length > 0 ? Buffer.concat([carry, view]) : view;
    const whole = data.length - (data.length % 3);
    carry = Buffer.from(data.subarray(whole)); // a copy, so the big chunk is not retained
    if (whole === 0) return Buffer.alloc(0);
    const length = (whole / 3) * 4;
    if (outputs[turn]!.length < length) outputs[turn] = Buffer.allocUnsafe(length);
    const out = outputs[turn]!;
    turn ^= 1;
    return handOver(out, base64Into(out, data, whole));
  };
  let ahead: Promise<Buffer | undefined> | undefined = encodeNext();
  try {
    for (;;) {
      const chunk = await ahead;
      ahead = undefined;
      if (chunk === undefined) break;
      // The output buffer of the chunk before is free now: encode the next one into it meanwhile.
      ahead = encodeNext();
      ahead.catch(() => undefined); // awaited on the next turn, or in finally
      if (chunk.length > 0) yield chunk;
    }
  } finally {
    await ahead?.catch(() => undefined);
    if (!finished) await iterator.return?.();
  }
}

/** Two read buffers in turn (see fileBytes), shared by every file of one body. */
type ReadBuffers = readonly [Buffer, Buffer];

function readBuffers(pieces: readonly Piece[], chunkBytes: number): ReadBuffers {
  const largest = pieces.reduce((max, p) => (p instanceof Uint8Array ? max : Math.max(max, p.file.size)), 1);
  const size = Math.min(chunkBytes, largest);
  return [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
}

function streamPieces(pieces: readonly Piece[]): AsyncIterable<Uint8Array> {
  // A fresh generator per iteration: the body can be read again and files reopen lazily.
  return {
    async *[Symbol.asyncIterator]() {
      // Allocated once per body, not per file: fresh memory is paid for in page faults as it is
      // first written (with a pair per file, 28 MiB of new pages per 4-file JSON upload).
      let buffers: ReadBuffers | undefined;
      const outputs = [Buffer.alloc(0), Buffer.alloc(0)];
      for (const piece of pieces) {
        if (piece instanceof Uint8Array) {
          yield piece;
          continue;
        }
        buffers ??= readBuffers(pieces, piece.base64 ? BASE64_CHUNK_BYTES : RAW_CHUNK_BYTES);
        yield* piece.base64 ? base64Chunks(fileBytes(piece.file, buffers), outputs) : fileBytes(piece.file, buffers);
      }
    },
  };
}

function lengthOf(pieces: readonly Piece[]): number {
  return pieces.reduce((sum, p) => {
    if (p instanceof Uint8Array) return sum + p.byteLength;
    return sum + (p.base64 ? 4 * Math.ceil(p.file.size / 3) : p.file.size);
  }, 0);
}

/**
 * JSON body of POST /v1/images/generations: `fields` (already flattened), then
 * "input_references" with one data: URL per file. Without references the key is omitted.
 */
export function jsonBodyWithReferences(
  fields: Record<string, unknown>,
  references: ReferenceFile[],
): { body: AsyncIterable<Uint8Array>; contentLength: number } {
  if (Object.prototype.hasOwnProperty.call(fields, 'input_references')) {
    throw new TypeError('fields must not contain input_references');
  }
  checkFiles(references, 'input_references');
  const head = JSON.stringify(fields);
  if (typeof head !== 'string' || !head.startsWith('{')) throw new TypeError('fields must be a JSON object');
  const pieces: Piece[] = [];
  if (references.length === 0) {
    pieces.push(text(head));
  } else {
    pieces.push(text(head.slice(0, -1) + (head === '{}' ? '' : ',') + '"input_references":['));
    references.forEach((file, i) => {
      // mediaType is one of MEDIA_TYPES, so it needs no JSON escaping.
      pieces.push(text(`${i > 0 ? ',' : ''}{"type":"image_url","image_url":{"url":"data:${file.mediaType};base64,`));
      pieces.push({ file, base64: true });
      pieces.push(text('"}}'));
    });
    pieces.push(text(']}'));
  }
  return { body: streamPieces(pieces), contentLength: lengthOf(pieces) };
}

/** Escapes a name for a Content-Disposition quoted string the way browsers do (HTML form encoding). */
function quoted(value: string): string {
  return '"' + value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A') + '"';
}

/**
 * multipart/form-data body of POST /v1/images/edits: text fields, then the files as
 * `image` (one file) or `image[]` (several).
 */
export function multipartEditBody(
  fields: Record<string, string | number | boolean>,
  files: ReferenceFile[],
  boundary: string = '----GatewayImages' + randomBytes(16).toString('hex'),
): { body: AsyncIterable<Uint8Array>; contentType: string; contentLength: number } {
  // A subset of RFC 2046 boundary characters that needs no quoting in Content-Type.
  if (!/^[0-9A-Za-z'+_\-.]{1,70}$/.test(boundary)) {
    throw new TypeError('Invalid multipart boundary');
  }
  if (files.length === 0) throw new ValidationError('image', l10n.t('At least one image file is required.'));
  checkFiles(files, 'image');
  const pieces: Piece[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    pieces.push(text(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${String(value)}\r\n`));
  }
  const field = files.length === 1 ? 'image' : 'image[]';
  for (const file of files) {
    pieces.push(
      text(
        `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(field)}; filename=${quoted(basename(file.path))}\r\n` +
          `Content-Type: ${file.mediaType}\r\n\r\n`,
      ),
    );
    pieces.push({ file, base64: false });
    pieces.push(text('\r\n'));
  }
  pieces.push(text(`--${boundary}--\r\n`));
  return {
    body: streamPieces(pieces),
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: lengthOf(pieces),
  };
}
