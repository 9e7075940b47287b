// The confirmation shown before an expensive request: the reservation and the expected range.
import * as vscode from 'vscode';
import { formatRubleRange, formatRubles } from '../core/cost';
import type { ConfirmRequest } from '../jobs/jobTypes';
import { trPlural } from '../core/plural';

export async function confirmCost({ model, request, estimate }: ConfirmRequest, locale: string): Promise<boolean> {
  const reserve = formatRubles(estimate.reservation, locale);
  const go = vscode.l10n.t('Send (reserve {0})', reserve);
  const answer = await vscode.window.showWarningMessage(
    trPlural(estimate.n, { one: 'Send a request for {0} image to {1}?', other: 'Send a request for {0} images to {1}?' }, estimate.n, model.id),
    {
      modal: true,
      detail: vscode.l10n.t(
        'The gateway reserves {0} before generating and charges the actual cost, expected {1}.\n\nPrompt: {2}',
        reserve,
        formatRubleRange(estimate.expectedMin, estimate.expectedMax, locale),
        request.prompt.length > 200 ? `${request.prompt.slice(0, 200)}…` : request.prompt,
      ),
    },
    go,
  );
  return answer === go;
}
