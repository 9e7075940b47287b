// Messages of the studio's region editor (issue 41): the page paints a mask over a workspace image,
// the host checks it, runs the region edit (the same estimate, confirmation and journal as every
// edit) and answers with the result, which the page shows against the original. Pure: no vscode
// and no DOM import. Every message from the page is untrusted (parseRegionMessage).

/** The image the editor paints on (an original, or a result made the next original by Edit Again). */
export interface RegionImageView {
  path: string;
  name: string;
  /** webview.asWebviewUri of the file. */
  src: string;
  /** Its size as decoded, EXIF orientation applied (what the mask must match). */
  width: number;
  height: number;
}

export const REGION_FEATHER_MAX = 256;
export const REGION_FEATHER_DEFAULT = 8;
/** The result's format: PNG (nothing outside the region re-compressed, the default) or JPEG (smaller, every pixel re-compressed). */
export const REGION_FORMATS = ['png', 'jpeg'] as const;
export type RegionResultFormat = (typeof REGION_FORMATS)[number];
/** The mask's PNG as base64: at most 25 MB of bytes, as for a pasted image. */
export const REGION_MASK_BASE64_MAX = Math.ceil((25 * 1024 * 1024) / 3) * 4;

// ---- host -> page ---------------------------------------------------------------------------

/** Opens the editor on `image` (from Edit Image with AI…, a card's Edit, or the palette). */
export interface OpenRegionEditorMessage {
  type: 'openRegionEditor';
  image: RegionImageView;
}

/** Why an editor could not be opened on an image (SVG, animated, too large, gone…), translated. */
export interface RegionRefusedMessage {
  type: 'regionRefused';
  message: string;
}

/** Reply to `regionEstimate`: the figures of one edit of the image with `model` (preformatted). */
export interface RegionEstimateMessage {
  type: 'regionEstimate';
  requestId: number;
  reservationText?: string;
  expectedText?: string;
  /** Why there is no estimate (no model, a model that cannot edit…), translated. */
  issue?: string;
}

/** Reply to `regionEdit`: the result (a new file next to the original) or why there is none. */
export interface RegionDoneMessage {
  type: 'regionDone';
  requestId: number;
  ok: boolean;
  /** The original the result was made from. */
  original?: RegionImageView;
  result?: RegionImageView;
  /** "region 412×300 of 2048×1536, sent as 3:2". */
  description?: string;
  costText?: string;
  /** The person cancelled the confirmation: nothing was sent, the editor stays as it was. */
  cancelled?: boolean;
  error?: string;
  notes?: string[];
}

/** Reply to `regionDecision`. */
export interface RegionDecidedMessage {
  type: 'regionDecided';
  requestId: number;
  decision: RegionDecision;
  ok: boolean;
  /** What happened, translated ("photo.region-1.png moved to the trash"). */
  message: string;
}

export type RegionToWebviewMessage = OpenRegionEditorMessage | RegionRefusedMessage | RegionEstimateMessage | RegionDoneMessage | RegionDecidedMessage;

// ---- page -> host ---------------------------------------------------------------------------

/** Opens the editor on `image` again (the page was discarded or reloaded with the editor open). */
export interface RegionOpenRequest {
  type: 'regionOpen';
  requestId: number;
  image: string;
}

/** The figures of one edit of `image` with `model`, for the editor's estimate line. */
export interface RegionEstimateRequest {
  type: 'regionEstimate';
  requestId: number;
  model: string;
  image: string;
}

/**
 * Runs the region edit: `maskBase64` is a PNG of the image's size where opaque white marks what
 * changes; `wholeImage` sends the whole image instead (a plain edit, the mask unused); `format`: the result's.
 */
export interface RegionEditMessage {
  type: 'regionEdit';
  requestId: number;
  image: string;
  model: string;
  prompt: string;
  maskBase64: string;
  feather: number;
  format: RegionResultFormat;
  wholeImage: boolean;
}

export const REGION_DECISIONS = ['keep', 'discard'] as const;
export type RegionDecision = (typeof REGION_DECISIONS)[number];

/** Keep (nothing changes on disk) or Discard (the result and its mask to the trash) a region edit's result. */
export interface RegionDecisionMessage {
  type: 'regionDecision';
  requestId: number;
  decision: RegionDecision;
  result: string;
}

export type RegionFromWebviewMessage = RegionOpenRequest | RegionEstimateRequest | RegionEditMessage | RegionDecisionMessage;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function parseRegionMessage(value: Record<string, unknown>, limits: { id: number; path: number; prompt: number }): RegionFromWebviewMessage | undefined {
  const keys = Object.keys(value);
  const only = (...allowed: string[]) => keys.every((k) => k === 'type' || allowed.includes(k));
  const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
  const id = value.requestId;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return undefined;
  switch (value.type) {
    case 'regionOpen':
      return only('requestId', 'image') && text(value.image, limits.path) ? { type: 'regionOpen', requestId: id, image: value.image } : undefined;
    case 'regionEstimate':
      if (!only('requestId', 'model', 'image') || !text(value.model, limits.id) || !text(value.image, limits.path)) return undefined;
      return { type: 'regionEstimate', requestId: id, model: value.model, image: value.image };
    case 'regionEdit': {
      if (!only('requestId', 'image', 'model', 'prompt', 'maskBase64', 'feather', 'format', 'wholeImage')) return undefined;
      const { image, model, prompt, maskBase64, feather, format, wholeImage } = value;
      if (!text(image, limits.path) || !text(model, limits.id) || typeof prompt !== 'string' || prompt.length > limits.prompt) return undefined;
      if (typeof wholeImage !== 'boolean' || !REGION_FORMATS.includes(format as RegionResultFormat)) return undefined;
      if (typeof feather !== 'number' || !Number.isInteger(feather) || feather < 0 || feather > REGION_FEATHER_MAX) return undefined;
      if (!text(maskBase64, REGION_MASK_BASE64_MAX) || maskBase64.length % 4 !== 0 || !BASE64.test(maskBase64)) return undefined;
      return { type: 'regionEdit', requestId: id, image, model, prompt, maskBase64, feather, format: format as RegionResultFormat, wholeImage };
    }
    case 'regionDecision':
      if (!only('requestId', 'decision', 'result') || !REGION_DECISIONS.includes(value.decision as RegionDecision)) return undefined;
      if (!text(value.result, limits.path)) return undefined;
      return { type: 'regionDecision', requestId: id, decision: value.decision as RegionDecision, result: value.result };
    default:
      return undefined;
  }
}
