// The language model tool `gatewayImages_generateImage`: chat agents generate images through the
// same job as the Generate Image command. The tool's confirmation IS the cost confirmation
// (toolParts.ts); the job then asks again only if the reservation grew beyond what was confirmed.
// The result carries previews of the images where VS Code takes them (imageParts.ts).
import * as vscode from 'vscode';
import { ValidationError } from '../core/gateway/errors';
import { type SpendingCap } from '../core/money/spendingCap';
import { type ImageModel } from '../core/gateway/types';
import { type GenerateArgs, styleInputOf, toGenerateArgs } from '../commands/common/commandArgs';
import { generate } from '../commands/images/generate';
import { applyStyle, styledJob, styleValues } from '../commands/styles/styles';
import { type Services } from '../services';
import { trPlural } from '../core/common/plural';
import { markdownText } from '../core/common/markdownText';
import { ConfirmedReservations, confirmationMessage, invokeImageTool } from './toolParts';

export const LAST_MODEL_KEY = 'gatewayImages.lastModel';

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

export function createGenerateImageTool(services: Services, cap: SpendingCap): vscode.LanguageModelTool<GenerateImageInput> {
  const confirmed = new ConfirmedReservations();
  return {
    async prepareInvocation({ input }) {
      try {
        const args = await resolveArgs(services, input);
        // The request as it will be sent: the style's words around the prompt, its model and options.
        const styled = await applyStyle(services, args.style, styleInputOf(args));
        const { model, estimate } = await services.jobs.prepare(styledJob(styled, { directory: '', pattern: '' }, 'input_references'));
        confirmed.remember(keyOf(args), estimate.reservation);
        return {
          // A MarkdownString: a string may be rendered as Markdown too, and the model's name is the gateway's.
          invocationMessage: new vscode.MarkdownString(
            markdownText(trPlural(estimate.n, { one: 'Generating {0} image with {1}…', other: 'Generating {0} images with {1}…' }, estimate.n, model.id)),
          ),
          confirmationMessages: {
            title: trPlural(estimate.n, { one: 'Generate {0} image with {1}?', other: 'Generate {0} images with {1}?' }, estimate.n, model.id),
            message: confirmationMessage(services, styled, model, estimate),
          },
        };
      } catch {
        // Nothing can be estimated (invalid input, no key...): invoke() reports why. Should it
        // succeed after all, the job asks for confirmation itself (nothing was confirmed here).
        return { invocationMessage: vscode.l10n.t('Checking the image request…') };
      }
    },

    invoke: ({ input }, token) =>
      invokeImageTool(services, token, {
        kind: 'generate',
        // Confirmed here: the job asks only above that reservation; nothing confirmed: it always asks.
        confirmed,
        cap,
        resolve: () => resolveArgs(services, input),
        keyOf,
        run: (withCap, args, extra) => generate(withCap, args, false, extra),
      }),
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

export function byPrice(a: ImageModel, b: ImageModel): number {
  return a.max_price_per_image - b.max_price_per_image || a.min_price_per_image - b.min_price_per_image || a.id.localeCompare(b.id);
}

export function keyOf(args: object): string {
  return JSON.stringify(args);
}
