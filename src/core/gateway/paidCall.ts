// What a paid call needs to tell charged from not charged: whether any byte may have reached the
// gateway, and the caller's sink failures kept apart from network failures. Pure: no vscode import.
import { ValidationError } from './errors';
import { errorCode } from './deadline';
import type { ImageSink } from './imageSink';

/** Errors raised before any byte reached the gateway: nothing can have been charged. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Marks errors thrown by the caller's sink so they are not mistaken for network errors. */
export class SinkFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('sink failed');
  }
}

export function guardSink(sink: ImageSink): ImageSink {
  const guard = async <T>(action: () => T | Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      throw error instanceof SinkFailure ? error : new SinkFailure(error);
    }
  };
  return {
    open: (index) =>
      guard(async () => {
        const writer = await sink.open(index);
        return {
          write: (bytes) => guard(() => writer.write(bytes)),
          close: () => guard(() => writer.close()),
          abort: (reason) => guard(() => writer.abort(reason)),
          ...(writer.unfinished ? { unfinished: (received) => guard(() => writer.unfinished!(received)) } : {}),
          ...(writer.received ? { received: () => guard(() => writer.received!()) } : {}),
        };
      }),
    ...(sink.keep ? { keep: (bytes) => guard(() => sink.keep!(bytes)) } : {}),
    ...(sink.createFile ? { createFile: (name) => guard(() => sink.createFile!(name)) } : {}),
  };
}

/** The body as an async iterable that calls `onFirstRead` when it is first pulled. */
export async function* trackFirstRead(body: string | AsyncIterable<Uint8Array>, onFirstRead: () => void): AsyncGenerator<Uint8Array> {
  onFirstRead();
  if (typeof body === 'string') yield Buffer.from(body, 'utf8');
  else yield* body;
}

export function mayHaveReachedGateway(error: unknown): boolean {
  if (error instanceof ValidationError) return false;
  const code = errorCode(error);
  return !(code && NOT_SENT_CODES.has(code));
}

/** What an error answer to a paid request says of its money. */
export type ErrorAnswerOutcome = 'not-charged' | 'may-have-been-charged';

/**
 * Statuses that say the request was refused, not acted on: invalid, not authorised, no funds or
 * budget, unknown model, too large, too many requests and their like. Not 408 (a time limit ran
 * out while it was under way) nor 424 (something it depended on failed), nor statuses of no
 * standard (a proxy's 499, 460...).
 */
const REFUSAL_STATUSES = new Set([400, 401, 402, 403, 404, 405, 406, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 425, 426, 428, 429, 431, 451]);

/**
 * Whether an error answer to a paid request proves it was not charged (docs/money.md, "Status and
 * outcome"). Before its body began to leave, the gateway had nothing to act on. After, only a
 * refusal in the gateway's own form proves it, and a proxy's 407 (it forwards nothing until it has
 * its credentials). Any 5xx says the gateway, or what stands in front of it, failed on the way,
 * maybe after the gateway had begun; any other answer (a proxy's page, bare text, a 3xx) may come
 * from something between that gave up while the gateway went on.
 */
export function errorAnswerOutcome(answer: { status: number; gatewayForm: boolean; bodyLeft: boolean }): ErrorAnswerOutcome {
  if (!answer.bodyLeft || answer.status === 407) return 'not-charged';
  return answer.gatewayForm && REFUSAL_STATUSES.has(answer.status) ? 'not-charged' : 'may-have-been-charged';
}
