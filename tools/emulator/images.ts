// POST /v1/images/generations and /v1/images/edits: parse, validate, reserve, generate, charge, stream.
import { createHash } from 'node:crypto';
import { ApiFailure, badRequest } from './apiError';
import { DEFAULT_LARGE_IMAGE_BYTES, DEFAULT_LATENCY_MS } from './faults';
import { filePath } from './files';
import { inkscapeSvg } from './forms';
import { kopToRub, rubToKop, type KeyState } from './keys';
import { multipartBoundary, parseMultipart } from './multipart';
import { paddedPngParts } from './png';
import { encodeAs, encodedFormat, mediaTypeOf } from './formats';
import { pixelSize, renderImage } from './render';
import { sendStatus, sleep, streamBody, type RequestContext, type Segment } from './respond';
import type { EmulatorState } from './state';
import { validateImageRequest, type RawImageRequest, type ValidImageRequest } from './validate';

export interface ImageHandlerOptions {
  state: EmulatorState;
  /** Baseline "generation time" of every paid request. */
  latencyMs: number;
  /** The full address an image served at `path` has (url-images: this origin, or the other one). */
  addressOf: (path: string) => Promise<string>;
}

export function parseImageBody(endpoint: 'generations' | 'edits', contentType: string | undefined, body: Buffer): RawImageRequest {
  if (endpoint === 'generations') {
    let fields: unknown;
    try {
      fields = JSON.parse(body.toString('utf8'));
    } catch {
      throw badRequest('invalid_json', 'The request body is not valid JSON.');
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw badRequest('invalid_json', 'The request body must be a JSON object.');
    return { endpoint, fields: fields as Record<string, unknown>, fromForm: false, files: [] };
  }
  const boundary = multipartBoundary(contentType);
  if (!boundary) throw badRequest('invalid_content_type', 'The edits endpoint takes multipart/form-data with a boundary.');
  let parts;
  try {
    parts = parseMultipart(body, boundary);
  } catch (error) {
    throw badRequest('invalid_multipart', `The multipart body is malformed: ${(error as Error).message}`);
  }
  const fields: Record<string, unknown> = {};
  const files: Buffer[] = [];
  for (const part of parts) {
    if (part.filename === undefined) fields[part.name] = part.data.toString('utf8');
    else if (part.name === 'image' || part.name === 'image[]') files.push(part.data);
    else throw badRequest('unknown_parameter', `Unknown file field "${part.name}". Send images in "image" or "image[]".`, part.name);
  }
  return { endpoint, fields, fromForm: true, files };
}

/** Deterministic per-image price between min and max, from the prompt hash, in kopecks. */
export function pricePerImageKop(request: Pick<ValidImageRequest, 'model' | 'prompt'>): number {
  const minKop = rubToKop(request.model.min_price_per_image);
  const maxKop = rubToKop(request.model.max_price_per_image);
  const frac = createHash('sha256').update(`${request.model.id}\u0000${request.prompt}`).digest().readUInt32BE(0) / 2 ** 32;
  return minKop + Math.round((maxKop - minKop) * frac);
}

export async function handleImages(ctx: RequestContext, opts: ImageHandlerOptions, key: KeyState, raw: RawImageRequest): Promise<void> {
  const { state } = opts;
  const request = validateImageRequest(raw);
  // The moderation-403 form: refused before anything is reserved, in the gateway's own words.
  if (state.forms.has('moderation-403') && /\bblocked\b/i.test(request.prompt)) {
    throw new ApiFailure(
      403,
      'content_policy_violation',
      'Your request was rejected by the safety system: the prompt is not allowed.',
      'prompt',
      'moderation_error',
    );
  }
  const { model: m, editing: _e, ...asked } = request;
  ctx.entry.prompt = request.prompt;
  ctx.entry.fingerprint = createHash('sha256')
    .update(JSON.stringify({ model: m.id, ...asked }))
    .digest('hex')
    .slice(0, 32);
  const reserveKop = rubToKop(request.model.max_price_per_image) * request.n;
  const reserved = state.reserve(key, reserveKop);
  if (!reserved.ok) {
    const what = reserved.scope === 'balance' ? 'account balance' : 'key budget';
    const message = `Insufficient ${what}: this request reserves ${kopToRub(reserved.neededKop).toFixed(2)} RUB (max price ${request.model.max_price_per_image.toFixed(2)} x ${request.n}), the ${what} is ${kopToRub(reserved.availableKop).toFixed(2)} RUB.`;
    throw new ApiFailure(402, reserved.scope === 'balance' ? 'insufficient_balance' : 'insufficient_budget', message);
  }
  const reservation = reserved.reservation;
  ctx.entry.reservedRub = kopToRub(reserveKop);

  // "Generation": the provider's time. A client that hangs up before the answer starts cancels the
  // provider call and the reservation is returned, unless `charge-on-disconnect` models a gateway
  // that charges anyway.
  const delay = opts.latencyMs + (ctx.faults.names.has('latency') ? (ctx.faults.latencyMs ?? DEFAULT_LATENCY_MS) : 0);
  const { width, height } = pixelSize(request.model, request);
  const chargeAnyway = ctx.faults.names.has('charge-on-disconnect');
  const clientGone = new AbortController();
  ctx.res.on('close', () => {
    if (!ctx.res.writableFinished) clientGone.abort();
  });
  let pngs: Buffer[];
  const input = {
    model: request.model,
    prompt: request.prompt,
    seed: request.seed,
    width,
    height,
    transparent: request.background === 'transparent',
    referencesDigest: request.referencesDigest,
    extra: JSON.stringify([request.quality ?? '', request.passthrough]),
  };
  try {
    const finished = await sleep(delay, chargeAnyway ? ctx.shutdown : AbortSignal.any([ctx.shutdown, clientGone.signal]));
    if (!finished) throw new Error(ctx.shutdown.aborted ? 'emulator closing' : 'client disconnected');
    const svg = state.forms.has('svg-prolog') && raw.fields.output_format === 'svg';
    pngs = Array.from({ length: request.n }, (_, i) =>
      svg ? inkscapeSvg(width, height, `#${createHash('sha256').update(`${request.prompt}\u0000${i}`).digest('hex').slice(0, 6)}`) : renderImage(input, i),
    );
    // A model that applies output_format answers in that format.
    const format = encodedFormat(request.model, raw.fields.output_format);
    if (format) pngs = await Promise.all(pngs.map((png) => encodeAs(format, png)));
  } catch (error) {
    state.release(reservation);
    ctx.entry.settledAt = new Date().toISOString();
    throw error;
  }

  state.faults.take('body', ctx.faults);
  if (ctx.faults.names.has('opaque-image') && input.transparent) pngs = pngs.map((_, i) => renderImage({ ...input, transparent: false }, i));
  ctx.entry.faults = [...ctx.faults.names];
  // The binary-edits form returns one image: only that one is charged.
  const binary = raw.endpoint === 'edits' && state.forms.has('binary-edits');
  const costKop = pricePerImageKop(request) * (binary ? 1 : request.n);
  state.charge(reservation, costKop, request.model.id);
  ctx.entry.chargedRub = kopToRub(costKop);
  ctx.entry.settledAt = new Date().toISOString();
  // Charged, but what answers the client is the proxy in front, which gave up waiting.
  if (ctx.faults.names.has('status-after-charge')) return sendStatus(ctx, ctx.faults);

  if (binary) {
    const image = pngs[0]!; // validate() keeps n in 1..maxN, so there is always a first image
    const type = image[0] === 0x89 ? 'image/png' : 'image/svg+xml';
    ctx.entry.status = 200;
    ctx.res.writeHead(200, { 'content-type': type, 'content-length': image.length }).end(image);
    return;
  }
  const usage = { cost_rub: kopToRub(costKop), balance: state.balanceRub };
  if (state.forms.has('url-images')) {
    // The previous API version's form: each image at an address this emulator serves until the next reset.
    const data = [];
    for (const [i, image] of pngs.entries()) {
      const mediaType = image[0] === 0x89 ? 'image/png' : 'image/svg+xml';
      const path = filePath(ctx.entry.id, i, mediaType);
      state.files.set(path, { bytes: image, mediaType });
      data.push({ url: await opts.addressOf(path), media_type: mediaType });
    }
    await streamBody(ctx, 200, [JSON.stringify({ created: Math.floor(Date.now() / 1000), model: request.model.id, data, usage })]);
    return;
  }
  if (raw.endpoint === 'edits' && state.forms.has('url-edits')) {
    // Addresses on a reserved name that never resolves: paid images nobody can download.
    const data = pngs.map((_, i) => ({ url: `https://images.gateway.example/${ctx.entry.id}/${i}.png` }));
    await streamBody(ctx, 200, [JSON.stringify({ created: Math.floor(Date.now() / 1000), data, usage })]);
    return;
  }
  const mediaType = state.forms.has('svg-prolog') && raw.fields.output_format === 'svg' ? '' : undefined;
  const stringUsage = state.forms.has('string-usage');
  await streamBody(ctx, 200, responseSegments(ctx, request.model.id, pngs, kopToRub(costKop), state, { mediaType, stringUsage }));
}

function responseSegments(
  ctx: RequestContext,
  model: string,
  pngs: Buffer[],
  costRub: number,
  state: EmulatorState,
  form: { mediaType?: string; stringUsage?: boolean } = {},
): Segment[] {
  const { balanceRub, defaultImageBytes, imageGapMs, headGapMs, midImageGapMs, forms } = state;
  const f = ctx.faults.names;
  const padTo = f.has('large') ? (ctx.faults.imageBytes ?? defaultImageBytes ?? DEFAULT_LARGE_IMAGE_BYTES) : 0;
  const figures = form.stringUsage ? { cost_rub: costRub.toFixed(2), balance: balanceRub.toFixed(2) } : { cost_rub: costRub, balance: balanceRub };
  const usage = `"usage":${JSON.stringify(figures)}`;
  const envelope = forms.has('unknown-envelope');
  const asUrl = forms.has('data-url-url');
  const withMediaType = !(f.has('no-media-type') || form.mediaType === '' || asUrl);
  const segments: Segment[] = [`{"created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)},`];
  if (envelope) segments[0] = `{"id":${JSON.stringify(ctx.entry.id)},"created":${Math.floor(Date.now() / 1000)},`;
  if (headGapMs > 0) segments.push({ pauseMs: headGapMs });
  if (f.has('usage-first')) segments.push(`${usage},`);
  segments.push(envelope ? '"output":[' : '"data":[');
  const strayIn = f.has('stray-character') ? (ctx.faults.imageIndex ?? pngs.length - 1) : -1;
  pngs.forEach((png, i) => {
    const parts = padTo ? paddedPngParts(png, padTo) : [png];
    const escapeSlashes = f.has('escaped-slashes');
    const image: Segment = { parts, escapeSlashes, corrupt: f.has('invalid-base64'), stray: i === strayIn, pauseMidwayMs: midImageGapMs };
    const mediaType = withMediaType ? `"media_type":"${mediaTypeOf(png)}"` : '';
    const before = f.has('media-type-last') || !mediaType ? '' : `${mediaType},`;
    const after = f.has('media-type-last') && mediaType ? `,${mediaType}` : '';
    if (i && imageGapMs > 0) segments.push({ pauseMs: imageGapMs });
    let closing: Segment = `"${after}}`;
    if (state.recordImages) {
      const hash = createHash('sha256');
      for (const part of parts) hash.update(part);
      const sent = { index: i, sha256: hash.digest('hex'), bytes: parts.reduce((n, p) => n + p.length, 0), delivered: false };
      (ctx.entry.images ??= []).push(sent);
      // Delivered once the closing quote is out; corrupt base64 is never a deliverable image.
      closing = { text: closing, onWritten: () => void (sent.delivered = !f.has('invalid-base64') && i !== strayIn) };
    }
    const type = mediaTypeOf(png);
    const dataUrl = forms.has('data-url-b64') || asUrl ? `data:${escapeSlashes ? type.replace('/', '\\/') : type};base64,` : '';
    const opening = envelope ? `{"type":"image","mime_type":"${type}","image_base64":"` : `{${before}"${asUrl ? 'url' : 'b64_json'}":"${dataUrl}`;
    segments.push(`${i ? ',' : ''}${opening}`, image, closing);
  });
  segments.push(']');
  if (!f.has('usage-first')) segments.push(`,${usage}`);
  segments.push('}');
  return segments;
}
