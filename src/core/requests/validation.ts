// Checks a request against the chosen model's catalog entry with the spec's rules, before any
// money is reserved. Every issue names the field and what is allowed.
import { canEdit } from '../gateway/catalog';
import { type LocalRefusalKind, ValidationError } from '../gateway/errors';
import * as l10n from '@vscode/l10n';
import { transparencyIssue } from './transparency';
import { STANDARD_FIELDS } from './requestFields';
import { type GenerationRequest, type ImageModel, OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from '../gateway/types';
import { trPlural } from '../common/plural';

export interface ValidationIssue {
  field: string;
  message: string;
  allowed?: readonly (string | number)[];
  /** The error kind of this cause when it is not plain 'validation' (the gateway's kind for it). */
  kind?: LocalRefusalKind;
}

export interface ValidationContext {
  /** The catalog of image models; the request's model must be one of them. */
  models: readonly ImageModel[];
  /** How many reference images come with the request (data: URLs or uploaded files). */
  referenceCount?: number;
}

const PIXEL_SIZE = /^(\d{1,5})x(\d{1,5})$/;
const TIER_LABEL = /^[1-9]\d?K$/;
/** Cyrillic х/Х, ×, * and similar look-alikes people type between width and height. */
const LOOKALIKE_X = /^\d{1,5}\s*[хХ×*✕xX]\s*\d{1,5}$/;

/** All issues of a request (empty when it is valid). The studio shows them live. */
export function collectIssues(request: GenerationRequest, context: ValidationContext): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (field: string, message: string, allowed?: readonly (string | number)[], kind?: LocalRefusalKind) =>
    issues.push({ field, message, allowed, ...(kind ? { kind } : {}) });

  const modelId = typeof request.model === 'string' ? request.model.trim() : '';
  const model = context.models.find((m) => m.id === modelId);
  if (!modelId) {
    add(
      'model',
      l10n.t('Choose a model: "model" is required.'),
      context.models.map((m) => m.id),
    );
  } else if (!model) {
    const bare = modelId.includes('/') ? modelId.slice(modelId.lastIndexOf('/') + 1) : undefined;
    const hint = bare && context.models.some((m) => m.id === bare) ? ` ${l10n.t('Use "{0}" without the provider prefix.', bare)}` : '';
    add(
      'model',
      `${l10n.t('Unknown model "{0}".', modelId)}${hint}`,
      context.models.map((m) => m.id),
      'unknown-model',
    );
  }

  if (typeof request.prompt !== 'string' || !request.prompt.trim()) {
    add('prompt', l10n.t('Write a prompt: "prompt" must be a non-empty text.'));
  }

  const references = context.referenceCount ?? request.input_references?.length ?? 0;
  const maxN = model?.max_n ?? 10;
  if (request.n !== undefined && (!Number.isInteger(request.n) || request.n < 1 || request.n > maxN)) {
    const range = Array.from({ length: maxN }, (_, i) => i + 1);
    const message = model
      ? l10n.t('"n" must be a whole number from 1 to {0} for {1}; got {2}.', maxN, model.id, show(request.n))
      : l10n.t('"n" must be a whole number from 1 to {0}; got {1}.', maxN, show(request.n));
    add('n', message, range);
  }

  if (model) {
    if (references === 0 && !model.supports_generation) {
      add('model', l10n.t('{0} only edits images: add a reference image or choose another model.', model.id));
    }
    checkListed(add, 'resolution', request.resolution, model.supported_resolutions, model.id);
    checkListed(add, 'aspect_ratio', request.aspect_ratio, model.supported_aspect_ratios, model.id);
    checkListed(add, 'background', request.background, model.supported_background, model.id);
    if (references > 0) {
      if (!canEdit(model)) {
        add(
          'input_references',
          l10n.t('{0} does not support editing (references are not accepted). Choose a model that edits.', model.id),
          undefined,
          'edit-not-supported',
        );
      } else if (references > model.max_input_references) {
        add(
          'input_references',
          trPlural(
            model.max_input_references,
            { one: '{0} accepts at most {1} reference image; got {2}.', other: '{0} accepts at most {1} reference images; got {2}.' },
            model.id,
            model.max_input_references,
            references,
          ),
        );
      }
    }
    checkPassthrough(add, request.params, model);
  }

  checkSize(add, request);
  if (request.quality !== undefined && !QUALITY_VALUES.includes(request.quality as never)) {
    add('quality', l10n.t('"quality" must be one of {0}; got {1}.', QUALITY_VALUES.join(', '), show(request.quality)), QUALITY_VALUES);
  }
  if (request.output_format !== undefined && !OUTPUT_FORMAT_VALUES.includes(request.output_format as never)) {
    add(
      'output_format',
      l10n.t('"output_format" must be one of {0}; got {1}.', OUTPUT_FORMAT_VALUES.join(', '), show(request.output_format)),
      OUTPUT_FORMAT_VALUES,
    );
  }
  if (request.seed !== undefined && !Number.isSafeInteger(request.seed)) {
    add('seed', l10n.t('"seed" must be a whole number; got {0}.', show(request.seed)));
  }
  const compression = request.output_compression;
  if (compression !== undefined && (!Number.isInteger(compression) || compression < 0 || compression > 100)) {
    add('output_compression', l10n.t('"output_compression" must be a whole number from 0 to 100; got {0}.', show(compression)));
  }
  const transparency = transparencyIssue(request);
  if (transparency) add(transparency.field, transparency.message, transparency.allowed);
  checkReferenceShapes(add, request);
  return issues;
}

export interface NormalizedRequest {
  request: GenerationRequest;
  /** One sentence per change, for the user ("size" "1024X1024" → "1024x1024"). */
  notes: string[];
}

/**
 * Fixes what has only one reading: spaces around the model id and values, a capital X between
 * width and height, a lowercase tier (2k → 2K), and the case of a value that matches exactly one
 * allowed value. Anything else is left for collectIssues to refuse (Cyrillic х, "jpg", "16/9"...).
 */
export function normalizeRequest(request: GenerationRequest, models: readonly ImageModel[]): NormalizedRequest {
  const next: GenerationRequest = { ...request };
  const notes: string[] = [];
  const change = <K extends keyof GenerationRequest>(field: K, value: GenerationRequest[K]) => {
    if (value === request[field]) return;
    notes.push(l10n.t('"{0}" was changed from {1} to {2}.', field, show(request[field]), show(value)));
    next[field] = value;
  };
  if (typeof request.model === 'string') change('model', request.model.trim());
  const model = models.find((m) => m.id === next.model);
  if (typeof request.size === 'string') {
    const size = request.size.trim();
    if (/^\d{1,5}X\d{1,5}$/.test(size)) change('size', size.replace('X', 'x'));
    else if (/^[1-9]\d?k$/.test(size)) change('size', size.toUpperCase());
    else if (size.toLowerCase() === 'auto') change('size', 'auto');
    else change('size', size);
  }
  const byCase = (field: 'resolution' | 'aspect_ratio' | 'background' | 'quality' | 'output_format', allowed: readonly string[] | undefined) => {
    const value = request[field];
    if (typeof value !== 'string') return;
    const trimmed = value.trim();
    const matches = (allowed ?? []).filter((a) => a.toLowerCase() === trimmed.toLowerCase());
    change(field, matches.length === 1 ? matches[0] : trimmed);
  };
  byCase('resolution', model?.supported_resolutions);
  byCase('aspect_ratio', model?.supported_aspect_ratios);
  byCase('background', model?.supported_background);
  byCase('quality', QUALITY_VALUES);
  byCase('output_format', OUTPUT_FORMAT_VALUES);
  return { request: next, notes };
}

/** Throws a ValidationError for the first issue; returns the model of a valid request. */
export function validateRequest(request: GenerationRequest, context: ValidationContext): ImageModel {
  const [first] = collectIssues(request, context);
  if (first) throw new ValidationError(first.field, first.message, first.allowed, first.kind);
  return context.models.find((m) => m.id === request.model.trim())!;
}

type Add = (field: string, message: string, allowed?: readonly (string | number)[], kind?: LocalRefusalKind) => void;

function checkListed(add: Add, field: string, value: string | undefined, allowed: string[], modelId: string): void {
  if (value === undefined) return;
  if (allowed.length === 0) {
    add(field, l10n.t('{0} does not accept "{1}"; leave it out.', modelId, field), []);
  } else if (!allowed.includes(value)) {
    add(field, l10n.t('"{0}" must be one of {1} for {2}; got {3}.', field, allowed.join(', '), modelId, show(value)), allowed);
  }
}

function checkSize(add: Add, request: GenerationRequest): void {
  const size = request.size;
  if (size === undefined) return;
  const allowedText = () => l10n.t('a tier label such as 2K, WIDTHxHEIGHT with the Latin letter x (for example 1024x1024), or auto');
  if (typeof size !== 'string') {
    add('size', l10n.t('"size" must be {0}; got {1}.', allowedText(), show(size)));
    return;
  }
  const pixels = PIXEL_SIZE.exec(size);
  if (pixels) {
    if (Number(pixels[1]) === 0 || Number(pixels[2]) === 0) add('size', l10n.t('"size" must have a width and height above zero; got "{0}".', size));
    else if (/^0|x0/.test(size))
      add('size', l10n.t('"size" must be written without leading zeros, for example "{0}".', `${Number(pixels[1])}x${Number(pixels[2])}`));
    if (request.resolution !== undefined || request.aspect_ratio !== undefined) {
      add('size', l10n.t('Explicit pixels in "size" ("{0}") cannot be combined with "resolution" or "aspect_ratio": use one or the other.', size));
    }
    return;
  }
  if (size === 'auto' || TIER_LABEL.test(size)) return;
  if (LOOKALIKE_X.test(size)) {
    const fixed = size.replace(/\s*[хХ×*✕xX]\s*/, 'x');
    add('size', l10n.t('"size" must use the Latin letter x between width and height: write "{0}" instead of "{1}".', fixed, size));
    return;
  }
  add('size', l10n.t('"size" must be {0}; got {1}.', allowedText(), show(size)));
}

function checkPassthrough(add: Add, params: GenerationRequest['params'], model: ImageModel): void {
  for (const name of Object.keys(params ?? {})) {
    if (STANDARD_FIELDS.has(name)) {
      add(name, l10n.t('"{0}" is a standard parameter; set it directly, not as a provider parameter.', name));
    } else if (!model.allowed_passthrough_parameters.includes(name)) {
      const allowed = model.allowed_passthrough_parameters;
      const list = allowed.length
        ? l10n.t('Allowed for {0}: {1}.', model.id, allowed.join(', '))
        : l10n.t('{0} accepts no provider-specific parameters.', model.id);
      add(name, `${l10n.t('Provider parameter "{0}" is not accepted.', name)} ${list}`, allowed);
    }
  }
}

function checkReferenceShapes(add: Add, request: GenerationRequest): void {
  (request.input_references ?? []).forEach((ref, i) => {
    const url = ref?.image_url?.url;
    if (ref?.type !== 'image_url' || typeof url !== 'string') {
      add('input_references', l10n.t('input_references[{0}] must be {type: "image_url", image_url: {url}}.', i));
    } else if (!/^data:image\/[\w.+-]+;base64,/.test(url) && !/^https?:\/\//i.test(url)) {
      add('input_references', l10n.t('input_references[{0}].image_url.url must be a data: URL with base64 content or an http(s) address.', i));
    }
  });
}

function show(value: unknown): string {
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
