// The confirmation shown before an expensive request: the reservation and the expected range.
import * as vscode from 'vscode';
import { formatRubleRange, formatRubles } from '../../core/money/cost';
import type { GenerationRequest } from '../../core/gateway/types';
import type { ConfirmRequest } from '../../jobs/jobTypes';
import { trPlural } from '../../core/common/plural';
import { JPEG_QUALITY } from '../../core/images/jpegQuality';

export async function confirmCost({ model, request, estimate, style, resend, region, regionFormat }: ConfirmRequest, locale: string): Promise<boolean> {
  const reserve = formatRubles(estimate.reservation, locale);
  const go = vscode.l10n.t('Send (reserve {0})', reserve);
  const options = describeOptions(request);
  const styleLines = style
    ? [
        vscode.l10n.t('Style: {0} ({1})', style.name, style.file),
        ...(vscode.workspace.isTrusted ? [] : [vscode.l10n.t('The style comes from a workspace that is not trusted: check what it asks for.')]),
      ]
    : [];
  const detail = [
    resend
      ? vscode.l10n.t(
          'The earlier attempt may have been charged, and this request is paid for again. Recover Unsaved Images lists anything of the earlier one that arrived.',
        )
      : '',
    vscode.l10n.t(
      'The gateway reserves {0} before generating and charges the actual cost, expected {1}.\n\nPrompt: {2}',
      reserve,
      formatRubleRange(estimate.expectedMin, estimate.expectedMax, locale),
      request.prompt.length > 200 ? `${request.prompt.slice(0, 200)}…` : request.prompt,
    ),
    options && vscode.l10n.t('Options: {0}', options),
    region &&
      (regionFormat === 'jpeg'
        ? vscode.l10n.t(
            'Region edit: {0}; saved as JPEG: every pixel is re-compressed (quality {1}), so the rest of the image changes slightly.',
            region,
            JPEG_QUALITY,
          )
        : vscode.l10n.t('Region edit: {0}; the rest of the image stays as it is.', region)),
    ...styleLines,
  ].filter(Boolean);
  const answer = await vscode.window.showWarningMessage(
    trPlural(estimate.n, { one: 'Send a request for {0} image to {1}?', other: 'Send a request for {0} images to {1}?' }, estimate.n, model.id),
    { modal: true, detail: detail.join('\n') },
    go,
  );
  return answer === go;
}

/** "n=2, aspect_ratio=16:9, seed=7": the options a request sets, for confirmations. */
export function describeOptions(request: Partial<GenerationRequest>): string {
  const fields = ['n', 'resolution', 'aspect_ratio', 'background', 'size', 'quality', 'output_format', 'seed'] as const;
  const params = Object.entries(request.params ?? {}).map(([name, value]) => `${name}=${String(value)}`);
  return [...fields.filter((f) => request[f] !== undefined).map((f) => `${f}=${String(request[f])}`), ...params].join(', ');
}
