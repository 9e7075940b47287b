// Where paid images live on disk. Each image streams into a staging folder (the recovery folder
// in the extension's global storage) and is then placed into the workspace without overwriting.
// Whatever cannot be placed stays in the staging folder with a manifest: a paid image is never lost.
import { randomUUID } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ImageSink, ImageWriter } from '../gateway/imageSink';
import { extensionForMediaType, type ImageKind, SNIFF_HEAD_BYTES, sniffImage } from '../images/imageSniff';
import { withCollisionSuffix } from './naming';
import { checkPngEnds, IEND_CHUNK } from './pngText';

export interface StagedImage {
  index: number;
  path: string;
  bytes: number;
  /** From the image's magic bytes. */
  sniffed?: ImageKind;
  /**
   * Settles once the bytes are on disk (fsync) and the file is closed, with the error when the sync
   * or the close failed (the bytes may not be on disk: the image is then kept for recovery). The sync
   * runs beside what follows (the next image of the answer, placing this one): whoever finishes with
   * the image awaits it, so a job still ends only once its images are durable. Absent: nothing to wait for.
   */
  durable?: Promise<Error | undefined>;
  /**
   * The PNG chunk the sink was asked to add (provenance): 'added' before IEND, in the same pass as
   * the image's bytes, or why not (the file is not a PNG ending in IEND). Absent: none was asked for.
   */
  pngChunk?: 'added' | { error: string };
}

/** A PNG chunk to add before IEND of image `index`, or undefined for none (e.g. provenance is off). */
export type PngChunkFor = (index: number) => Buffer | undefined;

const SNIFF_BYTES = SNIFF_HEAD_BYTES;
/**
 * Decoded chunks (~48 KiB each) are gathered and written with one writev per this many bytes: one
 * awaited write per chunk cost the job ~1.6x the CPU of the physical limit on a 670 MB response
 * (npm run bench). The decoder hands its chunks over, so they are kept without copying.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** Kept well below IOV_MAX (1024) even when a producer sends tiny chunks. */
const WRITE_BATCH_BUFFERS = 256;
/** Where paid images go when the recovery folder itself cannot be written. */
export const FALLBACK_RECOVERY_DIR = path.join(os.tmpdir(), 'gateway-images-recovery');
const MAX_NAME_ATTEMPTS = 1000;

/**
 * An ImageSink that writes each decoded image to `<dir>/<jobId>-<index>.part`, renamed `.img` once
 * complete; what cannot be decoded the client keeps beside them (createFile, keptAnswer.ts).
 */
export class StagingSink implements ImageSink {
  readonly jobId: string;
  private readonly completed = new Map<number, StagedImage>();

  private readonly fallbackDir: string;
  private readonly pngChunkFor?: PngChunkFor;

  constructor(
    private dirPreferred: string,
    options: {
      jobId?: string;
      /** Used when the preferred folder cannot be written, so a paid image still has a place. */
      fallbackDir?: string;
      /**
       * Added while the image is written, before its sync: no second open, read, write and sync of
       * a file of tens of MiB between the image's arrival and its showing.
       */
      pngChunkFor?: PngChunkFor;
    } = {},
  ) {
    this.jobId = options.jobId ?? `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}`;
    this.fallbackDir = options.fallbackDir ?? FALLBACK_RECOVERY_DIR;
    this.pngChunkFor = options.pngChunkFor;
  }

  /** The folder the images of this job are in (the fallback once the preferred one failed). */
  get dir(): string {
    return this.dirPreferred;
  }

  /** Images whose base64 string ended and decoded completely, by index. */
  get images(): StagedImage[] {
    return [...this.completed.values()].sort((a, b) => a.index - b.index);
  }

  /** Creates `<jobId>-<name>` in the staging folder (the fallback folder once the preferred one failed). */
  async createFile(name: string): Promise<{ file: string; handle: fs.FileHandle }> {
    try {
      await fs.mkdir(this.dir, { recursive: true });
      const file = path.join(this.dir, `${this.jobId}-${name}`);
      return { file, handle: await fs.open(file, 'wx') };
    } catch (error) {
      if (this.dirPreferred === this.fallbackDir) throw error;
      this.dirPreferred = this.fallbackDir;
      await fs.mkdir(this.dir, { recursive: true });
      const file = path.join(this.dir, `${this.jobId}-${name}`);
      return { file, handle: await fs.open(file, 'wx') };
    }
  }

  async open(index: number): Promise<ImageWriter & Required<Pick<ImageWriter, 'received'>>> {
    let { file: partPath, handle } = await this.createFile(`${index}.part`);
    let bytes = 0;
    /** Bytes written to the file so far (the next write goes there). */
    let position = 0;
    let head = Buffer.alloc(0);
    /** The last IEND_CHUNK.length bytes written so far (kept only when a PNG chunk may be added). */
    let tail: Buffer = Buffer.alloc(0);
    let finished = false;
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const finish = async () => {
      if (finished) return;
      finished = true;
      await handle.close();
    };
    /** The disk of the staging folder is full: what was written goes on in the fallback folder (another disk). */
    const moveToFallback = async (error: unknown) => {
      if (!isDiskFull(error) || this.dirPreferred === this.fallbackDir) throw error;
      await fs.mkdir(this.fallbackDir, { recursive: true });
      const moved = path.join(this.fallbackDir, path.basename(partPath));
      await fs.copyFile(partPath, moved, fsConstants.COPYFILE_EXCL);
      const next = await fs.open(moved, 'r+');
      // A write that failed part-way may have left some of its bytes: they are written again.
      await next.truncate(position);
      await handle.close().catch(() => undefined);
      await fs.rm(partPath, { force: true }).catch(() => undefined);
      this.dirPreferred = this.fallbackDir;
      ({ partPath, handle } = { partPath: moved, handle: next });
    };
    const flush = async () => {
      if (batch.length === 0) return;
      const buffers = batch;
      const total = batchBytes;
      batch = [];
      batchBytes = 0;
      try {
        await writeAll(handle, buffers, total, position);
      } catch (error) {
        await moveToFallback(error);
        await writeAll(handle, buffers, total, position);
      }
      position += total;
    };
    return {
      write: async (chunk: Buffer) => {
        if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        if (chunk.length === 0) return;
        // The file is opened write-only: IEND is checked from what went through here.
        if (this.pngChunkFor)
          tail =
            chunk.length >= IEND_CHUNK.length ? chunk.subarray(chunk.length - IEND_CHUNK.length) : Buffer.concat([tail, chunk]).subarray(-IEND_CHUNK.length);
        batch.push(chunk);
        batchBytes += chunk.length;
        bytes += chunk.length;
        // A full batch is awaited: the decoder waits for the disk (backpressure).
        if (batchBytes >= WRITE_BATCH_BYTES || batch.length >= WRITE_BATCH_BUFFERS) await flush();
      },
      close: async () => {
        // Before the sync, so that it covers the chunk too; in the last write when it holds IEND.
        let pngChunk: StagedImage['pngChunk'];
        const sniffed = sniffImage(head);
        const extra = sniffed?.extension === 'png' ? this.pngChunkFor?.(index) : undefined;
        if (extra) {
          try {
            checkPngEnds(head, tail, bytes);
          } catch (error) {
            pngChunk = { error: errorMessage(error) };
          }
          if (!pngChunk && batchBytes >= IEND_CHUNK.length) {
            // Goes out with the last write, whose errors are the image's own (not caught here).
            dropLastBytes(batch, IEND_CHUNK.length);
            batch.push(extra, IEND_CHUNK);
            batchBytes += extra.length;
            bytes += extra.length;
            pngChunk = 'added';
          } else if (!pngChunk) {
            await flush();
            try {
              await writeAllAt(handle, Buffer.concat([extra, IEND_CHUNK]), bytes - IEND_CHUNK.length);
              bytes += extra.length;
              position = bytes;
              pngChunk = 'added';
            } catch (error) {
              pngChunk = { error: errorMessage(error) };
            }
          }
        }
        await flush();
        // Not awaited here: the stream would stop for it (~45 ms per 24 MiB on the bench machine,
        // 0.4-0.6 s over ten images) and the first image would be shown that much later.
        const durable = syncAndClose(handle, () => (finished = true));
        // Every byte is written: the `.img` name says so (see README, "delivered whole").
        const donePath = path.join(this.dir, `${this.jobId}-${index}.img`);
        try {
          await fs.rename(partPath, donePath);
        } catch (error) {
          await durable;
          throw error;
        }
        this.completed.set(index, { index, path: donePath, bytes, sniffed, durable, ...(pngChunk ? { pngChunk } : {}) });
      },
      received: async () => {
        await flush();
        return partPath;
      },
      abort: async () => {
        // A partly written file is never presented as an image.
        batch = [];
        batchBytes = 0;
        await finish().catch(() => undefined);
        await fs.rm(partPath, { force: true }).catch(() => undefined);
      },
    };
  }

  /** Settles once every complete image is on disk and closed, with the sync or close failures (see StagedImage.durable). */
  async durable(): Promise<Error[]> {
    const settled = await Promise.all([...this.completed.values()].map((image) => image.durable ?? Promise.resolve(undefined)));
    return settled.filter((failure): failure is Error => failure !== undefined);
  }
}

/** Syncs and closes a staged image: settles with the first failure, never rejects (see StagedImage.durable). */
async function syncAndClose(handle: fs.FileHandle, onClosed: () => void): Promise<Error | undefined> {
  let failure: Error | undefined;
  try {
    await handle.sync();
  } catch (error) {
    failure = asError(error);
  }
  try {
    onClosed();
    await handle.close();
  } catch (error) {
    failure ??= asError(error);
  }
  return failure;
}

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Removes the last `n` bytes from a list of buffers (they hold at least `n`). */
function dropLastBytes(buffers: Buffer[], n: number): void {
  while (n > 0) {
    const last = buffers[buffers.length - 1]!;
    if (last.length <= n) {
      buffers.pop();
      n -= last.length;
    } else {
      buffers[buffers.length - 1] = last.subarray(0, last.length - n);
      n = 0;
    }
  }
}

/** Writes every byte of `bytes` at `position`. */
async function writeAllAt(handle: fs.FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let written = 0; written < bytes.length;) written += (await handle.write(bytes, written, bytes.length - written, position + written)).bytesWritten;
}

/** Writes every byte of `buffers` at `position`: one writev, then whatever a short write left. */
async function writeAll(handle: fs.FileHandle, buffers: Buffer[], total: number, position: number): Promise<void> {
  let written = (await handle.writev(buffers, position)).bytesWritten;
  if (written >= total) return;
  const rest = Buffer.concat(buffers, total);
  while (written < total) written += (await handle.write(rest, written, total - written, position + written)).bytesWritten;
}

/** No space left (or over quota) where the staged file is written. */
function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** The extension for a staged image: its magic bytes win, then the gateway's media_type, then png. */
export function extensionOf(image: StagedImage, mediaType?: string): string {
  return image.sniffed?.extension ?? extensionForMediaType(mediaType) ?? 'png';
}

/**
 * Creates `dir` with its parents; resolves to the first folder it created (undefined when `dir`
 * existed, or could not be made: the link that follows reports the real error).
 */
export function makeFolder(dir: string): Promise<string | undefined> {
  return fs.mkdir(dir, { recursive: true }).catch(() => undefined);
}

/** Removes `dir` and its parents up to `created` (what makeFolder made), each only while empty. */
export async function removeEmptyFolders(dir: string, created: string): Promise<void> {
  const top = path.resolve(created);
  for (let folder = path.resolve(dir); folder === top || folder.startsWith(top + path.sep); folder = path.dirname(folder)) {
    try {
      await fs.rmdir(folder);
    } catch {
      return;
    }
  }
}

/**
 * Moves `source` into `dir` as `<baseName>.<ext>`, never overwriting (see linkWithoutOverwrite).
 * Returns the final path.
 */
export async function placeWithoutOverwrite(source: string, dir: string, baseName: string, ext: string): Promise<string> {
  const target = await linkWithoutOverwrite(source, dir, baseName, ext);
  await fs.rm(source, { force: true });
  return target;
}

/**
 * Links `source` into `dir` as `<baseName>.<ext>`, never overwriting: a hard link fails with EEXIST
 * when the name is taken (atomically, even with concurrent jobs), and the next suffix is tried.
 * Across devices the file is copied with COPYFILE_EXCL. `dir` is created only when the first link
 * finds it missing: a new image waits for one file operation, not three. The source stays.
 */
export async function linkWithoutOverwrite(source: string, dir: string, baseName: string, ext: string): Promise<string> {
  let madeDir = false;
  for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
    const target = path.join(dir, `${withCollisionSuffix(baseName, attempt)}.${ext}`);
    try {
      await linkOrCopy(source, target);
      return target;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && !madeDir) {
        // The folder is missing (or the source: then the second try fails the same way).
        await fs.mkdir(dir, { recursive: true });
        madeDir = true;
        attempt--;
        continue;
      }
      if (code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`No free file name for "${baseName}.${ext}" in ${dir} after ${MAX_NAME_ATTEMPTS} attempts.`);
}

async function linkOrCopy(source: string, target: string): Promise<void> {
  try {
    await fs.link(source, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Hard links are not possible across devices or on some file systems: copy exclusively instead.
    if (!NO_LINKS.has(code ?? '')) throw error;
    await copyExclusive(source, target);
  }
}

/** Hard links are not possible here: the file system has none, or they cross devices. */
const NO_LINKS = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * Copies `source` to `target`, never overwriting. The copy is made under a temporary name beside the
 * target (`.<source name>.copying`), synced, and then linked to its final name: a crash or a full
 * disk mid-copy never leaves a partial file under a final name, and the temporary one is removed.
 * Where the target's file system has no hard links, the copy goes to the final name directly (exclusive).
 */
async function copyExclusive(source: string, target: string): Promise<void> {
  const temporary = path.join(path.dirname(target), `.${path.basename(source)}.copying`);
  try {
    await fs.copyFile(source, temporary);
    await syncFile(temporary);
    await fs.link(temporary, target);
  } catch (error) {
    if (!NO_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    await copyToFinalName(source, target);
  } finally {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
  }
}

async function copyToFinalName(source: string, target: string): Promise<void> {
  try {
    await fs.copyFile(source, target, fsConstants.COPYFILE_EXCL);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await fs.rm(target, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** Syncs a file's bytes to disk. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
