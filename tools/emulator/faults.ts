// Fault injection: names, parameters, and the armed-fault queue.
// Armed faults (admin endpoint, CLI, state API) are taken by the next paid requests (the download
// faults: by the next downloads of an image served at an address, see files.ts); faults named in the
// X-Emulator-Fault header apply to that request only, on any endpoint.
import type { IncomingHttpHeaders } from 'node:http';

export const FAULT_NAMES = [
  'latency',
  'slow-headers',
  'drop-mid-body',
  'html-500',
  'html-502',
  'rate-limit',
  'no-media-type',
  'escaped-slashes',
  'media-type-last',
  'usage-first',
  'invalid-base64',
  /** One character that is not base64 ('!') inserted in the middle of one image's text (`imageIndex`, default the last). */
  'stray-character',
  'truncated-json',
  'large',
  'kill',
  'charge-on-disconnect',
  /** The model ignores `background: transparent` and returns an opaque image. */
  'opaque-image',
  /**
   * Once the request body is read, answers `status` (default 500) with `body` and `contentType`
   * (default: a proxy's HTML page for the status): a proxy in front of the gateway, or a gateway that
   * failed before reserving. Nothing is reserved or charged.
   */
  'status',
  /** Like `status`, but the gateway behind goes on, generates and charges: a proxy that gave up waiting (Cloudflare's 524). */
  'status-after-charge',
  /** A download of an image served at an address (the url-images form) is answered 404. */
  'download-404',
  /** A download is answered 200 with an HTML page. */
  'download-html',
  /** A download is answered 200 application/octet-stream with bytes that are no image (a PDF's). */
  'download-not-image',
  /** A download is answered with a GIF, where the answer said image/png. */
  'download-other-type',
  /** A download is a valid PNG padded to `imageBytes` (default 64 MiB), sent chunked (no Content-Length). */
  'download-large',
  /** A download's connection is cut after half its body. */
  'download-drop',
  /** A download sends half its body, then nothing until the client leaves (or `latencyMs`, default 60 s). */
  'download-stall',
] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

/** Faults acting before validation (no reservation, no charge). */
export const FRONT_FAULTS: readonly FaultName[] = ['latency', 'slow-headers', 'html-500', 'html-502', 'rate-limit', 'charge-on-disconnect', 'status'];

/** When an armed fault is taken: as a paid request arrives, as it answers, or as an image at an address is downloaded. */
export type FaultPhase = 'front' | 'body' | 'download';

function phaseOf(fault: FaultName): FaultPhase {
  if (FRONT_FAULTS.includes(fault)) return 'front';
  return fault.startsWith('download-') ? 'download' : 'body';
}

export interface FaultSpec {
  fault: FaultName;
  /** How many paid requests it applies to; -1 = until cleared. Default 1. */
  times?: number;
  latencyMs?: number;
  imageBytes?: number;
  retryAfterSeconds?: number;
  /** The image (0-based) a fault of one image applies to (stray-character). */
  imageIndex?: number;
  /** The answer of the status faults: its status (300 to 599), body and content type. */
  status?: number;
  body?: string;
  contentType?: string;
}

/** The faults in force for one request, with their parameters resolved. */
export interface ActiveFaults {
  names: Set<FaultName>;
  latencyMs?: number;
  imageBytes?: number;
  retryAfterSeconds?: number;
  imageIndex?: number;
  status?: number;
  body?: string;
  contentType?: string;
}

export const DEFAULT_LATENCY_MS = 1000;
export const DEFAULT_SLOW_HEADERS_MS = 60_000;
export const DEFAULT_LARGE_IMAGE_BYTES = 24 * 1024 * 1024;
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

export function isFaultName(value: unknown): value is FaultName {
  return typeof value === 'string' && (FAULT_NAMES as readonly string[]).includes(value);
}

export function emptyFaults(): ActiveFaults {
  return { names: new Set() };
}

/** Checks an admin/CLI fault spec; returns an error message or the normalised spec. */
export function parseFaultSpec(body: unknown): FaultSpec | string {
  if (typeof body !== 'object' || body === null) return 'Body must be a JSON object with a "fault" field.';
  const b = body as Record<string, unknown>;
  if (!isFaultName(b.fault)) return `Unknown fault ${JSON.stringify(b.fault)}. Allowed: ${FAULT_NAMES.join(', ')}.`;
  const spec: FaultSpec = { fault: b.fault, times: 1 };
  if (b.times !== undefined) {
    if (!Number.isInteger(b.times) || ((b.times as number) < 1 && b.times !== -1)) return '"times" must be a positive integer or -1.';
    spec.times = b.times as number;
  }
  for (const field of ['latencyMs', 'imageBytes', 'retryAfterSeconds', 'imageIndex'] as const) {
    const v = b[field];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return `"${field}" must be a non-negative number.`;
    spec[field] = v;
  }
  if (b.status !== undefined) {
    if (!Number.isInteger(b.status) || (b.status as number) < 300 || (b.status as number) > 599) return '"status" must be an integer from 300 to 599.';
    spec.status = b.status as number;
  }
  for (const field of ['body', 'contentType'] as const) {
    const v = b[field];
    if (v === undefined) continue;
    if (typeof v !== 'string') return `"${field}" must be a string.`;
    spec[field] = v;
  }
  return spec;
}

/** Reads X-Emulator-Fault (comma-separated) and its parameter headers. Unknown names are ignored. */
export function faultsFromHeaders(headers: IncomingHttpHeaders): ActiveFaults {
  const active = emptyFaults();
  const raw = headers['x-emulator-fault'];
  const list = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',').map((s) => s.trim());
  for (const name of list) if (isFaultName(name)) active.names.add(name);
  active.latencyMs = numberHeader(headers['x-emulator-latency-ms']);
  active.imageBytes = numberHeader(headers['x-emulator-image-bytes']);
  active.retryAfterSeconds = numberHeader(headers['x-emulator-retry-after']);
  active.imageIndex = numberHeader(headers['x-emulator-image-index']);
  const status = numberHeader(headers['x-emulator-status']);
  if (status !== undefined && Number.isInteger(status) && status >= 300 && status <= 599) active.status = status;
  active.body = stringHeader(headers['x-emulator-body']);
  active.contentType = stringHeader(headers['x-emulator-content-type']);
  return active;
}

function stringHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function numberHeader(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The queue of armed faults. Each entry is consumed separately per phase. */
export class FaultQueue {
  private armed: FaultSpec[] = [];

  arm(spec: FaultSpec): void {
    // Re-arming a fault replaces its previous entry.
    this.armed = this.armed.filter((f) => f.fault !== spec.fault);
    this.armed.push({ ...spec, times: spec.times ?? 1 });
  }

  clear(): void {
    this.armed = [];
  }

  list(): FaultSpec[] {
    return this.armed.map((f) => ({ ...f }));
  }

  /**
   * Takes the armed faults of one phase ('front' ones when a paid request arrives, 'body' ones when
   * it reaches its success response, 'download' ones when an image at an address is downloaded) and
   * merges them into `into`.
   */
  take(phase: FaultPhase, into: ActiveFaults): void {
    for (const spec of this.armed) {
      if (phaseOf(spec.fault) !== phase) continue;
      into.names.add(spec.fault);
      into.latencyMs ??= spec.latencyMs;
      into.imageBytes ??= spec.imageBytes;
      into.retryAfterSeconds ??= spec.retryAfterSeconds;
      into.imageIndex ??= spec.imageIndex;
      into.status ??= spec.status;
      into.body ??= spec.body;
      into.contentType ??= spec.contentType;
      if (spec.times !== -1) spec.times = (spec.times ?? 1) - 1;
    }
    this.armed = this.armed.filter((f) => f.times !== 0);
  }
}
