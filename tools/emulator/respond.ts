// Writing responses: JSON, errors, proxy-style HTML, and chunked streaming of large bodies
// with backpressure. Body faults (kill, drop-mid-body, truncated-json) are applied here.
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { ApiFailure } from './apiError';
import type { ActiveFaults } from './faults';
import { BASE64_INPUT_CHUNK, base64Chunks, base64Length } from './png';
import type { RecordedRequest } from './state';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** The log entry; updated as the request proceeds. */
  entry: RecordedRequest;
  faults: ActiveFaults;
  /** Aborted when the emulator closes. */
  shutdown: AbortSignal;
}

/**
 * A piece of a streamed body: literal JSON text, the base64 of an image given as buffers, text that
 * reports when it has been written, or a pause (nothing is written).
 */
export type Segment = string | ImageSegment | { text: string; onWritten: () => void } | { pauseMs: number };
type ImageSegment = {
  parts: readonly Buffer[];
  escapeSlashes: boolean;
  corrupt: boolean;
  stray?: boolean;
  /** A pause halfway through the image's text, after half its 1 MiB pieces (EmulatorState.midImageGapMs). */
  pauseMidwayMs?: number;
};

/** Where the stray-character fault puts its '!' in a base64 text of `length` characters: the middle. */
export const strayCharacterAt = (length: number): number => Math.floor(length / 2);

const segmentText = (seg: Segment): string | undefined => (typeof seg === 'string' ? seg : 'text' in seg ? seg.text : undefined);

const JSON_TYPE = 'application/json; charset=utf-8';

/** Waits `ms`, ending early on shutdown. Returns false when cut short. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!signal.aborted);
  return new Promise((resolve) => {
    const done = (completed: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(completed);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
  });
}

function writeHead(ctx: RequestContext, status: number, headers: Record<string, string | number>): boolean {
  if (ctx.res.headersSent || ctx.res.destroyed) return false;
  ctx.entry.status = status;
  ctx.res.writeHead(status, headers);
  return true;
}

export function sendError(ctx: RequestContext, failure: ApiFailure, headers: Record<string, string | number> = {}): void {
  const body = failure.body();
  if (writeHead(ctx, failure.status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers })) ctx.res.end(body);
}

/** A proxy's HTML error page (html-500 / html-502 faults). */
export function sendHtml(ctx: RequestContext, status: 500 | 502): void {
  const title = status === 502 ? '502 Bad Gateway' : '500 Internal Server Error';
  const body = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  if (writeHead(ctx, status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) })) ctx.res.end(body);
}

/** Cloudflare's own statuses, which Node does not name. */
const PROXY_REASONS: Record<number, string> = {
  520: 'Web server is returning an unknown error',
  521: 'Web server is down',
  522: 'Connection timed out',
  523: 'Origin is unreachable',
  524: 'A timeout occurred',
};

/** The answer of the status faults: the given body, or a proxy's HTML page for the status. */
export function sendStatus(ctx: RequestContext, faults: Pick<ActiveFaults, 'status' | 'body' | 'contentType'>): void {
  const status = faults.status ?? 500;
  const title = `${status} ${PROXY_REASONS[status] ?? STATUS_CODES[status] ?? 'Error'}`;
  const body = faults.body ?? `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
  const type = faults.contentType ?? (faults.body === undefined ? 'text/html' : isJson(faults.body) ? JSON_TYPE : 'text/plain; charset=utf-8');
  if (writeHead(ctx, status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })) ctx.res.end(body);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A successful JSON answer; honours the body faults named for this request. */
export function sendJson(ctx: RequestContext, value: unknown, status = 200): Promise<void> {
  return streamBody(ctx, status, [JSON.stringify(value)]);
}

function imageLength(seg: ImageSegment): number {
  const bytes = seg.parts.reduce((s, p) => s + p.length, 0);
  let length = base64Length(bytes) + (seg.stray ? 1 : 0);
  if (seg.escapeSlashes) {
    for (const chunk of base64Chunks(seg.parts)) for (let i = chunk.indexOf('/'); i >= 0; i = chunk.indexOf('/', i + 1)) length++;
  }
  return length;
}

function* pieces(seg: ImageSegment): Generator<Buffer> {
  const strayAt = seg.stray ? strayCharacterAt(base64Length(seg.parts.reduce((s, p) => s + p.length, 0))) : -1;
  let first = true;
  /** Base64 characters before this chunk. */
  let at = 0;
  for (let chunk of base64Chunks(seg.parts)) {
    const length = chunk.length;
    if (seg.corrupt && first) chunk = corrupt(chunk);
    if (strayAt >= at && strayAt < at + length) chunk = `${chunk.slice(0, strayAt - at)}!${chunk.slice(strayAt - at)}`;
    at += length;
    first = false;
    yield Buffer.from(seg.escapeSlashes ? chunk.replaceAll('/', '\\/') : chunk, 'latin1');
  }
}

/** Puts '!' characters into the base64 text without changing its length. */
function corrupt(chunk: string): string {
  const chars = chunk.split('');
  for (const at of [8, 9, Math.floor(chars.length / 2)]) if (at < chars.length) chars[at] = '!';
  return chars.join('');
}

/** Resolves once `res` can take more, or is gone. */
export function drain(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Ends the connection after what was written has been flushed (FIN, then destroy). */
function cutConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  socket.end();
  setTimeout(() => socket.destroy(), 100).unref();
}

/**
 * Streams a body made of segments, 1 MiB at a time, waiting for 'drain'. Content-Length is exact.
 * kill: headers only, then the connection is cut; drop-mid-body: about half, then cut;
 * truncated-json: about half with a matching Content-Length, ended cleanly.
 */
export async function streamBody(ctx: RequestContext, status: number, segments: readonly Segment[]): Promise<void> {
  const { res, faults } = ctx;
  const lengthOf = (seg: Segment) => {
    const text = segmentText(seg);
    if (text !== undefined) return Buffer.byteLength(text);
    return typeof seg !== 'string' && 'parts' in seg ? imageLength(seg) : 0;
  };
  const total = segments.reduce((s, seg) => s + lengthOf(seg), 0);
  const faulty = status < 300;
  const truncated = faulty && faults.names.has('truncated-json');
  const dropped = faulty && faults.names.has('drop-mid-body');
  const limit = truncated || dropped ? Math.max(1, Math.floor(total / 2)) : total;
  if (!writeHead(ctx, status, { 'content-type': JSON_TYPE, 'content-length': truncated ? limit : total })) return;
  if (faulty && faults.names.has('kill')) {
    res.flushHeaders();
    cutConnection(res);
    return;
  }
  let written = 0;
  /** Writes what fits under the limit; 'whole' when all of `piece` went out, 'more' when the body goes on. */
  const write = async (piece: Buffer): Promise<{ whole: boolean; more: boolean }> => {
    const text = written + piece.length > limit ? piece.subarray(0, limit - written) : piece;
    if (res.destroyed) return { whole: false, more: false };
    if (text.length && !res.write(text)) await drain(res);
    written += text.length;
    return { whole: text.length === piece.length && !res.destroyed, more: written < limit && !res.destroyed };
  };
  segments: for (const seg of segments) {
    if (typeof seg !== 'string' && 'pauseMs' in seg) {
      if (!(await sleep(seg.pauseMs, ctx.shutdown)) || res.destroyed) return;
      continue;
    }
    const text = segmentText(seg);
    if (text !== undefined) {
      const { whole, more } = await write(Buffer.from(text, 'utf8'));
      if (whole) (seg as { onWritten?: () => void }).onWritten?.();
      if (!more) break;
      continue;
    }
    const image = seg as ImageSegment;
    const bytes = image.parts.reduce((n, p) => n + p.length, 0);
    const pauseAfter = image.pauseMidwayMs ? Math.max(1, Math.floor(Math.ceil(bytes / BASE64_INPUT_CHUNK) / 2)) : 0;
    let written = 0;
    for (const piece of pieces(image)) {
      if (!(await write(piece)).more) break segments;
      if (++written === pauseAfter && (!(await sleep(image.pauseMidwayMs!, ctx.shutdown)) || res.destroyed)) return;
    }
  }
  if (res.destroyed) return;
  if (dropped) {
    cutConnection(res);
    return;
  }
  res.end();
}
