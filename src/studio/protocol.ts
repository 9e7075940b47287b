// Messages between the Image Studio page (media/studio) and the extension host. Pure TypeScript:
// no vscode and no DOM import, so both sides and the unit tests compile it.
// Every message from the page is untrusted: the host runs parseFromWebviewMessage on each one.

/** viewType of the panel (also in package.json's onWebviewPanel activation event). */
export const STUDIO_VIEW_TYPE = 'gatewayImages.studio';

export const LIMITS = {
  prompt: 32_000,
  id: 200,
  /** Paths and URIs of files. */
  path: 4_096,
  references: 16,
  /** Short option values (resolution, size, a passthrough parameter's value...). */
  value: 2_000,
  params: 32,
  droppedUris: 64,
  /** 25 MB of image bytes as base64 (4 characters per 3 bytes). */
  pasteBase64: Math.ceil((25 * 1024 * 1024) / 3) * 4,
} as const;

export const PASTE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type PasteMediaType = (typeof PASTE_MEDIA_TYPES)[number];

export const GALLERY_ACTIONS = ['open', 'reveal', 'copyPath', 'insertLink', 'useAsReference', 'regenerate', 'delete'] as const;
export type GalleryAction = (typeof GALLERY_ACTIONS)[number];

import { CompareFromWebviewMessage, ComparisonMessage, parseCompareMessage } from './compareProtocol';
import { isRecord } from '../core/json';

// ---- shared shapes --------------------------------------------------------------------------

/** The form as the page holds it. Numbers typed by people stay text until the host parses them. */
export interface FormValues {
  model: string;
  prompt: string;
  n: number;
  resolution?: string;
  aspect_ratio?: string;
  background?: string;
  quality?: string;
  output_format?: string;
  size?: string;
  seed?: string;
  output_compression?: string;
  /** Provider-specific parameters by name (only the model's allowed names are offered). */
  params: Record<string, string>;
  /** File system paths of the reference images (given by the host). */
  references: string[];
}

/** The form's fields as the person edits them (issues are matched to them). */
export const FORM_FIELDS = ['model', 'prompt', 'n', 'resolution', 'aspect_ratio', 'background', 'quality', 'output_format', 'size', 'seed', 'output_compression', 'params', 'references'] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** What the person has done to the form: errors show only for fields edited, or all after Generate. */
export interface FormInteraction {
  edited: FormField[];
  /** Generate was pressed (with issues, it only shows them). */
  submitted: boolean;
}

/** A model with what the form needs; texts are preformatted by the host. */
export interface ModelInfo {
  id: string;
  provider?: string;
  description?: string;
  priceText: string;
  maxN: number;
  /** 0 when the model cannot edit. */
  maxReferences: number;
  supportsGeneration: boolean;
  resolutions: string[];
  aspectRatios: string[];
  backgrounds: string[];
  qualities: string[];
  formats: string[];
  supportsSeed: boolean;
  passthrough: string[];
}

export interface ReferenceView {
  path: string;
  name: string;
  /** webview.asWebviewUri of the file. */
  src: string;
}

export interface AccountView {
  status: string;
  /** Set right after the key or gateway changed, while the new figures are read. */
  switchingText?: string;
  balanceText?: string;
  budgetText?: string;
}

export interface Issue {
  field: string;
  message: string;
}

export interface EstimateView {
  reservationText: string;
  expectedText: string;
  balanceAfterText?: string;
  budgetAfterText?: string;
  /** Set when the known balance or key budget cannot cover the reservation. */
  cannotAfford?: 'balance' | 'budget';
}

export interface GalleryItem {
  entryId: string;
  file: string;
  /** file: URI of the saved image, set as text/uri-list when the card is dragged into an editor. */
  uri: string;
  name: string;
  src: string;
  prompt: string;
  model: string;
  costText?: string;
  dateText: string;
  isEdit: boolean;
}

/** Strings of the page, translated by the host (vscode.l10n). */
export interface StudioStrings {
  [key: string]: string;
}

// ---- host -> page ---------------------------------------------------------------------------

/** Reply to `ready`: everything the page needs to draw itself. */
export interface InitMessage {
  type: 'init';
  requestId: number;
  strings: StudioStrings;
  models: ModelInfo[];
  modelsError?: string;
  account: AccountView;
  gallery: GalleryItem[];
  /** The page's saved references, checked again and with fresh URIs. */
  references: ReferenceView[];
  busy: boolean;
}

export interface ModelsMessage {
  type: 'models';
  models: ModelInfo[];
  error?: string;
}

export interface AccountMessage {
  type: 'account';
  account: AccountView;
}

export interface GalleryMessage {
  type: 'gallery';
  items: GalleryItem[];
}

/** Reply to `evaluate`. */
export interface EvaluationMessage {
  type: 'evaluation';
  requestId: number;
  /** The issues to show (of the fields the person has edited, or all once Generate was pressed). */
  issues: Issue[];
  /** Issues not shown yet: Generate then reveals them instead of sending. */
  hiddenIssues: number;
  /** A neutral hint instead of errors on an untouched form. */
  hint?: string;
  estimate?: EstimateView;
  /** An edit without a chosen aspect ratio: the ratio it will ask for, and why. */
  aspectDefault?: AspectDefaultView;
}

export interface AspectDefaultView {
  ratio: string;
  /** "matches photo.jpg, 4:3" (translated). */
  why: string;
}

/** Reply to `pickReferences`, `dropUris`, `pasteImage` (and pushed by "use as reference"). */
export interface ReferencesAddedMessage {
  type: 'referencesAdded';
  requestId: number;
  references: ReferenceView[];
  /** Why some were not added (already translated). */
  rejected: string[];
}

export interface BusyMessage {
  type: 'busy';
  busy: boolean;
}

/** Reply to `generate`. */
export interface GenerateDoneMessage {
  type: 'generateDone';
  requestId: number;
  ok: boolean;
  files: string[];
  costText?: string;
  error?: string;
}

/** "Regenerate": the form is filled from a result; the person reviews and sends. */
export interface FillFormMessage {
  type: 'fillForm';
  form: FormValues;
  references: ReferenceView[];
}

export type ToWebviewMessage =
  | InitMessage
  | ModelsMessage
  | AccountMessage
  | GalleryMessage
  | EvaluationMessage
  | ReferencesAddedMessage
  | BusyMessage
  | GenerateDoneMessage
  | FillFormMessage
  | ComparisonMessage;

// ---- page -> host ---------------------------------------------------------------------------

export interface ReadyMessage {
  type: 'ready';
  requestId: number;
  /** References kept in the page's state across reloads. */
  references: string[];
}

export interface EvaluateMessage {
  type: 'evaluate';
  requestId: number;
  form: FormValues;
  /** Absent: treated as submitted (every issue shown). */
  interaction?: FormInteraction;
}

export interface GenerateMessage {
  type: 'generate';
  requestId: number;
  form: FormValues;
}

export interface CancelMessage {
  type: 'cancel';
}

export interface PickReferencesMessage {
  type: 'pickReferences';
  requestId: number;
}

export interface DropUrisMessage {
  type: 'dropUris';
  requestId: number;
  uris: string[];
}

/** The only base64 that crosses postMessage: one pasted (or dropped) image, page to host. */
export interface PasteImageMessage {
  type: 'pasteImage';
  requestId: number;
  mediaType: PasteMediaType;
  base64: string;
}

export interface GalleryActionMessage {
  type: 'galleryAction';
  requestId: number;
  action: GalleryAction;
  entryId: string;
  file: string;
}

export interface RefreshModelsMessage {
  type: 'refreshModels';
}

export type FromWebviewMessage =
  | ReadyMessage
  | EvaluateMessage
  | GenerateMessage
  | CancelMessage
  | PickReferencesMessage
  | DropUrisMessage
  | PasteImageMessage
  | GalleryActionMessage
  | RefreshModelsMessage
  | CompareFromWebviewMessage;

// ---- validation of what the page sends --------------------------------------------------------

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

function isTextList(value: unknown, maxItems: number, maxLength: number): value is string[] {
  return Array.isArray(value) && value.length <= maxItems && value.every((v) => isText(v, maxLength) && v.length > 0);
}

/** Only the listed keys may be present (a stray key means a wrong shape). */
function hasOnlyKeys(value: Json, keys: readonly string[]): boolean {
  return Object.keys(value).every((k) => keys.includes(k));
}

const FORM_KEYS = [
  'model', 'prompt', 'n', 'resolution', 'aspect_ratio', 'background', 'quality', 'output_format',
  'size', 'seed', 'output_compression', 'params', 'references',
] as const;
const OPTIONAL_FORM_TEXT = ['resolution', 'aspect_ratio', 'background', 'quality', 'output_format', 'size', 'seed', 'output_compression'] as const;

export function parseFormValues(value: unknown): FormValues | undefined {
  if (!isRecord(value) || !hasOnlyKeys(value, FORM_KEYS)) return undefined;
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
    default:
      return parseCompareMessage(value, parseFormValues, LIMITS.id);
  }
}

/** A short, safe description of a rejected message for the log (never its content). */
export function describeRejected(value: unknown): string {
  if (!isRecord(value)) return `a ${Array.isArray(value) ? 'list' : typeof value}`;
  const word = (text: string) => text.replace(/[^\w-]/g, '?').slice(0, 40);
  const type = typeof value.type === 'string' ? word(value.type) : '(none)';
  return `type ${type}, keys ${Object.keys(value).slice(0, 12).map(word).join(',')}`;
}
