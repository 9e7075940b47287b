// The emulator's model catalog, as plain data. Tests and benchmarks import it.
// Model ids and providers are invented; each image model has one capability the others lack.
import type { CatalogEntry, CatalogGroup, ImageModel } from './wire';

/** An image model as the emulator serves it: every spec field plus `id` and `description`. */
export type EmulatorImageModel = ImageModel & { provider: string; description: string };

const STANDARD_QUALITY = ['low', 'medium', 'high', 'auto'];

export const IMAGE_MODELS: readonly EmulatorImageModel[] = [
  {
    id: 'aurora-1',
    provider: 'northlight',
    description: 'General-purpose model; one reference image for simple edits.',
    min_price_per_image: 2.5,
    max_price_per_image: 4.0,
    supported_resolutions: ['1K', '2K'],
    supported_aspect_ratios: ['1:1', '16:9', '9:16', '4:3', '3:4'],
    supported_quality: STANDARD_QUALITY,
    supported_output_formats: ['png', 'jpeg', 'webp'],
    supported_background: ['auto', 'opaque'],
    supports_seed: true,
    max_n: 4,
    max_input_references: 1,
    supports_generation: true,
    supports_edit: true,
    allowed_passthrough_parameters: [],
  },
  {
    id: 'lumen-xl',
    provider: 'lumenworks',
    description: 'High-resolution model with 1K, 2K and 4K tiers and wide aspect ratios.',
    min_price_per_image: 6.0,
    max_price_per_image: 12.5,
    supported_resolutions: ['1K', '2K', '4K'],
    supported_aspect_ratios: ['1:1', '16:9', '9:16', '21:9', '3:2', '2:3'],
    supported_quality: [],
    supported_output_formats: [],
    supported_background: ['auto'],
    supports_seed: true,
    max_n: 2,
    max_input_references: 2,
    supports_generation: true,
    supports_edit: true,
    allowed_passthrough_parameters: [],
  },
  {
    id: 'prism-2',
    provider: 'prismatic',
    description: 'Transparent backgrounds and a moderation level; seed has no effect.',
    min_price_per_image: 3.2,
    max_price_per_image: 9.8,
    supported_resolutions: ['1K'],
    supported_aspect_ratios: ['1:1', '3:2', '2:3'],
    supported_quality: STANDARD_QUALITY,
    supported_output_formats: ['png', 'jpeg', 'webp'],
    supported_background: ['auto', 'transparent', 'opaque'],
    supports_seed: false,
    max_n: 10,
    max_input_references: 4,
    supports_generation: true,
    supports_edit: true,
    allowed_passthrough_parameters: ['moderation'],
  },
  {
    id: 'sketch-mini',
    provider: 'sketchlab',
    description: 'Fast, cheap drafts. Generation only: no editing.',
    min_price_per_image: 0.8,
    max_price_per_image: 1.2,
    supported_resolutions: ['1K'],
    supported_aspect_ratios: ['1:1', '4:3', '3:4'],
    supported_quality: ['low', 'auto'],
    supported_output_formats: ['png'],
    supported_background: ['auto'],
    supports_seed: true,
    max_n: 4,
    max_input_references: 0,
    supports_generation: true,
    supports_edit: false,
    allowed_passthrough_parameters: [],
  },
  {
    id: 'vector-forge',
    provider: 'vectorly',
    description: 'Logo-style artwork, one image per request; SVG output where available.',
    min_price_per_image: 1.5,
    max_price_per_image: 2.75,
    supported_resolutions: ['1K', '2K'],
    supported_aspect_ratios: ['1:1'],
    supported_quality: [],
    supported_output_formats: ['svg', 'png'],
    supported_background: ['auto', 'opaque'],
    supports_seed: true,
    max_n: 1,
    max_input_references: 1,
    supports_generation: true,
    supports_edit: true,
    allowed_passthrough_parameters: [],
  },
  {
    id: 'mosaic-edit',
    provider: 'mosaic',
    description: 'Combines up to 8 reference images; up to 4 results per request.',
    min_price_per_image: 4.5,
    max_price_per_image: 7.0,
    supported_resolutions: ['1K', '2K'],
    supported_aspect_ratios: ['1:1', '16:9', '9:16', '4:3', '3:4'],
    supported_quality: ['auto', 'high'],
    supported_output_formats: ['png', 'webp'],
    supported_background: ['auto', 'opaque'],
    supports_seed: true,
    max_n: 4,
    max_input_references: 8,
    supports_generation: true,
    supports_edit: true,
    allowed_passthrough_parameters: [],
  },
  {
    id: 'retouch-pro',
    provider: 'retouch',
    description: 'Edit-only model: needs at least one reference image.',
    min_price_per_image: 3.0,
    max_price_per_image: 5.5,
    supported_resolutions: ['1K', '2K'],
    supported_aspect_ratios: ['1:1', '4:3', '3:4'],
    supported_quality: STANDARD_QUALITY,
    supported_output_formats: ['png', 'jpeg'],
    supported_background: ['auto'],
    supports_seed: true,
    max_n: 2,
    max_input_references: 2,
    supports_generation: false,
    supports_edit: true,
    allowed_passthrough_parameters: [],
  },
];

/** Allowed values of passthrough parameters, per parameter name. */
export const PASSTHROUGH_VALUES: Readonly<Record<string, readonly string[]>> = {
  moderation: ['low', 'auto'],
};

const OTHER_GROUPS: Readonly<Record<Exclude<CatalogGroup, 'images'>, readonly CatalogEntry[]>> = {
  chat: [
    {
      id: 'orbit-chat-8b',
      provider: 'orbit',
      description: 'Small chat model.',
      context_length: 32768,
      input_price_per_1k_tokens: 0.02,
      output_price_per_1k_tokens: 0.06,
    },
    {
      id: 'orbit-chat-70b',
      provider: 'orbit',
      description: 'Large chat model.',
      context_length: 131072,
      input_price_per_1k_tokens: 0.09,
      output_price_per_1k_tokens: 0.28,
    },
    {
      id: 'quill-mini',
      provider: 'quill',
      description: 'Fast drafting model.',
      context_length: 16384,
      input_price_per_1k_tokens: 0.01,
      output_price_per_1k_tokens: 0.03,
    },
  ],
  videos: [
    {
      id: 'reel-1',
      provider: 'reelworks',
      description: 'Short clips from text or frames.',
      price_per_second: 9.5,
      max_duration_seconds: 10,
      supported_resolutions: ['720p', '1080p'],
      max_input_references: 2,
      supports_frame_images: true,
    },
    {
      id: 'reel-lite',
      provider: 'reelworks',
      description: 'Cheap low-resolution clips.',
      price_per_second: 3.2,
      max_duration_seconds: 6,
      supported_resolutions: ['480p', '720p'],
      max_input_references: 0,
      supports_frame_images: false,
    },
  ],
  embeddings: [
    { id: 'vecto-small', provider: 'vecto', description: 'Compact embeddings.', dimensions: 512, context_length: 8192, price_per_1k_tokens: 0.002 },
    { id: 'vecto-large', provider: 'vecto', description: 'High-recall embeddings.', dimensions: 3072, context_length: 8192, price_per_1k_tokens: 0.012 },
  ],
  speech: [
    {
      id: 'voicebox-1',
      provider: 'voicebox',
      description: 'Text to speech.',
      voices: ['alto', 'tenor', 'breeze'],
      price_per_1k_characters: 1.4,
      output_formats: ['mp3', 'wav'],
    },
    {
      id: 'voicebox-hd',
      provider: 'voicebox',
      description: 'Studio-quality speech.',
      voices: ['alto', 'tenor'],
      price_per_1k_characters: 3.1,
      output_formats: ['mp3', 'wav', 'flac'],
    },
  ],
  transcriptions: [
    { id: 'scribe-1', provider: 'scribe', description: 'Speech to text.', price_per_minute: 0.55, max_file_mb: 25, languages: ['ru', 'en', 'de'] },
    { id: 'scribe-fast', provider: 'scribe', description: 'Lower-latency transcription.', price_per_minute: 0.35, max_file_mb: 25, languages: ['ru', 'en'] },
  ],
  moderation: [
    { id: 'guard-1', provider: 'guardline', description: 'Text and image moderation.', price_per_1k_tokens: 0.001, categories: ['violence', 'adult', 'hate'] },
    { id: 'guard-lite', provider: 'guardline', description: 'Text-only moderation.', price_per_1k_tokens: 0.0005, categories: ['violence', 'hate'] },
  ],
};

export type EmulatorCatalog = { readonly images: readonly EmulatorImageModel[] } & Readonly<Record<Exclude<CatalogGroup, 'images'>, readonly CatalogEntry[]>>;

export const CATALOG: EmulatorCatalog = {
  chat: OTHER_GROUPS.chat,
  images: IMAGE_MODELS,
  videos: OTHER_GROUPS.videos,
  embeddings: OTHER_GROUPS.embeddings,
  speech: OTHER_GROUPS.speech,
  transcriptions: OTHER_GROUPS.transcriptions,
  moderation: OTHER_GROUPS.moderation,
};

export function findImageModel(id: string): EmulatorImageModel | undefined {
  return IMAGE_MODELS.find((m) => m.id === id);
}
