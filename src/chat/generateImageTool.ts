// The language model tool `gatewayImages_generateImage`: chat agents generate images through the
// same job as the Generate Image command. The tool's confirmation IS the cost confirmation: it shows
// the model, the prompt, the reservation and the expected range (from ImageJobService.prepare, which
// sends nothing). The job then asks again only if the reservation grew beyond what was confirmed.
// The model's name, the prompt, the style and its notes come from outside: plain text (markdownText).
import * as vscode from 'vscode';
import { formatRubleRange, formatRubles } from '../core/money/cost';
import { NotConfiguredError, summarizeError, ValidationError } from '../core/gateway/errors';
import { SpendingCap } from '../core/money/spendingCap';
import { type ImageModel } from '../core/gateway/types';
import { readAgentCaps } from '../host/settings';
import { type GenerateArgs, styleInputOf, toGenerateArgs } from '../commands/common/commandArgs';
import { describeOptions } from '../commands/common/confirmCost';
import { generate } from '../commands/images/generate';
import { opaqueMessage } from '../commands/images/jobRunner';
import { applyStyle, styledJob, styleValues } from '../commands/styles/styles';
import { type Services } from '../services';
import { trPlural } from '../core/common/plural';
import { markdownText } from '../core/common/markdownText';

export const GENERATE_IMAGE_TOOL = 'gatewayImages_generateImage';
const LAST_MODEL_KEY = 'gatewayImages.lastModel';
/** Confirmed reservations kept for invoke(); a confirmation is used once. */
const MAX_PENDING = 32;

/** The tool's input (package.json `languageModelTools[].inputSchema`). */
export interface GenerateImageInput {
  prompt: string;
  model?: string;
  n?: number;
  resolution?: string;
  aspect_ratio?: string;
  background?: string;
  size?: string;
  quality?: string;
  output_format?: string;
  seed?: number;
  style?: string;
}

export function registerChatTool(services: Services): vscode.Disposable {
  try {
    return vscode.lm.registerTool<GenerateImageInput>(GENERATE_IMAGE_TOOL, createGenerateImageTool(services));
  } catch (error) {
    // A host without language model tools must not fail the whole activation.
    services.log.warn(`The chat tool could not be registered: ${summarizeError(error).message}`);
    return new vscode.Disposable(() => undefined);
  }
}

export function createGenerateImageTool(services: Services): vscode.LanguageModelTool<GenerateImageInput> {
  /** Reservation the person confirmed, by request (JSON): invoke() lets the job ask only above it. */
  const confirmed = new Map<string, number>();
  // "Always Allow" skips the confirmation: the agents' caps bound the spending (this window's session).
  const cap = new SpendingCap(readAgentCaps, services.locale);

  return {
    async prepareInvocation({ input }) {
      try {
        const args = await resolveArgs(services, input);
        // The request as it will be sent: the style's words around the prompt, its model and options.
        const styled = await applyStyle(services, args.style, styleInputOf(args));
        const { model, estimate } = await services.jobs.prepare(styledJob(styled, { directory: '', pattern: '' }, 'input_references'));
        remember(confirmed, keyOf(args), estimate.reservation);
        const locale = services.locale;
        const message = new vscode.MarkdownString();
        message
          .appendMarkdown(`**${vscode.l10n.t('Model')}:** `)
          .appendMarkdown(markdownText(model.id))
          .appendMarkdown('  \n');
        message
          .appendMarkdown(`**${vscode.l10n.t('Prompt')}:** `)
          .appendMarkdown(markdownText(styled.request.prompt))
          .appendMarkdown('  \n');
        if (styled.style) {
          const references = styled.fromStyle.includes('references') ? styled.style.values.references?.length : 0;
          message
            .appendMarkdown(`**${vscode.l10n.t('Style')}:** `)
            .appendMarkdown(
              markdownText(
                references
                  ? trPlural(references, { one: '{0} (with {1} reference image)', other: '{0} (with {1} reference images)' }, styled.style.name, references)
                  : styled.style.name,
              ),
            )
            .appendMarkdown('  \n');
        }
        const options = describeOptions(styled.request);
        if (options)
          message
            .appendMarkdown(`**${vscode.l10n.t('Options')}:** `)
            .appendMarkdown(markdownText(options))
            .appendMarkdown('  \n');
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
        return {
          // A MarkdownString: a string may be rendered as Markdown too, and the model's name is the gateway's.
          invocationMessage: new vscode.MarkdownString(
            markdownText(trPlural(estimate.n, { one: 'Generating {0} image with {1}…', other: 'Generating {0} images with {1}…' }, estimate.n, model.id)),
          ),
          confirmationMessages: {
            title: trPlural(estimate.n, { one: 'Generate {0} image with {1}?', other: 'Generate {0} images with {1}?' }, estimate.n, model.id),
            message,
          },
        };
      } catch {
        // Nothing can be estimated (invalid input, no key...): invoke() reports why. Should it
        // succeed after all, the job asks for confirmation itself (nothing was confirmed here).
        return { invocationMessage: vscode.l10n.t('Checking the image request…') };
      }
    },

    async invoke({ input }, token) {
      const controller = new AbortController();
      const subscription = token.onCancellationRequested(() => controller.abort());
      try {
        const args = await resolveArgs(services, input);
        const key = keyOf(args);
        const reservation = confirmed.get(key);
        confirmed.delete(key);
        // Confirmed here: the job asks only above that reservation; nothing confirmed: it always asks.
        const jobs = services.jobs.withDeps({ confirmAbove: () => reservation ?? -1, cap });
        const result = await generate({ ...services, jobs }, args, false, { signal: controller.signal, origin: { kind: 'chat' } });
        const paths = result.files.map((file) => vscode.workspace.asRelativePath(file, false));
        const locale = services.locale;
        const cost = result.usage?.cost_rub !== undefined ? formatRubles(result.usage.cost_rub, locale) : vscode.l10n.t('unknown');
        const balance = result.usage?.balance !== undefined ? formatRubles(result.usage.balance, locale) : vscode.l10n.t('unknown');
        const lines = [
          trPlural(
            paths.length,
            { one: 'Generated {0} image with {1}. Cost {2}, balance after {3}.', other: 'Generated {0} images with {1}. Cost {2}, balance after {3}.' },
            paths.length,
            result.model,
            cost,
            balance,
          ),
          vscode.l10n.t('Saved (workspace-relative paths):'),
          ...paths.map((p) => `- ${p}`),
        ];
        if (result.opaque?.length)
          lines.push(
            opaqueMessage(
              result.model,
              result.opaque.map((u) => u.fsPath),
            ),
          );
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(lines.join('\n'))]);
      } catch (error) {
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(describeFailure(error))]);
      } finally {
        subscription.dispose();
      }
    },
  };
}

/** The input as Generate Image arguments, with a default model when none is given. */
async function resolveArgs(services: Services, input: GenerateImageInput): Promise<GenerateArgs> {
  if (typeof input !== 'object' || input === null) throw new ValidationError('prompt', vscode.l10n.t('The tool input must be an object with a "prompt".'));
  const given = typeof input.model === 'string' && input.model.trim() ? input.model.trim() : undefined;
  // Without a model: the style's, else the default.
  const styleModel = !given && typeof input.style === 'string' ? (await styleValues(input.style, undefined, services))?.model : undefined;
  const model = given ?? (styleModel ? '' : await defaultModel(services));
  return toGenerateArgs({ ...input, model, prompt: typeof input.prompt === 'string' ? input.prompt.trim() : input.prompt });
}

/** The remembered last model when it still exists and generates, else the cheapest model that generates. */
export async function defaultModel(services: Services): Promise<string> {
  const models = (await services.catalog.get()).filter((m) => m.supports_generation);
  const last = services.context.globalState.get<string>(LAST_MODEL_KEY);
  if (last && models.some((m) => m.id === last)) return last;
  const cheapest = [...models].sort(byPrice)[0];
  if (!cheapest) throw new ValidationError('model', vscode.l10n.t('The gateway lists no model that generates images.'));
  return cheapest.id;
}

function byPrice(a: ImageModel, b: ImageModel): number {
  return a.max_price_per_image - b.max_price_per_image || a.min_price_per_image - b.min_price_per_image || a.id.localeCompare(b.id);
}

function keyOf(args: GenerateArgs): string {
  return JSON.stringify(args);
}

function remember(map: Map<string, number>, key: string, reservation: number): void {
  map.delete(key);
  map.set(key, reservation);
  while (map.size > MAX_PENDING) map.delete(map.keys().next().value!);
}

/** What went wrong, as a sentence for the model and the person (errors never carry the key). */
function describeFailure(error: unknown): string {
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
  return [vscode.l10n.t('Image generation failed: {0}', summary.message), sent].filter(Boolean).join(' ');
}
