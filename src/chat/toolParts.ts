// What the chat tools (generateImageTool.ts, editImageTool.ts) share: the confirmation, which IS the
// cost confirmation (the model, the prompt, the references, the reservation and the expected range,
// from ImageJobService.prepare, which sends nothing), the reservations confirmed for invoke(), the
// result (text, and the images where VS Code takes them) and the failures as sentences.
// The model's name, the prompt, paths, the style and its notes come from outside: plain text (markdownText).
import * as vscode from 'vscode';
import { type CostEstimate, formatRubleRange, formatRubles } from '../core/money/cost';
import { NotConfiguredError, summarizeError, ValidationError } from '../core/gateway/errors';
import { type ImageModel } from '../core/gateway/types';
import { describeOptions } from '../commands/common/confirmCost';
import { type CommandResult, opaqueMessage, type RunExtras } from '../commands/images/jobRunner';
import type { SpendingCap } from '../core/money/spendingCap';
import type { StyledRequest } from '../jobs/styledRequest';
import { type Services } from '../services';
import { trPlural } from '../core/common/plural';
import { markdownText } from '../core/common/markdownText';
import { previewParts } from './imageParts';

/** Confirmed reservations kept for invoke(); a confirmation is used once. */
const MAX_PENDING = 32;
export type ToolKind = 'generate' | 'edit';

/** Reservation the person confirmed, by request (JSON): invoke() lets the job ask only above it. */
export class ConfirmedReservations {
  private readonly byKey = new Map<string, number>();

  remember(key: string, reservation: number): void {
    this.byKey.delete(key);
    this.byKey.set(key, reservation);
    while (this.byKey.size > MAX_PENDING) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /** The confirmed reservation, or -1 (the job always asks); used once. */
  take(key: string): number {
    const reservation = this.byKey.get(key);
    this.byKey.delete(key);
    return reservation ?? -1;
  }
}

/**
 * invoke() of a chat tool: the input resolved again, the job run with the reservation confirmed in
 * prepareInvocation (it asks only above that) and the agents' cap, cancelled with the chat; a
 * failure is a sentence for the model, never a thrown error.
 */
export async function invokeImageTool<Args>(
  services: Services,
  token: vscode.CancellationToken,
  call: {
    kind: ToolKind;
    confirmed: ConfirmedReservations;
    cap: SpendingCap;
    resolve: () => Promise<Args>;
    keyOf: (args: Args) => string;
    run: (services: Services, args: Args, extra: RunExtras) => Promise<CommandResult>;
  },
): Promise<vscode.LanguageModelToolResult> {
  const controller = new AbortController();
  const subscription = token.onCancellationRequested(() => controller.abort());
  try {
    const args = await call.resolve();
    const reservation = call.confirmed.take(call.keyOf(args));
    const jobs = services.jobs.withDeps({ confirmAbove: () => reservation, cap: call.cap });
    const result = await call.run({ ...services, jobs }, args, { signal: controller.signal, origin: { kind: 'chat' } });
    return await toolResult(services, result, call.kind);
  } catch (error) {
    return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(describeFailure(error, call.kind))]);
  } finally {
    subscription.dispose();
  }
}

function field(message: vscode.MarkdownString, label: string, text: string): void {
  message.appendMarkdown(`**${label}:** `).appendMarkdown(markdownText(text)).appendMarkdown('  \n');
}

/** The confirmation's body: what will be sent and what it costs (`references`: workspace-relative paths of an edit). */
export function confirmationMessage(
  services: Services,
  styled: StyledRequest,
  model: ImageModel,
  estimate: CostEstimate,
  references?: readonly string[],
): vscode.MarkdownString {
  const locale = services.locale;
  const message = new vscode.MarkdownString();
  field(message, vscode.l10n.t('Model'), model.id);
  field(message, vscode.l10n.t('Prompt'), styled.request.prompt);
  if (references?.length) field(message, vscode.l10n.t('Images to edit'), references.join(', '));
  if (styled.style) {
    const fromStyle = styled.fromStyle.includes('references') ? styled.style.values.references?.length : 0;
    const name = fromStyle
      ? trPlural(fromStyle, { one: '{0} (with {1} reference image)', other: '{0} (with {1} reference images)' }, styled.style.name, fromStyle)
      : styled.style.name;
    field(message, vscode.l10n.t('Style'), name);
  }
  const options = describeOptions(styled.request);
  if (options) field(message, vscode.l10n.t('Options'), options);
  message
    .appendMarkdown('\n')
    .appendText(
      vscode.l10n.t(
        'The gateway reserves {0} before generating and charges the actual cost, expected {1}.',
        formatRubles(estimate.reservation, locale),
        formatRubleRange(estimate.expectedMin, estimate.expectedMax, locale),
      ),
    );
  const balance = services.account.snapshot.balance;
  if (balance !== undefined) message.appendMarkdown('  \n').appendText(vscode.l10n.t('Balance now: {0}.', formatRubles(balance, locale)));
  for (const note of styled.notes) message.appendMarkdown('  \n').appendMarkdown(markdownText(note));
  if (styled.confirm)
    message
      .appendMarkdown('  \n')
      .appendText(vscode.l10n.t('The style comes from a workspace that is not trusted: you will be asked again before it is sent.'));
  return message;
}

/** The answer to the model: what was saved, the cost and the balance, then previews of the images where VS Code takes them. */
export async function toolResult(services: Services, result: CommandResult, kind: ToolKind): Promise<vscode.LanguageModelToolResult> {
  const paths = result.files.map((file) => vscode.workspace.asRelativePath(file, false));
  const locale = services.locale;
  const cost = result.usage?.cost_rub !== undefined ? formatRubles(result.usage.cost_rub, locale) : vscode.l10n.t('unknown');
  const balance = result.usage?.balance !== undefined ? formatRubles(result.usage.balance, locale) : vscode.l10n.t('unknown');
  const summary =
    kind === 'edit'
      ? trPlural(
          paths.length,
          { one: 'Edited into {0} image with {1}. Cost {2}, balance after {3}.', other: 'Edited into {0} images with {1}. Cost {2}, balance after {3}.' },
          paths.length,
          result.model,
          cost,
          balance,
        )
      : trPlural(
          paths.length,
          { one: 'Generated {0} image with {1}. Cost {2}, balance after {3}.', other: 'Generated {0} images with {1}. Cost {2}, balance after {3}.' },
          paths.length,
          result.model,
          cost,
          balance,
        );
  const lines = [summary, vscode.l10n.t('Saved (workspace-relative paths):'), ...paths.map((p) => `- ${p}`)];
  if (result.opaque?.length)
    lines.push(
      opaqueMessage(
        result.model,
        result.opaque.map((u) => u.fsPath),
      ),
    );
  const images = await previewParts(
    result.files.map((file) => file.fsPath),
    (line) => services.log.warn(line),
  );
  // 1.100's typings take text and prompt parts only; a data part is what later versions add.
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(lines.join('\n')), ...(images as vscode.LanguageModelTextPart[])]);
}

/** What went wrong, as a sentence for the model and the person (errors never carry the key). */
export function describeFailure(error: unknown, kind: ToolKind): string {
  if (error instanceof NotConfiguredError) {
    return error.missing === 'baseUrl'
      ? vscode.l10n.t('Image generation is not set up: the gateway address (setting gatewayImages.baseUrl) is missing. Nothing was sent.')
      : vscode.l10n.t('Image generation is not set up: no API key. Run "Gateway Images: Set API Key". Nothing was sent.');
  }
  const summary = summarizeError(error);
  const sent = summary.outcomeUnknown
    ? vscode.l10n.t('The request may have been charged; check the balance before trying again.')
    : error instanceof ValidationError || ['cannot-afford', 'cancelled', 'spending-cap', 'reservation-rose'].includes(summary.kind)
      ? vscode.l10n.t('Nothing was sent.')
      : '';
  const failed = kind === 'edit' ? vscode.l10n.t('Image editing failed: {0}', summary.message) : vscode.l10n.t('Image generation failed: {0}', summary.message);
  return [failed, sent].filter(Boolean).join(' ');
}
