// One estimate, one confirmation and one funds check for a run of several paid requests
// (a batch from a file, a comparison of models), under the same rules as a single request.
import { trPlural } from '../../core/common/plural';
import * as vscode from 'vscode';
import { type CombinedEstimate } from '../../core/money/combinedEstimate';
import { type Affordability, cannotAfford, formatRubleRange, formatRubles } from '../../core/money/cost';
import { readSettings } from '../../host/settings';
import { type Services } from '../../services';

/** Refuses the whole run when the known balance or key budget cannot cover the sum of the reservations. */
export function refuseUnaffordable(services: Services, affordable: Affordability, requests: number): void {
  if (!affordable.ok) throw cannotAfford(affordable, requests, services.locale);
}

/** Asks once when the sum of the reservations is above gatewayImages.confirmCostAbove (`force`: whatever it is). */
export async function confirmRun(services: Services, combined: CombinedEstimate, question: string, note = '', force = false): Promise<boolean> {
  if (!force && combined.reservation <= readSettings().confirmCostAbove) return true;
  const locale = services.locale;
  const reserve = formatRubles(combined.reservation, locale);
  const go = vscode.l10n.t('Send (reserve {0})', reserve);
  const detail = [describeCombined(combined, locale), note].filter(Boolean).join('\n\n');
  const answer = await vscode.window.showWarningMessage(question, { modal: true, detail }, go);
  return answer === go;
}

export function describeCombined(combined: CombinedEstimate, locale: string): string {
  const requests = trPlural(combined.requests, { one: '{0} paid request', other: '{0} paid requests' }, combined.requests);
  const images = trPlural(combined.images, { one: '{0} image', other: '{0} images' }, combined.images);
  return vscode.l10n.t(
    '{0}, {1}. The gateway reserves {2} in total, request by request, and charges the actual cost, expected {3}.',
    requests,
    images,
    formatRubles(combined.reservation, locale),
    formatRubleRange(combined.expectedMin, combined.expectedMax, locale),
  );
}

/** The note of a run's confirmation: the style, and the prompt as it is sent. */
export function describeStyledRun(style: string | undefined, prompt: string): string {
  return [style && vscode.l10n.t('Style: {0}', style), vscode.l10n.t('Prompt: {0}', prompt.slice(0, 200))].filter(Boolean).join('\n');
}
