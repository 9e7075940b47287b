// The emulator's HTTP server: routing, front faults, and the start/close API others depend on.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiFailure } from './apiError';
import { inRussian, type FormName } from './forms';
import { DEFAULT_LATENCY_MS, DEFAULT_RETRY_AFTER_SECONDS, DEFAULT_SLOW_HEADERS_MS, emptyFaults, faultsFromHeaders, type FaultSpec } from './faults';
import { OtherOrigin, serveFile } from './files';
import { handleImages, parseImageBody } from './images';
import { DEMO_KEYS } from './keys';
import { sendError, sendHtml, sendStatus, sleep, type RequestContext } from './respond';
import { authenticate, handleAccount, handleAdmin, handleCatalog, isAccountPath } from './routes';
import { EmulatorState, type RecordedRequest } from './state';

export { DEMO_KEYS } from './keys';
export { EmulatorState, type RecordedDownload, type RecordedRequest } from './state';
export { FAULT_NAMES, type FaultName, type FaultSpec } from './faults';
export { FORM_NAMES, type FormName } from './forms';

export interface EmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Baseline generation time of every paid request, in ms. Default 0. */
  latencyMs?: number;
  /** Initial account balance in rubles. Default 5000. */
  balance?: number;
  /** No per-request log lines on stderr. Default true; the CLI passes false. */
  quiet?: boolean;
  /** Padding size of the `large` fault when not given with the fault. Default 24 MiB. */
  imageBytes?: number;
  /** Faults armed at start and again on every reset (the CLI's --fault, armed until cleared). */
  faults?: FaultSpec[];
  /** Answer forms in force at start and after every reset (see forms.ts). */
  forms?: FormName[];
}

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:43123 (no trailing slash). */
  url: string;
  port: number;
  keys: typeof DEMO_KEYS;
  /** In-process access to the same data as the admin endpoints. */
  state: EmulatorState;
  close(): Promise<void>;
}

/** Whole request bodies are buffered; beyond this they are refused with 413. */
const MAX_BODY_BYTES = 320 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > MAX_BODY_BYTES) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? 'too-large' : Buffer.concat(chunks, size)));
    req.on('error', reject);
    // A client that disconnects mid-upload never sends 'end'.
    req.on('close', () => {
      if (!req.complete) reject(new Error('The client closed the connection during the upload.'));
    });
  });
}

function normalisePath(rawUrl: string | undefined): string {
  const path = new URL(rawUrl ?? '/', 'http://emulator').pathname;
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const state = new EmulatorState(options.balance ?? 5000);
  state.defaultImageBytes = options.imageBytes;
  state.initialFaults = options.faults ?? [];
  state.initialForms = options.forms ?? [];
  state.reset();
  const latencyMs = options.latencyMs ?? 0;
  const shutdown = new AbortController();
  let adminCounter = 0;
  const otherOrigin = new OtherOrigin(state, options.host ?? '127.0.0.1', shutdown.signal);
  /** Where an image of an answer is served (url-images): this origin, or the second port's. */
  const addressOf = async (path: string): Promise<string> => `${state.forms.has('url-other-origin') ? await otherOrigin.url() : url}${path}`;

  async function route(ctx: RequestContext, path: string, body: Buffer): Promise<void> {
    const { req, faults } = ctx;
    // Front faults: a proxy or rate limiter answering before the gateway does anything.
    if (faults.names.has('html-500') || faults.names.has('html-502')) return sendHtml(ctx, faults.names.has('html-502') ? 502 : 500);
    if (faults.names.has('status')) return sendStatus(ctx, faults);
    if (faults.names.has('rate-limit')) {
      const seconds = faults.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
      return sendError(ctx, new ApiFailure(429, 'rate_limit_exceeded', `Too many requests. Retry after ${seconds} s.`), {
        'retry-after': String(Math.ceil(seconds)),
      });
    }
    if (faults.names.has('slow-headers')) {
      // Stop waiting as soon as the client gives up, so no timer outlives the test.
      const gone = new AbortController();
      const abort = () => gone.abort();
      ctx.res.once('close', abort);
      shutdown.signal.addEventListener('abort', abort, { once: true });
      await sleep(faults.latencyMs ?? DEFAULT_SLOW_HEADERS_MS, gone.signal);
      shutdown.signal.removeEventListener('abort', abort);
      return sendError(ctx, new ApiFailure(504, 'upstream_timeout', 'The provider did not answer in time. Nothing was charged.'));
    }
    if (faults.names.has('latency') && !ctx.entry.paid) await sleep(faults.latencyMs ?? DEFAULT_LATENCY_MS, shutdown.signal);

    if (path.startsWith('/files/')) {
      ctx.entry.status = await serveFile(req, ctx.res, state, 'gateway', shutdown.signal);
      return;
    }
    if (path === '/public/gateway/models' || path.startsWith('/public/gateway/models/')) {
      if (req.method !== 'GET') throw new ApiFailure(405, 'method_not_allowed', `${req.method} is not allowed here; use GET.`);
      return handleCatalog(ctx, path);
    }
    if (!path.startsWith('/v1/')) throw new ApiFailure(404, 'not_found', `No route ${req.method} ${path}.`);
    const key = authenticate(ctx, state);
    if (isAccountPath(path)) {
      if (req.method !== 'GET') throw new ApiFailure(405, 'method_not_allowed', `${req.method} is not allowed here; use GET.`);
      return handleAccount(ctx, state, key, path);
    }
    if (path === '/v1/images/generations' || path === '/v1/images/edits') {
      if (req.method !== 'POST') throw new ApiFailure(405, 'method_not_allowed', `${req.method} is not allowed here; use POST.`);
      const endpoint = path.endsWith('edits') ? 'edits' : 'generations';
      return handleImages(ctx, { state, latencyMs, addressOf }, key, parseImageBody(endpoint, req.headers['content-type'], body));
    }
    throw new ApiFailure(404, 'not_found', `No route ${req.method} ${path}.`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = normalisePath(req.url);
    const admin = path.startsWith('/__emulator/');
    const paid = req.method === 'POST' && (path === '/v1/images/generations' || path === '/v1/images/edits');
    const entry: RecordedRequest = admin
      ? {
          id: `req_admin_${(++adminCounter).toString(16)}`,
          method: req.method ?? '',
          path,
          status: 0,
          paid: false,
          reservedRub: 0,
          chargedRub: 0,
          faults: [],
          at: new Date().toISOString(),
        }
      : state.record(req.method ?? '', path, paid);
    const faults = admin ? emptyFaults() : faultsFromHeaders(req.headers);
    if (paid) state.faults.take('front', faults);
    entry.faults = [...faults.names];
    const ctx: RequestContext = { req, res, entry, faults, shutdown: shutdown.signal };
    res.setHeader('x-request-id', entry.id);
    res.on('close', () => {
      if (!res.writableFinished) entry.clientAborted = true;
    });
    // A client that hangs up with a FIN leaves the response open (half-close): treat it as gone, as a
    // gateway would notice at its next write, so nothing is "sent" into the void and counted as delivered.
    const socket = req.socket;
    const onClientEnd = () => {
      if (!res.writableFinished) res.destroy();
    };
    socket.once('end', onClientEnd);
    res.once('close', () => socket.off('end', onClientEnd));
    if (options.quiet === false && !admin)
      res.on('close', () =>
        console.error(
          `${entry.method} ${entry.path} -> ${entry.status}${entry.faults.length ? ` [${entry.faults.join(',')}]` : ''}${entry.chargedRub ? ` charged ${entry.chargedRub}` : ''}`,
        ),
      );

    try {
      const body = await readBody(req);
      if (body === 'too-large') {
        res.setHeader('connection', 'close');
        throw new ApiFailure(413, 'request_too_large', `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
      }
      if (admin) await handleAdmin(ctx, state, req, path, body);
      else await route(ctx, path, body);
    } catch (error) {
      if (error instanceof ApiFailure) return sendError(ctx, state.forms.has('ru-errors') && !admin ? inRussian(error) : error);
      if (res.destroyed || !req.complete) return; // the client went away: nobody to answer
      if (!shutdown.signal.aborted) console.error('gateway emulator: internal error', error);
      sendError(ctx, new ApiFailure(500, 'internal_error', `Emulator error: ${(error as Error)?.message ?? String(error)}`));
    }
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  let closed: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    keys: DEMO_KEYS,
    state,
    close() {
      closed ??= new Promise<void>((resolve) => {
        shutdown.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => otherOrigin.close());
      return closed;
    },
  };
}
