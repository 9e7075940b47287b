// Reads the success answer of a paid request in whatever shape it comes. The generations answer is
// JSON (decodeGenerationStream); the shape of the edits answer is not shown by the contract, so a
// binary image body is accepted too. Any other shape is reported with its content type. What could
// not be read goes to the sink's kept answer (ImageSink.keep) as it arrives, so that nothing paid
// for is lost, however large the answer.
// Pure: no vscode import.
import { ResponseFormatError } from '../gateway/errors';
import type { ImageSink } from '../gateway/imageSink';
import { decodeGenerationStream } from './generationStream';
import * as l10n from '@vscode/l10n';
import { sniffImage } from '../images/imageSniff';
import type { GenerationResponseMeta } from '../gateway/types';

/** After a failure, the rest of the answer is read (to keep it whole) until it ends or stalls this long. */
const DRAIN_IDLE_MS = 30_000;

/** A ResponseFormatError for a paid answer that could not be read; what it held went to the sink's `keep`. */
export class UnreadableAnswerError extends ResponseFormatError {}

export async function decodePaidAnswer(
  body: AsyncIterable<Uint8Array>,
  contentType: string | undefined,
  sink: ImageSink,
  options: { signal?: AbortSignal } = {},
): Promise<GenerationResponseMeta> {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase() || undefined;
  const source = new PeekingSource(body);
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
      await source.keepRest(sink, options.signal);
      const what = type ? l10n.t('The gateway answered with "{0}": {1}', type, error.message) : error.message;
      throw new UnreadableAnswerError(what, { cause: error });
    }
  }
  await source.keepRest(sink, options.signal);
  throw new UnreadableAnswerError(l10n.t('The gateway answered with "{0}", which is neither an image nor the JSON answer of the API.', type ?? ''));
}

function isJsonType(type: string | undefined): boolean {
  return !!type && (type === 'application/json' || type === 'text/json' || type.endsWith('+json'));
}

/** The whole body is one image (image/* or bytes that sniff as one). */
async function streamBinaryImage(
  source: PeekingSource,
  sink: ImageSink,
  mediaType: string | undefined,
  signal: AbortSignal | undefined,
): Promise<GenerationResponseMeta> {
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
    // An image cut short is kept as far as it came.
    if (bytes > 0) await writer.unfinished?.({ bytes, encoding: 'binary' }).catch(() => undefined);
    await writer.abort(error instanceof Error ? error : new Error(String(error))).catch(() => undefined);
    throw error;
  }
  return { images: [{ index: 0, ...(mediaType ? { mediaType } : {}) }] };
}

/** An async iterable over the body that can peek at the first chunk, and keep what is left of it. */
class PeekingSource implements AsyncIterable<Uint8Array> {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private first: Buffer | undefined;
  private peeked = false;
  /** The first chunk was handed out (to the decoder, which keeps what it cannot read itself). */
  private started = false;
  private done = false;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.iterator = body[Symbol.asyncIterator]();
  }

  async peek(): Promise<Buffer> {
    if (!this.peeked) {
      this.peeked = true;
      const step = await this.iterator.next();
      if (step.done) this.done = true;
      else this.first = asBuffer(step.value);
    }
    return this.first ?? Buffer.alloc(0);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: async () => {
        this.started = true;
        if (this.first) {
          const value = this.first;
          this.first = undefined;
          return { done: false, value };
        }
        if (this.done) return { done: true, value: undefined };
        const step = await this.iterator.next();
        if (step.done) this.done = true;
        return step;
      },
      // The decoder stops on an error: the body stays open so keepRest() can keep the rest.
      return: () => Promise.resolve({ done: true, value: undefined }),
    };
  }

  /**
   * Hands what is left of the body to `sink.keep` as it arrives (the peeked chunk too, when nobody
   * took it), until it ends, stalls or the request is aborted; then closes it.
   */
  async keepRest(sink: ImageSink, signal?: AbortSignal): Promise<void> {
    try {
      if (!this.started && this.first) await sink.keep?.(this.first);
      this.first = undefined;
      while (!this.done && !signal?.aborted) {
        let timer: NodeJS.Timeout | undefined;
        const step = await Promise.race([
          this.iterator.next(),
          new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), DRAIN_IDLE_MS))),
        ]).finally(() => clearTimeout(timer));
        if (step === 'stalled') break;
        if (step.done) this.done = true;
        else await sink.keep?.(asBuffer(step.value));
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
}

function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
