// Arguments of the commands when they run without prompts (keybindings, tasks, other extensions).
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../../core/gateway/errors';
import { type GenerationRequest } from '../../core/gateway/types';
import type { OptionOverrides, StyleInput } from '../../jobs/styledRequest';
import type { RegionArgs } from '../../core/files/maskInput';

/** A request's fields, `null` clearing what a style sets; `model` may be empty when the style names one. */
export interface GenerateArgs extends OptionOverrides {
  prompt: string;
  model: string;
  /** A style of the workspace's styles file (.gateway-images/styles.json). */
  style?: string;
  outputDirectory?: string;
}

/** `mask` (a PNG in the workspace, the image's size): only the region it marks changes (one image only); `feather`, `wholeImage`: see RegionArgs. */
export interface EditArgs extends GenerateArgs, RegionArgs {
  /** Paths or file URIs (strings) of the reference images; Uri objects from the API. */
  images: unknown[];
}

const OPTION_FIELDS = ['n', 'resolution', 'aspect_ratio', 'size', 'quality', 'output_format', 'background', 'output_compression', 'seed'] as const;

/** Whether an argument object was given at all (a command from the palette gets none). */
export function isArgsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !('scheme' in value);
}

/** Picks the known fields; type errors are left to validation, which names the field. */
export function toGenerateArgs(args: Record<string, unknown>): GenerateArgs {
  if (typeof args.prompt !== 'string') throw new ValidationError('prompt', l10n.t('"prompt" must be a text.'));
  if (args.style !== undefined && (typeof args.style !== 'string' || !args.style.trim())) {
    throw new ValidationError('style', l10n.t('"style" must be the name of a style of the workspace.'));
  }
  const style = typeof args.style === 'string' ? args.style.trim() : undefined;
  // With a style, the model may be left to it.
  const model = args.model === undefined && style ? '' : args.model;
  if (typeof model !== 'string') throw new ValidationError('model', l10n.t('"model" must be a model id (text).'));
  const result: GenerateArgs = { prompt: args.prompt, model, ...(style ? { style } : {}) };
  for (const field of OPTION_FIELDS) if (args[field] !== undefined) (result as unknown as Record<string, unknown>)[field] = args[field];
  if (args.params !== undefined) {
    if (args.params !== null && (typeof args.params !== 'object' || Array.isArray(args.params))) {
      throw new ValidationError('params', l10n.t('"params" must be an object of provider-specific parameters.'));
    }
    result.params = args.params as GenerationRequest['params'] | null;
  }
  if (args.outputDirectory !== undefined) {
    if (typeof args.outputDirectory !== 'string') throw new ValidationError('outputDirectory', l10n.t('"outputDirectory" must be a folder path.'));
    result.outputDirectory = args.outputDirectory;
  }
  return result;
}

/** What the style resolution takes from the arguments: the prompt, the model and the options (references are the caller's). */
export function styleInputOf(args: GenerateArgs): StyleInput {
  const { prompt, model, style: _style, outputDirectory: _dir, ...options } = args;
  return { prompt, model, options };
}
