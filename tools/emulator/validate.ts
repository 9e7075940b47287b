// Validation of generation and edit requests, following the spec's error table.
import { createHash } from 'node:crypto';
import { OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from './wire';
import { ApiFailure, badRequest } from './apiError';
import { PASSTHROUGH_VALUES, findImageModel, type EmulatorImageModel } from './catalog';

export const MAX_FILE_BYTES = 25 * 1024 * 1024;
const SPEC_MAX_N = 10;

const KNOWN_FIELDS = new Set([
  'model',
  'prompt',
  'n',
  'resolution',
  'aspect_ratio',
  'size',
  'quality',
  'output_format',
  'background',
  'output_compression',
  'seed',
  'input_references',
]);

/** A request as received: JSON values, or the text fields and files of a form. */
export interface RawImageRequest {
  endpoint: 'generations' | 'edits';
  fields: Record<string, unknown>;
  /** Form fields are text: numbers arrive as digit strings. */
  fromForm: boolean;
  /** Files of `image` / `image[]` (edits endpoint). */
  files: Buffer[];
}

export interface ValidImageRequest {
  model: EmulatorImageModel;
  prompt: string;
  n: number;
  resolution?: string;
  aspect_ratio?: string;
  size?: string;
  quality?: string;
  background?: string;
  seed?: number;
  editing: boolean;
  /** Digest of all reference images/URLs, '' when not editing. */
  referencesDigest: string;
  passthrough: Record<string, string>;
}

export function isImageBytes(b: Buffer): boolean {
  const png = b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a;
  const jpeg = b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
  const webp = b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP';
  return png || jpeg || webp;
}

/** Returns the validated request or throws an ApiFailure. */
export function validateImageRequest(raw: RawImageRequest): ValidImageRequest {
  const f = raw.fields;
  const present = (name: string) => f[name] !== undefined && f[name] !== null;

  if (!present('model') || typeof f.model !== 'string' || f.model.trim() === '') {
    throw badRequest('missing_required_parameter', 'The "model" field is required: a model ID from the images catalog.', 'model');
  }
  const model = findImageModel(f.model);
  if (!model) {
    const hint = f.model.includes('/') ? ' Model IDs carry no provider prefix.' : '';
    throw new ApiFailure(404, 'model_not_found', `The model "${f.model}" does not exist.${hint} See GET /public/gateway/models/images.`, 'model');
  }

  for (const name of Object.keys(f)) {
    if (KNOWN_FIELDS.has(name) || model.allowed_passthrough_parameters.includes(name)) continue;
    if (raw.fromForm && (name === 'image' || name === 'image[]')) {
      throw badRequest('invalid_value', `"${name}" must be sent as a file.`, name);
    }
    const allowed = model.allowed_passthrough_parameters.length
      ? ` Provider parameters allowed for ${model.id}: ${model.allowed_passthrough_parameters.join(', ')}.`
      : '';
    throw badRequest('unknown_parameter', `Unknown parameter "${name}".${allowed}`, name);
  }

  if (!present('prompt') || typeof f.prompt !== 'string' || f.prompt.trim() === '') {
    throw badRequest('missing_required_parameter', 'The "prompt" field is required and must be a non-empty string.', 'prompt');
  }

  const maxN = Math.min(model.max_n, SPEC_MAX_N);
  const n = present('n') ? integerField(raw, 'n') : 1;
  if (n === undefined || n < 1 || n > maxN) {
    throw badRequest('invalid_value', `"n" must be an integer from 1 to ${maxN} for ${model.id}.`, 'n');
  }

  const resolution = capabilityField(f, 'resolution', model.supported_resolutions, model);
  const aspect_ratio = capabilityField(f, 'aspect_ratio', model.supported_aspect_ratios, model);
  const background = capabilityField(f, 'background', model.supported_background, model);

  let size: string | undefined;
  if (present('size')) {
    const v = f.size;
    const tier = typeof v === 'string' && /^[1-9]\d*K$/.test(v);
    const pixels = typeof v === 'string' && /^[1-9]\d*x[1-9]\d*$/.test(v);
    if (!(tier || pixels || v === 'auto')) {
      throw badRequest(
        'invalid_value',
        `"size" must be a tier label such as 2K, <WIDTH>x<HEIGHT> with the Latin letter x (for example 1024x768), or auto; got ${JSON.stringify(v)}.`,
        'size',
      );
    }
    if (pixels && (resolution !== undefined || aspect_ratio !== undefined)) {
      throw badRequest('conflicting_parameters', 'An explicit pixel "size" cannot be combined with "resolution" or "aspect_ratio".', 'size');
    }
    size = v;
  }

  const quality = enumField(f, 'quality', QUALITY_VALUES);
  enumField(f, 'output_format', OUTPUT_FORMAT_VALUES);

  let seed: number | undefined;
  if (present('seed')) {
    seed = integerField(raw, 'seed');
    if (seed === undefined) throw badRequest('invalid_value', '"seed" must be an integer.', 'seed');
  }
  if (present('output_compression')) {
    const c = integerField(raw, 'output_compression');
    if (c === undefined || c < 0 || c > 100) throw badRequest('invalid_value', '"output_compression" must be an integer from 0 to 100.', 'output_compression');
  }

  const passthrough: Record<string, string> = {};
  for (const name of model.allowed_passthrough_parameters) {
    if (!present(name)) continue;
    const allowed = PASSTHROUGH_VALUES[name];
    if (allowed && !allowed.includes(f[name] as string)) {
      throw badRequest('invalid_value', `"${name}" must be one of: ${allowed.join(', ')}.`, name);
    }
    passthrough[name] = String(f[name]);
  }

  const references = referenceDigests(raw, model);
  if (!references.length && raw.endpoint === 'edits') {
    throw badRequest('missing_required_parameter', 'The edits endpoint needs at least one file in "image" or "image[]".', 'image');
  }
  if (!references.length && !model.supports_generation) {
    throw badRequest(
      'generation_not_supported',
      `The model ${model.id} only edits images: send reference images (input_references, or the edits endpoint).`,
      'model',
    );
  }

  return {
    model,
    prompt: f.prompt,
    n,
    resolution,
    aspect_ratio,
    size,
    quality,
    background,
    seed: model.supports_seed ? seed : undefined, // ignored by models without seed support
    editing: references.length > 0,
    referencesDigest: references.length ? createHash('sha256').update(references.join(',')).digest('hex') : '',
    passthrough,
  };
}

/** An integer from JSON (a number) or from a form (a digit string); undefined when not one. */
function integerField(raw: RawImageRequest, name: string): number | undefined {
  const v = raw.fields[name];
  const n = typeof v === 'number' ? v : raw.fromForm && typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

function capabilityField(f: Record<string, unknown>, name: string, allowed: readonly string[], model: EmulatorImageModel): string | undefined {
  const v = f[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v)) {
    throw badRequest('unsupported_value', `"${name}" ${JSON.stringify(v)} is not supported by ${model.id}. Allowed: ${allowed.join(', ') || 'none'}.`, name);
  }
  return v;
}

function enumField(f: Record<string, unknown>, name: string, allowed: readonly string[]): string | undefined {
  const v = f[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v)) {
    throw badRequest('invalid_value', `"${name}" must be one of: ${allowed.join(', ')}; got ${JSON.stringify(v)}.`, name);
  }
  return v;
}

/** Checks files and input_references against the model; returns one digest per reference. */
function referenceDigests(raw: RawImageRequest, model: EmulatorImageModel): string[] {
  let refs: unknown = raw.fields.input_references;
  if (raw.fromForm && typeof refs === 'string') {
    try {
      refs = JSON.parse(refs);
    } catch {
      throw badRequest('invalid_value', '"input_references" in a form must be a JSON array of reference objects.', 'input_references');
    }
  }
  if (refs !== undefined && refs !== null && !Array.isArray(refs)) {
    throw badRequest('invalid_value', '"input_references" must be an array of {"type":"image_url","image_url":{"url":...}} objects.', 'input_references');
  }
  const list = (refs as unknown[] | undefined | null) ?? [];
  const count = list.length + raw.files.length;
  if (count === 0) return [];
  const param = raw.files.length ? 'image' : 'input_references';
  if (!model.supports_edit || model.max_input_references === 0) {
    throw badRequest('edit_not_supported', `${model.id} does not support editing, so "${param}" cannot be used. Choose a model with supports_edit.`, param);
  }
  if (count > model.max_input_references) {
    throw badRequest(
      'too_many_input_references',
      `${model.id} accepts at most ${model.max_input_references} reference image(s) in "${param}"; got ${count}.`,
      param,
    );
  }
  const digests = raw.files.map((file, i) => checkImageBytes(file, 'image', `image file ${i + 1}`));
  list.forEach((ref, i) => digests.push(checkReference(ref, i)));
  return digests;
}

function checkImageBytes(bytes: Buffer, param: string, label: string): string {
  if (bytes.length > MAX_FILE_BYTES) {
    throw new ApiFailure(413, 'file_too_large', `${label} is ${bytes.length} bytes; the limit is ${MAX_FILE_BYTES} bytes (25 MB).`, param);
  }
  if (!isImageBytes(bytes)) throw badRequest('invalid_image', `${label} is not a PNG, JPEG or WebP image.`, param);
  return createHash('sha256').update(bytes).digest('hex');
}

function checkReference(ref: unknown, i: number): string {
  const param = 'input_references';
  const shape = `input_references[${i}] must be {"type":"image_url","image_url":{"url":"data:... or https://..."}}.`;
  if (typeof ref !== 'object' || ref === null) throw badRequest('invalid_value', shape, param);
  const r = ref as Record<string, unknown>;
  const imageUrl = r.image_url as Record<string, unknown> | undefined;
  if (r.type !== 'image_url' || typeof imageUrl !== 'object' || imageUrl === null || typeof imageUrl.url !== 'string') {
    throw badRequest('invalid_value', shape, param);
  }
  const url = imageUrl.url;
  if (url.startsWith('data:')) {
    const m = /^data:([^;,]*)((?:;[^;,]*)*),/.exec(url.slice(0, 256));
    if (!m || !m[2]!.split(';').includes('base64'))
      throw badRequest('invalid_value', `input_references[${i}]: a data: URL must be base64 (data:image/png;base64,...).`, param);
    if (m[1] && !m[1].toLowerCase().startsWith('image/'))
      throw badRequest('invalid_image', `input_references[${i}]: the data: URL is ${m[1]}, not an image.`, param);
    const b64 = url.slice(m[0].length);
    if (b64.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
      throw badRequest('invalid_value', `input_references[${i}]: the data: URL does not hold valid base64.`, param);
    }
    return checkImageBytes(Buffer.from(b64, 'base64'), param, `input_references[${i}]`);
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw badRequest('invalid_value', `input_references[${i}]: the url must be a data: URL or an http(s) address.`, param);
  }
  return createHash('sha256').update(url).digest('hex');
}
