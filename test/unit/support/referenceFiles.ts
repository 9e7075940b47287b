// Reference files for the request body tests (requestBodies*.test.ts): files of awkward sizes in a
// temporary folder, and readers of what a body holds (its bytes, its multipart parts).
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReferenceFile } from '../../../src/core/requests/requestBodies';

export interface ReferenceFiles {
  /** The temporary folder (set once the suite's before hook ran). */
  readonly dir: string;
  /** The files' contents by name: empty, 1, 2 and 3 bytes, 1 MiB, one byte past a read chunk. */
  readonly files: Record<string, Buffer>;
  /** A reference to one of the files, with the size it has. */
  readonly ref: (name: string, mediaType?: string) => ReferenceFile;
}

/** Reference files made before the calling suite and removed after it. */
export function useReferenceFiles(): ReferenceFiles {
  let dir = '';
  const files: Record<string, Buffer> = {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bodies-'));
    const contents: Record<string, Buffer> = {
      'empty.png': Buffer.alloc(0),
      'one.png': randomBytes(1),
      'two.jpg': randomBytes(2),
      'three.webp': randomBytes(3),
      'mega.png': randomBytes(1024 * 1024),
      'odd.png': randomBytes(3 * 32 * 1024 + 1), // one byte past a read chunk
    };
    for (const [name, data] of Object.entries(contents)) {
      files[name] = data;
      await writeFile(join(dir, name), data);
    }
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  return {
    get dir() {
      return dir;
    },
    files,
    ref: (name, mediaType = 'image/png') => ({ path: join(dir, name), mediaType, size: files[name]!.length }),
  };
}

export async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Open descriptors of this process (Linux); undefined elsewhere. */
export function openFds(): number | undefined {
  return existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : undefined;
}

export interface Part {
  headers: Record<string, string>;
  body: Buffer;
}

/** A small strict multipart parser: checks CRLFs, the boundary lines and the closing delimiter. */
export function parseMultipart(raw: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`);
  assert.ok(raw.subarray(0, delimiter.length).equals(delimiter), 'body starts with the boundary');
  assert.equal(raw.subarray(raw.length - delimiter.length - 4).toString('latin1'), `--${boundary}--\r\n`);
  const parts: Part[] = [];
  let pos = delimiter.length;
  for (;;) {
    const after = raw.subarray(pos, pos + 2).toString('latin1');
    if (after === '--') break;
    assert.equal(after, '\r\n');
    pos += 2;
    const headerEnd = raw.indexOf('\r\n\r\n', pos);
    const headers: Record<string, string> = {};
    for (const line of raw.subarray(pos, headerEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const next = raw.indexOf(Buffer.from(`\r\n--${boundary}`), headerEnd + 4);
    assert.ok(next >= 0, 'part is terminated');
    parts.push({ headers, body: raw.subarray(headerEnd + 4, next) });
    pos = next + 2 + delimiter.length;
  }
  return parts;
}
