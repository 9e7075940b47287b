// The part of a paid answer the client could not decode into images, kept while it streams: in
// memory while it is small (the JSON around the images of a readable answer is a few hundred bytes),
// on disk once it grows (an answer that cannot be read: hundreds of MB are possible, never held in
// memory). The client (client.ts) throws it away after a success; after a failure it becomes
// `<job>-answer.<ext>` in the sink's folder and the error says so (GatewayError.keptAnswer).
// Pure: no vscode import.
import type { promises as fs } from 'node:fs';
import { promises as fsp } from 'node:fs';
import type { ImageSink } from '../gateway/imageSink';
import { extensionForMediaType, readImageHead } from '../images/imageSniff';

/** Kept in memory up to this much; beyond it the kept bytes go to a file as they arrive. */
const IN_MEMORY_BYTES = 256 * 1024;
/** The base64 of a partly received image is written in pieces of this many bytes (a multiple of 3). */
const ENCODE_BYTES = 3 * 1024 * 1024;

/** Creates a new file for writing in the sink's folder (ImageSink.createFile). */
export type CreateFile = (name: string) => Promise<{ file: string; handle: fs.FileHandle }>;

export class AnswerKeeper {
  private memory: Buffer[] = [];
  private memoryBytes = 0;
  private spill: { file: string; handle: fs.FileHandle } | undefined;
  private size = 0;
  /** The first thing that could not be kept: told when the answer is kept. */
  private failure: Error | undefined;
  /** Writing to the file failed: nothing more is kept. */
  private broken = false;
  /** Everything from now on goes to the file, in order (set as soon as the first write to it is queued). */
  private onDisk = false;
  /** Serialises writes: kept bytes stay in order whoever awaits what. */
  private chain: Promise<void> = Promise.resolve();
  /** What keep() made of it (asked once; later calls get the same). */
  private kept: Promise<{ file: string; failure?: string } | undefined> | undefined;

  constructor(private readonly create: CreateFile) {}

  /** Keeps `bytes` (copied: the caller's buffer may be reused). Never throws. */
  write(bytes: Buffer): Promise<void> {
    if (!bytes.length) return this.chain;
    this.size += bytes.length;
    if (!this.onDisk && this.memoryBytes + bytes.length <= IN_MEMORY_BYTES) {
      this.memory.push(Buffer.from(bytes));
      this.memoryBytes += bytes.length;
      return this.chain;
    }
    const copy = Buffer.from(bytes);
    return this.enqueue(async (handle) => {
      await writeAll(handle, copy);
    });
  }

  /**
   * Keeps `file`'s first `count` bytes: as base64 text (what arrived of an image's string, encoded
   * again as it came) or as they are (an image body cut short).
   */
  writeFileOf(file: string, count: number, encoding: 'base64' | 'binary'): Promise<void> {
    this.size += encoding === 'base64' ? Math.ceil(count / 3) * 4 : count;
    return this.enqueue(async (handle) => {
      const source = await fsp.open(file, 'r');
      try {
        const piece = Buffer.allocUnsafe(ENCODE_BYTES);
        for (let at = 0; at < count;) {
          const { bytesRead } = await source.read(piece, 0, Math.min(ENCODE_BYTES, count - at), at);
          if (bytesRead === 0) throw new Error(`${file} is shorter than the ${count} bytes written to it`);
          // Pieces of a multiple of 3 bytes encode without padding, so they join into one base64 text.
          const whole = bytesRead === count - at || encoding === 'binary' ? bytesRead : bytesRead - (bytesRead % 3);
          if (whole === 0) throw new Error(`a short read of ${file}`);
          const part = piece.subarray(0, whole);
          await writeAll(handle, encoding === 'binary' ? part : Buffer.from(part.toString('base64'), 'latin1'));
          at += whole;
        }
      } finally {
        await source.close();
      }
    });
  }

  /**
   * Makes what was kept `<job>-answer.<ext>` in the sink's folder, synced. Resolves to its path and,
   * when some of it could not be written or synced, why; undefined when nothing was kept. Asked
   * again, it resolves to the same (an answer kept while its images download, then failed).
   */
  keep(contentType?: string): Promise<{ file: string; failure?: string } | undefined> {
    this.kept ??= this.keepOnce(contentType);
    return this.kept;
  }

  private async keepOnce(contentType?: string): Promise<{ file: string; failure?: string } | undefined> {
    if (this.size === 0) return undefined;
    await this.enqueue(() => Promise.resolve()); // opens the file with what was in memory
    const spill = this.spill;
    if (!spill) return undefined; // nothing could be written at all
    let failure = this.failure?.message;
    try {
      await spill.handle.sync();
    } catch (error) {
      failure ??= errorMessage(error);
    }
    await spill.handle.close().catch((error: unknown) => (failure ??= errorMessage(error)));
    this.spill = undefined;
    let file = spill.file;
    try {
      const named = spill.file.replace(/\.part$/, `.${answerExtension(contentType, await readImageHead(spill.file, 64))}`);
      await fsp.rename(spill.file, named);
      file = named;
    } catch (error) {
      failure ??= errorMessage(error);
    }
    return { file, ...(failure ? { failure } : {}) };
  }

  /** Throws away what was kept, the file keep() made too (the answer was read: nothing in it needs keeping). */
  async discard(): Promise<void> {
    this.memory = [];
    this.memoryBytes = 0;
    await this.chain;
    const spill = this.spill;
    this.spill = undefined;
    if (spill) {
      await spill.handle.close().catch(() => undefined);
      await fsp.rm(spill.file, { force: true });
    }
    const kept = await this.kept;
    if (kept) await fsp.rm(kept.file, { force: true });
  }

  /** Something of the answer could not be had (a failing disk): told when the answer is kept. */
  failed(error: unknown): void {
    this.failure ??= error instanceof Error ? error : new Error(String(error));
  }

  /** Runs `action` on the spill file (opened, with what was in memory, on first use), after earlier ones. */
  private enqueue(action: (handle: fs.FileHandle) => Promise<void>): Promise<void> {
    this.onDisk = true;
    this.chain = this.chain.then(async () => {
      if (this.broken) return;
      try {
        if (!this.spill) {
          this.spill = await this.create('answer.part');
          const held = Buffer.concat(this.memory, this.memoryBytes);
          this.memory = [];
          this.memoryBytes = 0;
          await writeAll(this.spill.handle, held);
        }
        await action(this.spill.handle);
      } catch (error) {
        this.broken = true;
        this.failed(error);
      }
    });
    return this.chain;
  }
}

/**
 * The sink as the decoder sees it while `keeper` keeps what cannot be decoded: the bytes around the
 * images (keep), and what arrived of an image that could not be finished (unfinished: the bytes its
 * writer wrote, from the file the writer names). Never throws for keeping.
 */
export function keepingSink(sink: ImageSink, keeper: AnswerKeeper): ImageSink {
  return {
    open: async (index) => {
      const writer = await sink.open(index);
      return {
        write: (bytes) => writer.write(bytes),
        close: () => writer.close(),
        abort: (reason) => writer.abort(reason),
        unfinished: async ({ bytes, encoding, text }) => {
          try {
            if (writer.received) await keeper.writeFileOf(await writer.received(), bytes, encoding);
          } catch (error) {
            keeper.failed(error);
          }
          if (text?.length) await keeper.write(text);
        },
      };
    },
    keep: (bytes) => keeper.write(bytes),
  };
}

async function writeAll(handle: fs.FileHandle, bytes: Buffer): Promise<void> {
  for (let written = 0; written < bytes.length;) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten;
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The extension of a kept answer: from its content type, else from its first bytes. */
export function answerExtension(contentType: string | undefined, head: Buffer): string {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type.endsWith('+json') || type === 'text/json') return 'json';
  if (type === 'text/html') return 'html';
  const byType = type.startsWith('text/') ? 'txt' : extensionForMediaType(type);
  if (byType) return byType;
  const text = head
    .toString('latin1')
    .replace(/^\xef\xbb\xbf/, '')
    .trimStart();
  if (text.startsWith('{') || text.startsWith('[')) return 'json';
  if (/^<(!doctype html|html)/i.test(text)) return 'html';
  return head.every((c) => c === 0x09 || c === 0x0a || c === 0x0d || (c >= 0x20 && c < 0x7f)) ? 'txt' : 'bin';
}

/** The cost in rubles an answer states (`"cost_rub": 12.5` near its start or end), if it does. */
export async function costInAnswer(file: string): Promise<number | undefined> {
  try {
    const handle = await fsp.open(file, 'r');
    try {
      const size = (await handle.stat()).size;
      const window = 64 * 1024;
      const parts: string[] = [];
      for (const at of size > 2 * window ? [0, size - window] : [0]) {
        const buf = Buffer.alloc(Math.min(size, size > 2 * window ? window : size));
        const { bytesRead } = await handle.read(buf, 0, buf.length, at);
        parts.push(buf.toString('latin1', 0, bytesRead));
      }
      const match = /"cost_rub"\s*:\s*"?\s*(-?\d+(?:[.,]\d+)?)/.exec(parts.join('\n'));
      return match ? Number(match[1]!.replace(',', '.')) : undefined;
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}
