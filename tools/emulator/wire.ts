// The emulator's own reading of the gateway contract (docs/gateway-contract.md): the value
// lists and record shapes it serves and checks. Deliberately not imported from src/: were the
// extension to get a list wrong, an emulator sharing it would agree and the tests would not notice.

/** `quality`: "low, medium, high or auto" (spec, image generation request). */
export const QUALITY_VALUES = ['low', 'medium', 'high', 'auto'] as const;
/** `output_format`: "png, jpeg, webp or svg". */
export const OUTPUT_FORMAT_VALUES = ['png', 'jpeg', 'webp', 'svg'] as const;
/** `:group` of GET /public/gateway/models/:group. */
export const CATALOG_GROUPS = ['chat', 'images', 'videos', 'embeddings', 'speech', 'transcriptions', 'moderation'] as const;
export type CatalogGroup = (typeof CATALOG_GROUPS)[number];
/** `budget.reset_interval` of the key record. */
export type ResetInterval = 'daily' | 'weekly' | 'monthly';

/** An image model catalog entry as the emulator serves it (the spec's fields, plus the `id` it chose). */
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

/** An entry of any other group (the spec shows none of their fields). */
export interface CatalogEntry {
  id: string;
  [field: string]: unknown;
}

/** GET /v1/gateway/key. */
export interface KeyRecord {
  name: string | null;
  budget?: { remaining: number; initial: number; reset_interval?: ResetInterval; reset_at?: string; reset_in_seconds?: number };
  expires_at?: string;
  expires_in_seconds?: number;
}

/** GET /v1/gateway/stats/summary (the emulator answers null for the top models when there is no usage). */
export interface StatsSummary {
  today_spend: number;
  today_requests: number;
  month_spend: number;
  month_requests: number;
  avg_daily_spend: number;
  top_model_by_spend?: string | null;
  top_model_by_spend_value?: number | null;
  top_model_by_requests?: string | null;
  top_model_by_requests_value?: number | null;
}
