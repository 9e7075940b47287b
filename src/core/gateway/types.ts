// Types of the gateway contract (docs/gateway-contract.md). Pure: no vscode import.

/** A reference image for image-to-image: a data: URL or a public http(s) address. */
export interface ReferenceObject {
  type: 'image_url';
  image_url: { url: string };
}

export type Quality = 'low' | 'medium' | 'high' | 'auto';
export type OutputFormat = 'png' | 'jpeg' | 'webp' | 'svg';

/** Body of POST /v1/images/generations (and the fields of POST /v1/images/edits). */
export interface GenerationRequest {
  model: string;
  prompt: string;
  n?: number;
  resolution?: string;
  aspect_ratio?: string;
  size?: string;
  quality?: string;
  output_format?: string;
  background?: string;
  output_compression?: number;
  seed?: number;
  input_references?: ReferenceObject[];
  /** Provider-specific parameters, sent at the top level of the body. */
  params?: Record<string, string | number | boolean>;
}

export const QUALITY_VALUES: readonly Quality[] = ['low', 'medium', 'high', 'auto'];
export const OUTPUT_FORMAT_VALUES: readonly OutputFormat[] = ['png', 'jpeg', 'webp', 'svg'];
export const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;

/** `usage` of a generation answer; a gateway may send only one of the two (the other is then unknown). */
export interface Usage {
  cost_rub?: number;
  balance?: number;
}

/** One image of a generation response, once decoded. */
export interface GeneratedImageMeta {
  index: number;
  /** `data[i].media_type`; absent when the gateway could not determine it. */
  mediaType?: string;
  /** `data[i].url` when the image came as an address (the previous API version's form) and not as its bytes. */
  url?: string;
  /** Why the image at `url` could not be downloaded (set by the client): it was paid for, and its address waits for Recover. */
  downloadFailure?: string;
}

/** A generation response without the image bytes (they are streamed to a sink). */
export interface GenerationResponseMeta {
  /** Base URL and key fingerprint the request was sent with (core/gateway/identity.ts); set by the client. */
  identity?: string;
  created?: number;
  model?: string;
  usage?: Usage;
  images: GeneratedImageMeta[];
}

/** A catalog entry of the `images` group, normalised: `id` is filled from whatever field carried it. */
export interface ImageModel {
  id: string;
  provider?: string;
  description?: string;
  min_price_per_image: number;
  max_price_per_image: number;
  supported_resolutions: string[];
  supported_aspect_ratios: string[];
  supported_quality: string[];
  supported_output_formats: string[];
  supported_background: string[];
  supports_seed: boolean;
  max_n: number;
  max_input_references: number;
  supports_generation: boolean;
  supports_edit: boolean;
  allowed_passthrough_parameters: string[];
}

/** An entry of any other group: only the id is known for sure. */
export interface CatalogEntry {
  id: string;
  [field: string]: unknown;
}

export const CATALOG_GROUPS = ['chat', 'images', 'videos', 'embeddings', 'speech', 'transcriptions', 'moderation'] as const;

export interface UserRecord {
  email: string;
  id: number;
}

export interface BalanceRecord {
  balance: number;
  /** Remaining budget of the key; present only when the key has a budget. */
  budget?: number;
}

export type ResetInterval = 'daily' | 'weekly' | 'monthly';

export interface KeyBudget {
  remaining: number;
  initial: number;
  reset_interval?: ResetInterval | (string & {});
  reset_at?: string;
  reset_in_seconds?: number;
}

export interface KeyRecord {
  name: string | null;
  budget?: KeyBudget;
  expires_at?: string;
  expires_in_seconds?: number;
}

export interface StatsSummary {
  today_spend: number;
  today_requests: number;
  month_spend: number;
  month_requests: number;
  avg_daily_spend: number;
  /** Absent or null when there is no usage (the spec does not show that case). */
  top_model_by_spend?: string | null;
  top_model_by_spend_value?: number | null;
  top_model_by_requests?: string | null;
  top_model_by_requests_value?: number | null;
}
