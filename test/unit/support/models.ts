import type { ImageModel } from '../../../src/core/gateway/types';

/** A catalog entry with plain defaults; tests override what they are about. */
export function testModel(overrides: Partial<ImageModel> & { id: string }): ImageModel {
  return {
    min_price_per_image: 1,
    max_price_per_image: 2,
    supported_resolutions: ['1K'],
    supported_aspect_ratios: ['1:1'],
    supported_quality: [],
    supported_output_formats: [],
    supported_background: ['auto'],
    supports_seed: false,
    max_n: 4,
    max_input_references: 0,
    supports_generation: true,
    supports_edit: false,
    allowed_passthrough_parameters: [],
    ...overrides,
  };
}
