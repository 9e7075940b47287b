// Checks of what the Image Studio page sends: every message from the page is untrusted, and the
// host runs parseFromWebviewMessage on each one. Pure TypeScript (the page compiles it too).
import {
  FORM_FIELDS,
  GALLERY_ACTIONS,
  LIMITS,
  PASTE_MEDIA_TYPES,
  STYLE_FIELDS,
  type StyleField,
  type FormField,
  type FormInteraction,
  type FormValues,
  type FromWebviewMessage,
  type GalleryAction,
  type PasteMediaType,
} from './protocol';
import { parseCompareMessage } from './compareProtocol';
import { parsePromptMessage } from './promptProtocol';
import { parseStyleMessage } from './styleProtocol';
import { parseRegionMessage } from './regionProtocol';
import { isRecord } from '../../core/common/json';

type Json = Record<string, unknown>;

function isText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length <= max;
}

function isOptionalText(value: unknown, max: number): value is string | undefined {
  return value === undefined || isText(value, max);
}

function isRequestId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isCount(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}

/** A gallery card named by the page: a result id and one of its files. */
function parseItemRef(value: Json): { entryId: string; file: string } | undefined {
  if (!hasOnlyKeys(value, ['entryId', 'file'])) return undefined;
  if (!isText(value.entryId, LIMITS.id) || !value.entryId || !isText(value.file, LIMITS.path) || !value.file) return undefined;
  return { entryId: value.entryId, file: value.file };
}

function isTextList(value: unknown, maxItems: number, maxLength: number): value is string[] {
  return Array.isArray(value) && value.length <= maxItems && value.every((v) => isText(v, maxLength) && v.length > 0);
}

/** Only the listed keys may be present (a stray key means a wrong shape). */
function hasOnlyKeys(value: Json, keys: readonly string[]): boolean {
  return Object.keys(value).every((k) => keys.includes(k));
}

const OPTIONAL_FORM_TEXT = ['resolution', 'aspect_ratio', 'background', 'quality', 'output_format', 'size', 'seed', 'output_compression'] as const;

export function parseFormValues(value: unknown): FormValues | undefined {
  if (!isRecord(value) || !hasOnlyKeys(value, [...FORM_FIELDS, 'fromStyle'])) return undefined;
  if (!isText(value.model, LIMITS.id) || !isText(value.prompt, LIMITS.prompt)) return undefined;
  if (typeof value.n !== 'number' || !Number.isInteger(value.n) || value.n < 1 || value.n > 10) return undefined;
  for (const key of OPTIONAL_FORM_TEXT) if (!isOptionalText(value[key], LIMITS.value)) return undefined;
  const params = value.params;
  if (!isRecord(params)) return undefined;
  const entries = Object.entries(params);
  if (entries.length > LIMITS.params) return undefined;
  if (!entries.every(([k, v]) => k.length > 0 && k.length <= LIMITS.id && isText(v, LIMITS.value))) return undefined;
  if (!isTextList(value.references, LIMITS.references, LIMITS.path)) return undefined;
  const form: FormValues = {
    model: value.model,
    prompt: value.prompt,
    n: value.n,
    params: Object.fromEntries(entries) as Record<string, string>,
    references: [...value.references],
  };
  for (const key of OPTIONAL_FORM_TEXT) if (value[key] !== undefined) form[key] = value[key] as string;
  if (value.style !== undefined) {
    if (!isText(value.style, LIMITS.id) || !value.style) return undefined;
    form.style = value.style;
  }
  if (value.fromStyle !== undefined) {
    const fields = value.fromStyle;
    if (!Array.isArray(fields) || fields.length > STYLE_FIELDS.length || !fields.every((f) => STYLE_FIELDS.includes(f as StyleField))) return undefined;
    form.fromStyle = [...new Set(fields as StyleField[])];
  }
  return form;
}

/** The interaction record (from a message or the page's saved state), or undefined when malformed. */
export function parseFormInteraction(value: unknown): FormInteraction | undefined {
  if (!isRecord(value) || !hasOnlyKeys(value, ['edited', 'submitted']) || typeof value.submitted !== 'boolean') return undefined;
  const edited = value.edited;
  if (!Array.isArray(edited) || edited.length > FORM_FIELDS.length || !edited.every((f) => FORM_FIELDS.includes(f as FormField))) return undefined;
  return { edited: [...new Set(edited as FormField[])], submitted: value.submitted };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The message, when it is one the host understands with a valid shape; otherwise undefined. */
export function parseFromWebviewMessage(value: unknown): FromWebviewMessage | undefined {
  if (!isRecord(value) || typeof value.type !== 'string') return undefined;
  const only = (...keys: string[]) => hasOnlyKeys(value, ['type', ...keys]);
  switch (value.type) {
    case 'ready':
      if (!only('requestId', 'references') || !isRequestId(value.requestId)) return undefined;
      if (!isTextList(value.references, LIMITS.references, LIMITS.path)) return undefined;
      return { type: 'ready', requestId: value.requestId, references: [...value.references] };
    case 'evaluate': {
      if (!only('requestId', 'form', 'interaction') || !isRequestId(value.requestId)) return undefined;
      const form = parseFormValues(value.form);
      if (!form) return undefined;
      if (value.interaction === undefined) return { type: 'evaluate', requestId: value.requestId, form };
      const interaction = parseFormInteraction(value.interaction);
      return interaction && { type: 'evaluate', requestId: value.requestId, form, interaction };
    }
    case 'generate': {
      if (!only('requestId', 'form') || !isRequestId(value.requestId)) return undefined;
      const form = parseFormValues(value.form);
      return form && { type: value.type, requestId: value.requestId, form };
    }
    case 'cancel':
      return only() ? { type: 'cancel' } : undefined;
    case 'refreshModels':
      return only() ? { type: 'refreshModels' } : undefined;
    case 'pickReferences':
      return only('requestId') && isRequestId(value.requestId) ? { type: 'pickReferences', requestId: value.requestId } : undefined;
    case 'dropUris':
      if (!only('requestId', 'uris') || !isRequestId(value.requestId)) return undefined;
      if (!isTextList(value.uris, LIMITS.droppedUris, LIMITS.path)) return undefined;
      return { type: 'dropUris', requestId: value.requestId, uris: [...value.uris] };
    case 'pasteImage': {
      if (!only('requestId', 'mediaType', 'base64') || !isRequestId(value.requestId)) return undefined;
      const mediaType = value.mediaType;
      if (!PASTE_MEDIA_TYPES.includes(mediaType as PasteMediaType)) return undefined;
      const data = value.base64;
      if (!isText(data, LIMITS.pasteBase64) || data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) return undefined;
      return { type: 'pasteImage', requestId: value.requestId, mediaType: mediaType as PasteMediaType, base64: data };
    }
    case 'galleryAction': {
      if (!only('requestId', 'action', 'entryId', 'file') || !isRequestId(value.requestId)) return undefined;
      if (!GALLERY_ACTIONS.includes(value.action as GalleryAction)) return undefined;
      if (!isText(value.entryId, LIMITS.id) || !value.entryId || !isText(value.file, LIMITS.path) || !value.file) return undefined;
      return { type: 'galleryAction', requestId: value.requestId, action: value.action as GalleryAction, entryId: value.entryId, file: value.file };
    }
    case 'galleryPage': {
      if (!only('requestId', 'start', 'count') || !isRequestId(value.requestId)) return undefined;
      const { start, count } = value;
      if (!isCount(start, Number.MAX_SAFE_INTEGER) || !isCount(count, LIMITS.galleryPage) || count === 0) return undefined;
      return { type: 'galleryPage', requestId: value.requestId, start, count };
    }
    case 'thumbnails': {
      if (!only('requestId', 'items') || !isRequestId(value.requestId)) return undefined;
      const items = value.items;
      if (!Array.isArray(items) || !items.length || items.length > LIMITS.thumbnails) return undefined;
      const parsed = items.map((item) => (isRecord(item) ? parseItemRef(item) : undefined));
      if (!parsed.every((item) => item !== undefined)) return undefined;
      return { type: 'thumbnails', requestId: value.requestId, items: parsed };
    }
    case 'galleryFilter':
      return only('query') && isText(value.query, LIMITS.galleryFilter) ? { type: 'galleryFilter', query: value.query } : undefined;
    case 'galleryShown': {
      if (!only('at', 'cards', 'total')) return undefined;
      const { at, cards, total } = value;
      if (!isCount(at, Number.MAX_SAFE_INTEGER) || !isCount(cards, LIMITS.galleryPage) || !isCount(total, Number.MAX_SAFE_INTEGER)) return undefined;
      return { type: 'galleryShown', at, cards, total };
    }
    default:
      return (
        parseCompareMessage(value, parseFormValues, LIMITS.id) ??
        parseStyleMessage(value, parseFormValues) ??
        parsePromptMessage(value) ??
        parseRegionMessage(value, LIMITS)
      );
  }
}

/** A short, safe description of a rejected message for the log (never its content). */
export function describeRejected(value: unknown): string {
  if (!isRecord(value)) return `a ${Array.isArray(value) ? 'list' : typeof value}`;
  const word = (text: string) => text.replace(/[^\w-]/g, '?').slice(0, 40);
  const type = typeof value.type === 'string' ? word(value.type) : '(none)';
  return `type ${type}, keys ${Object.keys(value).slice(0, 12).map(word).join(',')}`;
}
