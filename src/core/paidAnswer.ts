// Reads the success answer of a paid request in whatever shape it comes. The generations answer is
// JSON (decodeGenerationStream); the shape of the edits answer is not shown by the contract, so a
// binary image body is accepted too. Any other shape is reported with its content type, and what
// was received travels with the error so the job can keep it in the recovery folder.
// Pure: no vscode import.
import { ResponseFormatError } from './errors';
import { decodeGenerationStream, type ImageSink } from './generationStream';
import * as l10n from '@vscode/l10n';
import { sniffImage } from './imageSniff';
import type { GenerationResponseMeta } from './types';

/**
 * At most this much of an answer that could not be read is kept for the user. It is held in memory
 * while every answer streams, and copied: at 4 MiB, 20 jobs at once held 80 MB of it (npm run bench).
 */
export const MAX_KEPT_BYTES = 256 * 1024;
/** After a failure, the rest of the answer is read for at most this long (to keep it whole). */
const DRAIN_MS = 5000;

/** What the gateway sent, when it could not be read as images. */
export interface ReceivedAnswer {
  contentType?: string;
  bytes: Buffer;
  /** False when the answer was longer than what was kept, or was cut. */
  complete: boolean;
}

/** A ResponseFormatError that carries the answer it could not read. */
export class UnreadableAnswerError extends ResponseFormatError {
  constructor(
    message: string,
    readonly received: ReceivedAnswer,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export async function decodePaidAnswer(
  body: AsyncIterable<Uint8Array>,
  contentType: string | undefined,
  sink: ImageSink,
  options: { signal?: AbortSignal } = {},
): Promise<GenerationResponseMeta> {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase() || undefined;
  const source = new KeepingSource(body);
  const head = await source.peek();
  const firstChar = head
    .toString('latin1')
    .replace(/^\uFEFF|^\xef\xbb\xbf/, '')
    .trimStart()
    .charAt(0);
  const looksJson = firstChar === '{' || firstChar === '[';
  const sniffed = looksJson ? undefined : sniffImage(head);

  if ((type?.startsWith('image/') && !looksJson) || sniffed) {
    return streamBinaryImage(source, sink, type?.startsWith('image/') ? type : sniffed?.mediaType, options.signal);
  }
  // A first chunk of whitespace alone says nothing yet: the JSON decoder reads on (and reports).
  if (looksJson || isJsonType(type) || firstChar === '') {
    try {
      return await decodeGenerationStream(source, sink, options);
    } catch (error) {
      if (!(error instanceof ResponseFormatError)) {
        source.close();
        throw error;
      }
      await source.drain(options.signal);
      const what = type ? l10n.t('The gateway answered with "{0}": {1}', type, error.message) : error.message;
      throw new UnreadableAnswerError(what, source.received(contentType), { cause: error });
    }
  }
  await source.drain(options.signal);
  throw new UnreadableAnswerError(
    l10n.t('The gateway answered with "{0}", which is neither an image nor the JSON answer of the API.', type ?? ''),
    source.received(contentType),
  );
}

function isJsonType(type: string | undefined): boolean {
  return !!type && (type === 'application/json' || type === 'text/json' || type.endsWith('+json'));
}

/** The whole body is one image (image/* or bytes that sniff as one). */
async function streamBinaryImage(
  source: KeepingSource,
  sink: ImageSink,
  mediaType: string | undefined,
  signal: AbortSignal | undefined,
): Promise<GenerationResponseMeta> {
  source.keeping = false;
  const writer = await sink.open(0);
  let bytes = 0;
  try {
    for await (const chunk of source) {
      if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
      bytes += chunk.length;
      await writer.write(asBuffer(chunk));
    }
    if (bytes === 0) throw new ResponseFormatError(l10n.t('The gateway answered with an empty image body.'));
    await writer.close();
  } catch (error) {
    await writer.abort(error instanceof Error ? error : new Error(String(error))).catch(() => undefined);
    throw error;
  }
  return { images: [{ index: 0, ...(mediaType ? { mediaType } : {}) }] };
}

/** An async iterable over the body that can peek at the first chunk and keeps a bounded copy. */
class KeepingSource implements AsyncIterable<Uint8Array> {
  keeping = true;
  private readonly iterator: AsyncIterator<Uint8Array>;
  private first: Buffer | undefined;
  private peeked = false;
  private done = false;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private overflow = false;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.iterator = body[Symbol.asyncIterator]();
  }

  async peek(): Promise<Buffer> {
    if (!this.peeked) {
      this.peeked = true;
      const step = await this.iterator.next();
      if (step.done) this.done = true;
      else this.first = this.keep(asBuffer(step.value));
    }
    return this.first ?? Buffer.alloc(0);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: async () => {
        if (this.first) {
          const value = this.first;
          this.first = undefined;
          return { done: false, value };
        }
        if (this.done) return { done: true, value: undefined };
        const step = await this.iterator.next();
        if (step.done) {
          this.done = true;
          return step;
        }
        return { done: false, value: this.keep(asBuffer(step.value)) };
      },
      // The decoder stops on an error: the body stays open so drain() can keep the rest.
      return: () => Promise.resolve({ done: true, value: undefined }),
    };
  }

  /** Reads what is left (bounded in size and time), then closes the body. */
  async drain(signal?: AbortSignal): Promise<void> {
    const until = Date.now() + DRAIN_MS;
    try {
      while (!this.done && !this.overflow && Date.now() < until && !signal?.aborted) {
        const step = await Promise.race([
          this.iterator.next(),
          new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), Math.max(0, until - Date.now())).unref?.()),
        ]);
        if (step === 'late') break;
        if (step.done) this.done = true;
        else this.keep(asBuffer(step.value));
      }
    } catch {
      // A broken connection ends what can be kept.
    } finally {
      this.close();
    }
  }

  /** Stops the body (an undici body cancels its socket). */
  close(): void {
    if (!this.done) Promise.resolve(this.iterator.return?.()).catch(() => undefined);
  }

  received(contentType: string | undefined): ReceivedAnswer {
    return { contentType, bytes: Buffer.concat(this.kept, this.keptBytes), complete: this.done && !this.overflow };
  }

  private keep(chunk: Buffer): Buffer {
    if (!this.keeping || this.overflow) return chunk;
    const room = MAX_KEPT_BYTES - this.keptBytes;
    if (chunk.length > room) this.overflow = true;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length) {
      this.kept.push(Buffer.from(part));
      this.keptBytes += part.length;
    }
    return chunk;
  }
}

function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
