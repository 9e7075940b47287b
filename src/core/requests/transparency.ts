// Transparency that works: a format that can hold alpha is chosen for `background: transparent`,
// a request that cannot be transparent is refused before sending, and a result without alpha is
// noticed. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { type GenerationRequest, type ImageModel } from '../gateway/types';

const ALPHA_FORMATS = ['png', 'webp'] as const;

export function wantsTransparency(request: Pick<GenerationRequest, 'background'>): boolean {
  return request.background === 'transparent';
}

/**
 * The request with an alpha-capable `output_format` when transparency is asked for and the model
 * lists formats (png first, else webp). An explicit format is left as it is (validation judges it).
 */
export function withAlphaFormat<T extends GenerationRequest>(request: T, model: Pick<ImageModel, 'supported_output_formats'>): T {
  if (!wantsTransparency(request) || request.output_format !== undefined || !model.supported_output_formats.length) return request;
  const format = ALPHA_FORMATS.find((f) => model.supported_output_formats.includes(f));
  return format ? { ...request, output_format: format } : request;
}

/** The issue of a transparent request in a format without alpha (JPEG), else undefined. */
export function transparencyIssue(
  request: Pick<GenerationRequest, 'background' | 'output_format'>,
): { field: string; message: string; allowed: readonly string[] } | undefined {
  if (!wantsTransparency(request) || request.output_format !== 'jpeg') return undefined;
  return {
    field: 'output_format',
    message: l10n.t(
      '"background": "transparent" cannot be combined with "output_format": "jpeg": JPEG has no alpha channel. Use png or webp, or another background.',
    ),
    allowed: ALPHA_FORMATS,
  };
}
