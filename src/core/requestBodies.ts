// Request bodies that carry reference images, streamed from disk. Pure: no vscode import.
// Up to 10 files of 25 MB each: they are never read whole into memory, and the exact
// Content-Length is known in advance from the file sizes.

import { randomBytes } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import * as l10n from '@vscode/l10n';
import { ValidationError } from './errors';
import { MEDIA_TYPES } from './types';

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
// Raw (multipart) parts are read 1.5 MiB at a time. Base64 parts 384 KiB: above that each chunk's
// base64 string lands in V8's large-object space and RSS grew by ~75 MB over a 4 × 25 MB body.
const RAW_CHUNK_BYTES = 3 * 512 * 1024;
const BASE64_CHUNK_BYTES = 3 * 128 * 1024;

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

/** Raw bytes of a file, checked against its announced size; opened only when first pulled. */
async function* fileBytes(file: ReferenceFile, chunkBytes: number): AsyncGenerator<Buffer> {
  const handle = await open(file.path, 'r');
  let stream: ReadStream | undefined;
  try {
    // Checked before the first byte so a changed file fails early rather than mid-body.
    if ((await handle.stat()).size !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
    stream = handle.createReadStream({ highWaterMark: chunkBytes });
    let total = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > file.size) throw new ReferenceFileChangedError(file.path, file.size);
      yield chunk;
    }
    if (total !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
    // Bytes appended after the stream read ahead to the old end are not seen by the reads (the stream closed the handle).
    if ((await stat(file.path)).size !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
  } finally {
    // Also runs when the consumer stops early (return()): the descriptor must not leak.
    if (stream) {
      stream.destroy();
      // Wait for the descriptor to be closed, so return() resolving means it is released.
      if (!stream.closed) await new Promise<void>((resolve) => stream?.once('close', () => resolve()));
    } else {
      await handle.close();
    }
  }
}

/**
 * Raw bytes of a file read into ONE reused buffer: each chunk is only valid until the next is asked
 * for. For base64Chunks, which turns a chunk into a string before asking again; it halves the
 * memory that must be garbage collected per uploaded byte (a 100 MB body otherwise churns through
 * 100 MB of read buffers besides its base64 text).
 */
async function* fileBytesReusingBuffer(file: ReferenceFile, chunkBytes: number): AsyncGenerator<Buffer> {
  const handle = await open(file.path, 'r');
  try {
    if ((await handle.stat()).size !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, chunkBytes, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > file.size) throw new ReferenceFileChangedError(file.path, file.size);
      yield buffer.subarray(0, bytesRead);
    }
    if (total !== file.size || (await handle.stat()).size !== file.size) throw new ReferenceFileChangedError(file.path, file.size);
  } finally {
    await handle.close();
  }
}

/** Base64 of a byte stream, encoded in runs of whole 3-byte groups; a 1–2 byte carry joins the next chunk. Keeps no chunk it was given. */
export async function* base64Chunks(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const data = carry.length > 0 ? Buffer.concat([carry, view]) : view;
    const whole = data.length - (data.length % 3);
    if (whole > 0) yield Buffer.from(data.toString('base64', 0, whole), 'latin1');
    carry = Buffer.from(data.subarray(whole)); // a copy, so the big chunk is not retained
  }
  if (carry.length > 0) yield Buffer.from(carry.toString('base64'), 'latin1');
}

function streamPieces(pieces: readonly Piece[]): AsyncIterable<Uint8Array> {
  // A fresh generator per iteration: the body can be read again and files reopen lazily.
  return {
    async *[Symbol.asyncIterator]() {
      for (const piece of pieces) {
        if (piece instanceof Uint8Array) yield piece;
        else yield* piece.base64 ? base64Chunks(fileBytesReusingBuffer(piece.file, BASE64_CHUNK_BYTES)) : fileBytes(piece.file, RAW_CHUNK_BYTES);
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
