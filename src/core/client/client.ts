// The one typed client for every endpoint of the gateway (undici over HTTP).
// Money rule: a paid request (generation, edit) is sent once and never resent automatically.
import { setTimeout as wait } from 'node:timers/promises';
import { type Dispatcher, request } from 'undici';
import { normalizeBaseUrl } from '../gateway/baseUrl';
import * as l10n from '@vscode/l10n';
import { extractGroups, parseImageModels } from '../gateway/catalog';
import {
  ApiError,
  CancelledError,
  ConnectionError,
  type GatewayError,
  RateLimitedError,
  ResponseFormatError,
  ServerError,
  TimeoutError,
} from '../gateway/errors';
import { CertificateError, ProxyAuthenticationError } from '../gateway/networkErrors';
import { classifyApiError, headerValue, requestIdOf } from '../gateway/errorParsing';
import { accountIdentity } from '../gateway/identity';
import { toBalanceRecord, toKeyRecord, toStatsSummary, toUserRecord } from '../gateway/accountAnswers';
import { Deadline } from '../gateway/deadline';
import { errorAnswerOutcome, guardSink, mayHaveReachedGateway, SinkFailure, trackFirstRead } from '../gateway/paidCall';
import type { ImageSink } from '../gateway/imageSink';
import { type DownloadOptions, downloadAddressed, downloadImage } from '../answers/imageDownload';
import { AddressPolicy, type ResolveAll } from '../answers/addressPolicy';
import type { ImageKind } from '../images/imageSniff';
import { AnswerKeeper, costInAnswer, keepingSink } from '../answers/keptAnswer';
import { decodePaidAnswer } from '../answers/paidAnswer';
import { createDispatcher, withLookup } from '../gateway/proxy';
import { jsonBodyWithReferences, multipartEditBody, type ReferenceFile } from '../requests/requestBodies';
import type { BalanceRecord, CatalogEntry, GenerationRequest, GenerationResponseMeta, ImageModel, KeyRecord, StatsSummary, UserRecord } from '../gateway/types';

export interface RequestLogEntry {
  method: string;
  path: string;
  status?: number;
  durationMs: number;
  requestId?: string;
  attempt: number;
  /** The error kind when the call failed. */
  error?: string;
}

export interface GatewayClientConfig {
  baseUrl: string;
  /** Read on every call so a key changed in another window is used at once. */
  getApiKey: () => Promise<string | undefined> | string | undefined;
  /**
   * From createDispatcher (proxy.ts), which sends each paid request on a connection of its own. When
   * absent the client owns one with explicit timeouts and no proxy.
   */
  dispatcher?: Dispatcher;
  /** close() also closes the given dispatcher (one made for this client alone). */
  closeDispatcher?: boolean;
  /** Whole-request deadline of a paid request (generations can take minutes). */
  paidTimeoutMs?: number;
  /** Deadline of each attempt of a free GET. */
  freeTimeoutMs?: number;
  /** Retries of free GETs on connection errors, 429 and 5xx. */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  /** A Retry-After longer than this is not waited for. */
  maxRetryDelayMs?: number;
  /** The largest image downloaded from an address an answer gives (imageDownload.ts; default 50 MiB). */
  maxDownloadBytes?: number;
  /** How the names of image addresses are resolved to be checked (answers/addressPolicy.ts): the system's resolver by default; tests inject one. */
  lookup?: ResolveAll;
  onRequest?: (entry: RequestLogEntry) => void;
  userAgent?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** This key instead of getApiKey(): calls that must all use one key (an account refresh) pass it. */
  apiKey?: string;
  /**
   * Paid calls: called when a success answer's headers arrive, with the gateway's request id when it
   * sent one. The gateway has charged by then (it answers once the provider did), so a cancel from
   * here on must not drop the answer.
   */
  onPaidAnswer?: (answer: { requestId?: string }) => void;
  /**
   * Paid calls: called when the body is first read, i.e. once connected and about to send it. Before
   * that, nothing was sent. `identity`: the gateway and key it is sent with (a paid failure is that key's).
   */
  onSent?: (sent: { identity?: string }) => void;
}

const DEFAULT_PAID_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_FREE_TIMEOUT_MS = 30_000;
// Enough to read whole a refusal that quotes a long prompt: one cut short is not known as the gateway's.
const MAX_ERROR_BODY_BYTES = 1024 * 1024;
const MAX_JSON_BODY_BYTES = 32 * 1024 * 1024;

export class GatewayClient {
  readonly baseUrl: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly paidTimeoutMs: number;
  private readonly freeTimeoutMs: number;

  constructor(private readonly config: GatewayClientConfig) {
    this.baseUrl = normalizeBaseUrl(config.baseUrl);
    this.paidTimeoutMs = config.paidTimeoutMs ?? DEFAULT_PAID_TIMEOUT_MS;
    this.freeTimeoutMs = config.freeTimeoutMs ?? DEFAULT_FREE_TIMEOUT_MS;
    this.ownsDispatcher = !config.dispatcher || config.closeDispatcher === true;
    // undici's 300 s header/body defaults would kill slow generations: the deadline rules instead.
    // No proxy (env {}: the caller passes a proxy's dispatcher); paid requests on connections of their own.
    this.dispatcher = config.dispatcher ?? createDispatcher({ timeoutMs: this.paidTimeoutMs, env: {} });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  // ---- Account (authorized, free) ----

  async me(options?: CallOptions): Promise<UserRecord> {
    return toUserRecord(await this.getJson('/v1/gateway/me', true, options));
  }

  async balance(options?: CallOptions): Promise<BalanceRecord> {
    return toBalanceRecord(await this.getJson('/v1/gateway/balance', true, options));
  }

  async key(options?: CallOptions): Promise<KeyRecord> {
    return toKeyRecord(await this.getJson('/v1/gateway/key', true, options));
  }

  async stats(options?: CallOptions): Promise<StatsSummary> {
    return toStatsSummary(await this.getJson('/v1/gateway/stats/summary', true, options));
  }

  // ---- Public catalog (no authorization) ----

  async catalog(options?: CallOptions): Promise<Map<string, CatalogEntry[]>> {
    return extractGroups(await this.getJson('/public/gateway/models', false, options));
  }

  async imageModels(options?: CallOptions): Promise<ImageModel[]> {
    return parseImageModels(await this.getJson('/public/gateway/models/images', false, options));
  }

  // ---- Paid: generation and editing ----

  /** Text-to-image, or image-to-image when `request.input_references` is set. Images stream to `sink`. */
  generate(request: GenerationRequest, sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta> {
    const body = JSON.stringify(flattenRequest(request));
    return this.sendPaid('/v1/images/generations', { body, contentType: 'application/json', contentLength: Buffer.byteLength(body) }, sink, options);
  }

  /** Image-to-image with local files sent as `input_references` data: URLs, base64-encoded from disk as the body streams. */
  generateWithReferences(request: GenerationRequest, files: ReferenceFile[], sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta> {
    const { input_references: _ignored, ...rest } = flattenRequest(request);
    const { body, contentLength } = jsonBodyWithReferences(rest, files);
    return this.sendPaid('/v1/images/generations', { body, contentType: 'application/json', contentLength }, sink, options);
  }

  /** POST /v1/images/edits: multipart form with `image` (one file) or `image[]` (several), streamed from disk. */
  edit(request: GenerationRequest, files: ReferenceFile[], sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta> {
    const { input_references: _ignored, ...rest } = flattenRequest(request);
    const fields: Record<string, string | number | boolean> = {};
    for (const [name, value] of Object.entries(rest)) {
      if (value !== undefined && value !== null) fields[name] = typeof value === 'object' ? JSON.stringify(value) : (value as string | number | boolean);
    }
    const { body, contentType, contentLength } = multipartEditBody(fields, files);
    return this.sendPaid('/v1/images/edits', { body, contentType, contentLength }, sink, options);
  }

  // ---- Transport ----

  private async sendPaid(
    path: string,
    payload: { body: string | AsyncIterable<Uint8Array>; contentType: string; contentLength: number },
    sink: ImageSink,
    options?: CallOptions,
  ): Promise<GenerationResponseMeta> {
    const started = Date.now();
    const deadline = new Deadline(this.paidTimeoutMs, options?.signal);
    let status: number | undefined;
    let requestId: string | undefined;
    // Set when undici first pulls the body, i.e. once connected and about to write it. Before that
    // nothing the gateway could act on has left: a cancel or a failure then is "not sent".
    let bodyStarted = false;
    let sentWith: { identity?: string } = {};
    const body = trackFirstRead(payload.body, () => {
      bodyStarted = true;
      options?.onSent?.(sentWith);
    });
    // What cannot be decoded of a paid answer is kept beside its images, never lost.
    const keeper = sink.createFile ? new AnswerKeeper(sink.createFile.bind(sink)) : undefined;
    let contentType: string | undefined;
    try {
      const headers = await this.headers(true, { 'content-type': payload.contentType, 'content-length': String(payload.contentLength) }, options?.apiKey);
      deadline.throwIfAborted();
      const key = headers.authorization?.slice('Bearer '.length);
      if (key) sentWith = { identity: accountIdentity(this.baseUrl, key) };
      const response = await request(this.url(path), {
        method: 'POST',
        headers,
        // An async iterable (undici takes one at run time; its types list only Readable). Unlike a
        // Readable, it is not read ahead before the connection exists, so bodyStarted stays honest.
        body: body as unknown as Dispatcher.DispatchOptions['body'] & Uint8Array,
        dispatcher: this.dispatcher,
        signal: deadline.signal,
      });
      status = response.statusCode;
      requestId = requestIdOf(response.headers);
      if (status < 200 || status >= 300) throw await apiErrorOf(response);
      options?.onPaidAnswer?.({ ...(requestId ? { requestId } : {}) });
      contentType = headerValue(response.headers, 'content-type');
      const target = keeper ? keepingSink(guardSink(sink), keeper) : guardSink(sink);
      const meta = await decodePaidAnswer(response.body, contentType, target, { signal: deadline.signal });
      if (meta.images.some((image) => image.url !== undefined)) {
        // The answer stays on disk while its images download: should the process die, their addresses are in the recovery folder.
        await keeper?.keep(contentType);
        await this.withDownloads(deadline, key, (downloads) => downloadAddressed(meta, sink, downloads));
      }
      await keeper?.discard();
      // The usage belongs to the key this request was sent with, whatever the key is by now.
      if (key) meta.identity = accountIdentity(this.baseUrl, key);
      this.log({ method: 'POST', path, status, durationMs: Date.now() - started, requestId, attempt: 1 });
      return meta;
    } catch (error) {
      const kept = await keeper?.keep(contentType);
      // The sink's own failure (a full disk, say) is the caller's to handle, as it is.
      if (error instanceof SinkFailure) throw error.cause;
      let typed = deadline.translate(error, status !== undefined ? 'answering' : bodyStarted ? 'awaiting-answer' : 'connecting');
      if (kept) typed.keptAnswer = { ...kept, costRub: await costInAnswer(kept.file) };
      if (!bodyStarted && typed instanceof CancelledError) typed = CancelledError.beforeSending();
      // Once the body began to leave, only a refusal proves nothing was charged. A failure without an
      // answer may have reached the gateway (a proxy's 407 is its own answer: the request went no further).
      if (!(typed instanceof ApiError) && !(typed instanceof ProxyAuthenticationError) && bodyStarted && mayHaveReachedGateway(error))
        typed.markOutcomeUnknown();
      // An error answer is a refusal only in the gateway's own form: a 5xx, or a proxy's page, says nothing of whether the gateway went on.
      if (typed instanceof ApiError && errorAnswerOutcome({ status: typed.status, gatewayForm: typed.gatewayForm, bodyLeft: bodyStarted }) !== 'not-charged')
        typed.markOutcomeUnknown();
      this.log({ method: 'POST', path, status, durationMs: Date.now() - started, requestId, attempt: 1, error: typed.kind });
      throw typed;
    }
  }

  /**
   * Downloads an image a gateway gave as an address (Recover Unsaved Images tries again) into
   * `sink.open(index)`, under the request deadline and with the key rule of imageDownload.ts. Rejects
   * with an ImageDownloadError, or with the sink's own failure.
   */
  async downloadImage(address: string, sink: ImageSink, index: number, options: { mediaType?: string; signal?: AbortSignal } = {}): Promise<ImageKind> {
    const deadline = new Deadline(this.paidTimeoutMs, options.signal);
    const key = (await this.config.getApiKey())?.trim();
    try {
      return await this.withDownloads(deadline, key, (downloads) => downloadImage(address, options.mediaType, guardSink(sink), index, downloads));
    } catch (error) {
      throw error instanceof SinkFailure ? error.cause : error;
    }
  }

  /**
   * Runs `download` with the options of image downloads: the address policy, and a dispatcher with
   * this client's proxy and certificates whose direct connections check each name's addresses as they
   * connect (closed afterwards). A dispatcher not made by createDispatcher cannot be rebuilt so: with it,
   * names are checked only before each request.
   */
  private async withDownloads<T>(deadline: Deadline, apiKey: string | undefined, download: (options: DownloadOptions) => Promise<T>): Promise<T> {
    const addresses = new AddressPolicy(this.baseUrl, this.config.lookup);
    const checking = withLookup(this.dispatcher, addresses.lookup);
    try {
      return await download({
        dispatcher: checking ?? this.dispatcher,
        addresses,
        gatewayOrigin: new URL(this.baseUrl).origin,
        ...(apiKey ? { apiKey } : {}),
        signal: deadline.signal,
        timeoutMs: deadline.timeoutMs,
        maxBytes: this.config.maxDownloadBytes,
        userAgent: this.config.userAgent,
        onRequest: ({ address, status, durationMs, error }) =>
          this.log({
            method: 'GET',
            path: address,
            ...(status !== undefined ? { status } : {}),
            durationMs,
            attempt: 1,
            ...(error ? { error: 'download' } : {}),
          }),
      });
    } finally {
      await checking?.destroy().catch(() => undefined);
    }
  }

  /** A free GET, retried a bounded number of times on connection errors, 429 and 5xx. */
  private async getJson(path: string, authorized: boolean, options?: CallOptions): Promise<unknown> {
    const maxRetries = this.config.maxRetries ?? 2;
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      const deadline = new Deadline(this.freeTimeoutMs, options?.signal);
      let status: number | undefined;
      let requestId: string | undefined;
      try {
        const headers = await this.headers(authorized, { accept: 'application/json' }, options?.apiKey);
        deadline.throwIfAborted();
        const response = await request(this.url(path), { method: 'GET', headers, dispatcher: this.dispatcher, signal: deadline.signal });
        status = response.statusCode;
        requestId = requestIdOf(response.headers);
        if (status < 200 || status >= 300) throw await apiErrorOf(response);
        const text = await readText(response.body, MAX_JSON_BODY_BYTES);
        this.log({ method: 'GET', path, status, durationMs: Date.now() - started, requestId, attempt });
        return parseJson(text, path);
      } catch (error) {
        const typed = deadline.translate(error);
        this.log({ method: 'GET', path, status, durationMs: Date.now() - started, requestId, attempt, error: typed.kind });
        const delay = attempt <= maxRetries ? this.retryDelay(typed, attempt) : undefined;
        if (delay === undefined) throw typed;
        await wait(delay, undefined, { signal: options?.signal }).catch(() => {
          throw new CancelledError();
        });
      }
    }
  }

  private retryDelay(error: GatewayError, attempt: number): number | undefined {
    // A certificate that cannot be verified, or a proxy without credentials, fails the same way every time.
    if (error instanceof CertificateError || error instanceof ProxyAuthenticationError) return undefined;
    const retryable = error instanceof ConnectionError || error instanceof TimeoutError || error instanceof ServerError || error instanceof RateLimitedError;
    if (!retryable) return undefined;
    const maxDelay = this.config.maxRetryDelayMs ?? 20_000;
    if (error instanceof RateLimitedError && error.retryAfterMs !== undefined) {
      return error.retryAfterMs <= maxDelay ? error.retryAfterMs : undefined;
    }
    const base = (this.config.retryBaseDelayMs ?? 500) * 2 ** (attempt - 1);
    return Math.min(maxDelay, base / 2 + Math.random() * base);
  }

  private async headers(authorized: boolean, extra: Record<string, string>, apiKey?: string): Promise<Record<string, string>> {
    const headers: Record<string, string> = { 'user-agent': this.config.userAgent ?? 'gateway-images', ...extra };
    if (authorized) {
      const key = (apiKey ?? (await this.config.getApiKey()))?.trim();
      // Without a key the gateway decides; its 401 becomes an AuthenticationError like any other.
      if (key) headers.authorization = `Bearer ${key}`;
    }
    return headers;
  }

  private url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  private log(entry: RequestLogEntry): void {
    try {
      this.config.onRequest?.(entry);
    } catch {
      // A logger must never break a call.
    }
  }
}

/** Provider parameters go at the top level of the body; undefined fields are dropped. */
export function flattenRequest(request: GenerationRequest): Record<string, unknown> {
  const { params, ...fields } = request;
  const flat: Record<string, unknown> = { ...(params ?? {}) };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) flat[name] = value;
  return flat;
}

async function apiErrorOf(response: Dispatcher.ResponseData): Promise<ApiError> {
  let text = '';
  try {
    text = await readText(response.body, MAX_ERROR_BODY_BYTES);
  } catch {
    // An unreadable error body still gives a typed error from the status.
  }
  return classifyApiError(response.statusCode, text, response.headers);
}

/** Reads at most `limit` bytes as UTF-8 and discards the rest. */
async function readText(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) {
      const buf = Buffer.from(chunk as Uint8Array);
      chunks.push(buf.subarray(0, limit - size));
      size += buf.length;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ResponseFormatError(l10n.t("The gateway's answer to {0} is not valid JSON.", path));
  }
}
