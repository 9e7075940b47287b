// Streaming decoder of image generation responses (POST /v1/images/generations).
//
// A response can be hundreds of megabytes of JSON (10 images of ~24 MiB each, base64).
// `body.json()` would hold the whole body, then a JS string of it, then every decoded
// image, and above ~512 MiB cannot even build the string. This module reads the body
// chunk by chunk with a small state machine, decodes each `data[i].b64_json` as it
// arrives and hands the bytes to a sink (which awaits its own writes: backpressure).
// Nothing larger than one input chunk plus a small staging buffer is ever held.
//
// Pure: no vscode import. See docs/gateway-contract.md, "The answer".

import type { ImageSink, ImageWriter } from '../gateway/imageSink';
import type { GenerationResponseMeta } from '../gateway/types';
import { CancelledError, GatewayError } from '../gateway/errors';
import { MAX_SLICE } from './base64Stream';
import { GenerationParser, type ParserEvent } from './generationParser';
import { sharedTurn, type TurnBudget } from '../common/loopTurn';

export interface DecodeGenerationOptions {
  signal?: AbortSignal;
  /** The work budget per event-loop turn; the process's shared one unless a test gives its own. */
  turn?: TurnBudget;
}

/**
 * Consumes a JSON generation response body; writes each image, decoded, to sink.open(i) (from
 * data[i].b64_json, or data[i].url holding a data URL; a data URL header is stripped and its media
 * type is a hint); hands the bytes around the images to sink.keep; returns everything else.
 *
 * Errors: ResponseFormatError for anything malformed (not JSON, not an object, truncated, bad base64,
 * `data` not an array, an element without an image, URL elements of the old API); errors of the body
 * iterator and of the sink are rethrown as they are. On abort of `options.signal`: its reason when that
 * is an Error other than the default AbortError, otherwise a CancelledError. On any error other than an
 * abort, what arrived of the open image goes to its writer's `unfinished` and the rest of the current
 * chunk to sink.keep (the caller keeps the rest of the body); then the open writer is aborted.
 */
export async function decodeGenerationStream(
  body: AsyncIterable<Uint8Array>,
  sink: ImageSink,
  options?: DecodeGenerationOptions,
): Promise<GenerationResponseMeta> {
  const signal = options?.signal;
  const queue: ParserEvent[] = [];
  const parser = new GenerationParser(queue);
  let writer: ImageWriter | undefined;
  let iterator: AsyncIterator<Uint8Array> | undefined;
  let iteratorDone = false;
  const turn = options?.turn ?? sharedTurn;

  const drain = async (stopOnAbort = true): Promise<void> => {
    // Events are few per slice (at most a handful of opens/closes and writes of ~36 KiB).
    for (let k = 0; k < queue.length; k++) {
      const ev = queue[k]!; // k < queue.length
      if (ev.kind === 'write') {
        const pending = writer!.write(ev.bytes);
        if (pending !== undefined) await pending;
      } else if (ev.kind === 'raw') {
        const pending = sink.keep?.(ev.bytes);
        if (pending !== undefined) await pending;
      } else if (ev.kind === 'unfinished') {
        await writer?.unfinished?.({ bytes: ev.decodedBytes, encoding: 'base64', text: ev.text });
      } else if (ev.kind === 'open') {
        writer = await sink.open(ev.index);
      } else {
        const w = writer!;
        writer = undefined;
        try {
          await w.close();
        } catch (error) {
          await abortQuietly(w, asError(error));
          throw error;
        }
      }
      if (stopOnAbort && signal?.aborted) throw abortReason(signal);
    }
    queue.length = 0;
  };

  try {
    if (signal?.aborted) throw abortReason(signal);
    iterator = body[Symbol.asyncIterator]();
    for (;;) {
      const step = signal ? await nextOrAbort(iterator, signal) : await iterator.next();
      if (step.done) {
        iteratorDone = true;
        break;
      }
      const chunk = toBuffer(step.value);
      for (let off = 0; off < chunk.length; off += MAX_SLICE) {
        const slice = off === 0 && chunk.length <= MAX_SLICE ? chunk : chunk.subarray(off, off + MAX_SLICE);
        // The budget is the process's, not this stream's: answers decoded at once share each turn.
        // After waiting, the step is taken whatever the new turn has left, so that no stream starves.
        if (turn.spent()) {
          await turn.next();
          if (signal?.aborted) throw abortReason(signal);
        }
        let failure: { error: unknown } | undefined;
        try {
          parser.feed(slice);
        } catch (error) {
          failure = { error };
        }
        // Events produced before a failure still happen in order (an image that ended is closed).
        await drain();
        if (failure) {
          // What could not be read is kept as it came: the rest of this chunk (the caller keeps the rest).
          const rest = chunk.subarray(off + slice.length);
          if (rest.length) await sink.keep?.(rest);
          throw failure.error;
        }
        if (signal?.aborted) throw abortReason(signal);
      }
    }
    parser.finish();
    return parser.result();
  } catch (error) {
    const reason = signal?.aborted ? abortReason(signal) : asError(error);
    // Paid bytes of an image cut short (a broken body, a truncated answer) are kept too. A cancel or
    // the deadline stops at once: nothing more is written.
    if (signal?.aborted) queue.length = 0;
    else {
      parser.abandon();
      try {
        await drain(false);
      } catch {
        // The sink failed to keep it: the original error matters more.
      }
    }
    if (writer) {
      const w = writer;
      writer = undefined;
      await abortQuietly(w, reason);
    }
    if (iterator && !iteratorDone && typeof iterator.return === 'function') {
      // Stop the body (an undici body cancels its socket). Not awaited: a pending read may never settle.
      try {
        Promise.resolve(iterator.return()).catch(() => undefined);
      } catch {
        // ignore
      }
    }
    throw signal?.aborted ? reason : error;
  }
}

function toBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

async function abortQuietly(writer: ImageWriter, reason: Error): Promise<void> {
  try {
    await writer.abort(reason);
  } catch {
    // The writer failed to discard; the original error matters more.
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof GatewayError) return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason;
  return new CancelledError();
}

function nextOrAbort(iterator: AsyncIterator<Uint8Array>, signal: AbortSignal): Promise<IteratorResult<Uint8Array>> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<IteratorResult<Uint8Array>>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
