// Images a gateway answered with an address (data[i].url, the previous API version's form) instead
// of their bytes. Each is downloaded through the gateway client's own dispatcher (the same proxy and
// certificate settings as the paid request), within the paid request's deadline, and streamed into
// the same sink as a base64 image (staged as `.part`, renamed `.img` once whole).
// - Only http: and https: addresses are requested; anything else is refused without a request.
// - Only public addresses and the gateway's own host (addressPolicy.ts): each address, redirects
//   included, is checked before its request, and a name again when its connection is made.
// - The key goes only to the gateway's own origin (its base URL's). Redirects are followed, at most
//   MAX_REDIRECTS of them; once one leaves the gateway's origin the key is never sent again, not even
//   when a later one comes back (a host that is not the gateway must not steer the key anywhere).
// - The bytes are kept only when they are an image by their first bytes (imageSniff.ts) of the kind
//   the answer said (media_type), and at most MAX_DOWNLOAD_BYTES; an HTML page, another type or a
//   larger body is a failure of that image, and nothing of it is left under a final name.
// Pure: no vscode import.
import { type Dispatcher, request } from 'undici';
import * as l10n from '@vscode/l10n';
import type { ImageSink, ImageWriter } from '../gateway/imageSink';
import { extensionForMediaType, type ImageKind, SNIFF_HEAD_BYTES, sniffImage } from '../images/imageSniff';
import { errorCode } from '../gateway/deadline';
import { guardSink, SinkFailure } from '../gateway/paidCall';
import type { GenerationResponseMeta } from '../gateway/types';
import { type AddressPolicy, AddressRefusedError } from './addressPolicy';
import { shownAddress } from './shownAddress';

/** The largest image downloaded from an address; a larger one is refused and nothing of it is kept. */
export const MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;
/** Redirects followed from one address. */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ACCEPT = 'image/png, image/jpeg, image/webp, image/gif, image/svg+xml;q=0.9, */*;q=0.1';

/** An image at an address that could not be had: the message says why, for the user and the recovery manifest. */
export class ImageDownloadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ImageDownloadError';
  }
}

export interface DownloadOptions {
  /**
   * The gateway client's proxy and certificate settings, its direct connections resolving names
   * through `addresses.lookup` (proxy.ts withLookup): that is where a name is checked at connect time.
   */
  dispatcher: Dispatcher;
  /** Which addresses may be requested; checked before every request. */
  addresses: AddressPolicy;
  /** The gateway's origin (of its base URL): the only one the key is sent to. */
  gatewayOrigin: string;
  /** The key, sent as `Authorization: Bearer` to the gateway's origin only. */
  apiKey?: string;
  /** The paid request's deadline and cancel (Deadline.signal). */
  signal: AbortSignal;
  /** The deadline, for the message when it passes. */
  timeoutMs: number;
  maxBytes?: number;
  userAgent?: string;
  /** Each request made or refused (its address without the query, which may hold a signature), with its status or failure. */
  onRequest?: (entry: { address: string; status?: number; durationMs: number; withKey: boolean; error?: string }) => void;
}

/**
 * Downloads the image at `address` into `sink.open(index)`; resolves to its kind. Rejects with an
 * ImageDownloadError (nothing of the image is left under a final name), or with the sink's own
 * failure as a SinkFailure (a full disk is the caller's to handle). `expectedType`: the answer's
 * media_type for it, when it gave one.
 */
export async function downloadImage(
  address: string,
  expectedType: string | undefined,
  sink: ImageSink,
  index: number,
  options: DownloadOptions,
): Promise<ImageKind> {
  let target = httpAddress(address);
  // Once a redirect has left the gateway's origin, the key stays home.
  let keyAllowed = true;
  for (let redirects = 0; ; redirects++) {
    keyAllowed &&= target.origin === options.gatewayOrigin;
    const withKey = keyAllowed && !!options.apiKey;
    const started = Date.now();
    let response: Dispatcher.ResponseData;
    try {
      await options.addresses.check(target, options.signal);
      response = await request(target, {
        method: 'GET',
        headers: { 'user-agent': options.userAgent ?? 'gateway-images', accept: ACCEPT, ...(withKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        dispatcher: options.dispatcher,
        signal: options.signal,
      });
    } catch (error) {
      const failure = describeFailure(error, options);
      // A refused address was never connected to: nothing, the key least of all, was sent.
      const sent = withKey && !(error instanceof AddressRefusedError);
      options.onRequest?.({ address: shownAddress(target.href), durationMs: Date.now() - started, withKey: sent, error: failure.message });
      throw failure;
    }
    const status = response.statusCode;
    options.onRequest?.({ address: shownAddress(target.href), status, durationMs: Date.now() - started, withKey });
    const location = headerOf(response.headers, 'location');
    if (REDIRECT_STATUSES.has(status) && location) {
      await discard(response);
      if (redirects >= MAX_REDIRECTS) throw new ImageDownloadError(l10n.t('more than {0} redirects', MAX_REDIRECTS));
      target = httpAddress(location, target);
      continue;
    }
    if (status < 200 || status >= 300) {
      await discard(response);
      throw new ImageDownloadError(l10n.t('the address answered {0}', status));
    }
    return receive(response, expectedType, sink, index, options);
  }
}

/**
 * The images a read answer gave as addresses (GeneratedImageMeta.url), downloaded into the sink one
 * after another. A failure is noted on its image (downloadFailure): the call that read the answer
 * still succeeds (it was charged; the job keeps the address for Recover). Only the sink's own
 * failure rejects, as a SinkFailure.
 */
export async function downloadAddressed(meta: GenerationResponseMeta, sink: ImageSink, options: DownloadOptions): Promise<void> {
  const target = guardSink(sink);
  for (const image of meta.images) {
    if (image.url === undefined) continue;
    try {
      const kind = await downloadImage(image.url, image.mediaType, target, image.index, options);
      image.mediaType ??= kind.mediaType;
    } catch (error) {
      if (error instanceof SinkFailure) throw error;
      image.downloadFailure = error instanceof Error ? error.message : String(error);
    }
  }
}

/** The address as a URL when it is an absolute (or, for a redirect, relative) http(s) one; otherwise refused. */
function httpAddress(address: string, base?: URL): URL {
  let url: URL | undefined;
  try {
    url = new URL(address.trim(), base);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new ImageDownloadError(l10n.t('"{0}" is not an http(s) address: nothing was requested', shownAddress(address)));
  }
  return url;
}

/** Streams the body into the sink once its first bytes show an image of the expected kind. */
async function receive(response: Dispatcher.ResponseData, expectedType: string | undefined, sink: ImageSink, index: number, options: DownloadOptions) {
  const maxBytes = options.maxBytes ?? MAX_DOWNLOAD_BYTES;
  const declared = Number(headerOf(response.headers, 'content-length'));
  if (declared > maxBytes) {
    response.body.destroy();
    throw tooLarge(maxBytes);
  }
  const head: Buffer[] = [];
  let received = 0;
  let writer: ImageWriter | undefined;
  let kind: ImageKind | undefined;
  const open = async () => {
    const first = Buffer.concat(head);
    kind = expectedKind(first, expectedType, headerOf(response.headers, 'content-type'));
    writer = await sink.open(index);
    await writer.write(first);
  };
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > maxBytes) throw tooLarge(maxBytes);
      if (writer) await writer.write(chunk);
      else {
        head.push(chunk);
        if (received >= SNIFF_HEAD_BYTES) await open();
      }
    }
    if (!writer) await open();
    await writer!.close(); // open() set it or threw
    return kind!;
  } catch (error) {
    response.body.destroy();
    const failure = error instanceof ImageDownloadError || error instanceof SinkFailure ? error : describeFailure(error, options);
    // A partly written image is never presented as one (StagingSink removes its `.part`).
    if (writer) await writer.abort(failure).catch(() => undefined);
    throw failure;
  }
}

/** The kind of image `head` is, when it is the one expected (the answer's media_type, else any the product saves). */
function expectedKind(head: Buffer, expectedType: string | undefined, contentType: string | undefined): ImageKind {
  const kind = sniffImage(head);
  const type = (contentType?.split(';', 1)[0] ?? '').trim() || l10n.t('no content type');
  if (!head.length) throw new ImageDownloadError(l10n.t('the address answered with an empty body'));
  if (!kind) throw new ImageDownloadError(l10n.t('the address answered with something that is not an image ({0})', type));
  const expected = extensionForMediaType(expectedType);
  if (expected && expected !== kind.extension) {
    throw new ImageDownloadError(l10n.t('the address answered with {0}, not the {1} the gateway said', kind.mediaType, expectedType!.trim()));
  }
  return kind;
}

function tooLarge(maxBytes: number): ImageDownloadError {
  return new ImageDownloadError(l10n.t('the image there is larger than {0} MB', Math.round(maxBytes / 1024 / 1024)));
}

/** A network failure, the deadline or a cancel, in words. */
function describeFailure(error: unknown, options: DownloadOptions): ImageDownloadError {
  if (error instanceof ImageDownloadError) return error;
  // Before the request, or by the connection's lookup (the same error, passed on by undici as it is).
  if (error instanceof AddressRefusedError) return new ImageDownloadError(error.message, { cause: error });
  if (options.signal.aborted) {
    const timedOut = options.signal.reason instanceof Error && options.signal.reason.name === 'TimeoutError';
    return new ImageDownloadError(
      timedOut
        ? l10n.t("the request's time limit ({0} s) passed during the download", Math.round(options.timeoutMs / 1000))
        : l10n.t('the download was cancelled'),
      { cause: error },
    );
  }
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return new ImageDownloadError(l10n.t('the download failed: {0}', `${message}${code && !message.includes(code) ? ` (${code})` : ''}`), { cause: error });
}

async function discard(response: Dispatcher.ResponseData): Promise<void> {
  try {
    await response.body.dump({ limit: 64 * 1024 });
  } catch {
    // The connection goes; the answer was not needed.
  }
}

function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
