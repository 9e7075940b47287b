// Messages between the Image Studio page (media/studio) and the extension host. Pure TypeScript:
// no vscode and no DOM import, so both sides and the unit tests compile it.
// Every message from the page is untrusted: the host checks each one (protocolValidation.ts).

import type { CompareFromWebviewMessage, ComparisonMessage } from './compareProtocol';
import type { FormInteraction, FormValues } from './formProtocol';
import type { PromptWrittenMessage, WritePromptMessage } from './promptProtocol';
import type { RegionFromWebviewMessage, RegionToWebviewMessage } from './regionProtocol';
import type { StyleFromWebviewMessage, StyleSavedMessage, StylesMessage, StylesView } from './styleProtocol';

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
  /** Gallery items one page request may ask for. */
  galleryPage: 200,
  /** The gallery's filter (a query of jobs/results/resultSearch.ts). */
  galleryFilter: 500,
  /** Thumbnails one request may ask for. */
  thumbnails: 64,
  /** 25 MB of image bytes as base64 (4 characters per 3 bytes). */
  pasteBase64: Math.ceil((25 * 1024 * 1024) / 3) * 4,
} as const;

export const PASTE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type PasteMediaType = (typeof PASTE_MEDIA_TYPES)[number];

export const GALLERY_ACTIONS = ['open', 'reveal', 'copyPath', 'insertLink', 'useAsReference', 'editRegion', 'regenerate', 'delete'] as const;
export type GalleryAction = (typeof GALLERY_ACTIONS)[number];

// ---- shared shapes --------------------------------------------------------------------------

export { FORM_FIELDS, STYLE_FIELDS } from './formProtocol';
export type { FormField, FormInteraction, FormValues, StyleField } from './formProtocol';

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
  /** Its thumbnail as a data URL, or webview.asWebviewUri of the file when there is none. */
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

/** A card of the gallery. Its thumbnail is asked for separately, once the card is shown (`thumbnails`). */
export interface GalleryItem {
  entryId: string;
  file: string;
  /** file: URI of the saved image, set as text/uri-list when the card is dragged into an editor. */
  uri: string;
  name: string;
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
  /** The first page of the gallery (filtered by `galleryFilter`, kept across reloads). */
  gallery: GalleryPageView;
  galleryFilter: string;
  /** The page's saved references, checked again and with fresh URIs. */
  references: ReferenceView[];
  busy: boolean;
  styles: StylesView;
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

/** Items `start`… of the gallery's list (newest first), which holds `total` items. */
export interface GalleryPageView {
  total: number;
  start: number;
  items: GalleryItem[];
}

/** Reply to `galleryPage`; also sent unasked with the first page when the whole list changed. */
export interface GalleryPageMessage extends GalleryPageView {
  type: 'galleryPage';
  /** 0 when the host sends it unasked (the list was read again): the page starts over from it. */
  requestId: number;
}

/** A change of the gallery's list: only what changed, applied in order (`items` replace `deleteCount` items at `start`). */
export interface GalleryChangedMessage {
  type: 'galleryChanged';
  splices: { start: number; deleteCount: number; items: GalleryItem[] }[];
  /** The list's length after the change (a page whose count differs asks again). */
  total: number;
}

/** Reply to `thumbnails`, one per image: the thumbnail as a data URL, or what to show instead. */
export interface ThumbnailMessage {
  type: 'thumbnail';
  file: string;
  src?: string;
  /** "JPEG · 1024×768": an image without a thumbnail (a format or size that is not decoded). */
  standIn?: string;
  /** The image is no longer on disk. */
  missing?: boolean;
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
  /** With a style: the prompt as it will be sent (its words around the person's). */
  promptSent?: string;
  /** With a style: what it does not apply here, and why (translated). */
  styleNotes?: string[];
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
  /** The result was made with this style: the form holds the values it had then, with no style chosen. */
  madeWithStyle?: string;
}

export type ToWebviewMessage =
  | InitMessage
  | ModelsMessage
  | AccountMessage
  | GalleryPageMessage
  | GalleryChangedMessage
  | ThumbnailMessage
  | EvaluationMessage
  | ReferencesAddedMessage
  | BusyMessage
  | GenerateDoneMessage
  | FillFormMessage
  | ComparisonMessage
  | StylesMessage
  | StyleSavedMessage
  | PromptWrittenMessage
  | RegionToWebviewMessage;

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

/** Gallery items `start`… (at most LIMITS.galleryPage), for the part of the list being scrolled to. */
export interface GalleryPageRequest {
  type: 'galleryPage';
  requestId: number;
  start: number;
  count: number;
}

/** Thumbnails of the cards now shown (at most LIMITS.thumbnails). */
export interface ThumbnailsRequest {
  type: 'thumbnails';
  requestId: number;
  items: { entryId: string; file: string }[];
}

/** The first page of the gallery is on screen (`at`: the page's Date.now()); the host logs how long it took. */
export interface GalleryShownMessage {
  type: 'galleryShown';
  at: number;
  cards: number;
  total: number;
}

/** The gallery shows only the results that match `query` (empty: all); the host answers with its first page. */
export interface GalleryFilterMessage {
  type: 'galleryFilter';
  query: string;
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
  | GalleryPageRequest
  | ThumbnailsRequest
  | GalleryShownMessage
  | GalleryFilterMessage
  | CompareFromWebviewMessage
  | StyleFromWebviewMessage<FormValues>
  | WritePromptMessage
  | RegionFromWebviewMessage;
