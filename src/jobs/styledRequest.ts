// The one way a style and the caller's own values become the request that is sent: every entry
// point (palette, studio, comparison, prompt files, chat tool, MCP tools) calls
// resolveStyledRequest. The caller's values win; the style fills the rest, adds its words around
// the prompt and its reference images (on models that edit), and names its output. Each problem of
// the style is refused before anything is sent, naming the file, the style and the field.
// No vscode import.
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { canEdit } from '../core/gateway/catalog';
import { ValidationError } from '../core/gateway/errors';
import { decideOutputFolder, OutputFolderError } from '../core/files/outputFolder';
import { confine } from '../core/files/outputPath';
import {
  resolveStyle,
  STYLE_NUMBER_OPTIONS,
  STYLE_TEXT_OPTIONS,
  STYLES_FILE,
  styleError,
  type StyleParams,
  type StyleRecord,
  type StylesSource,
  type StyleValues,
} from '../core/requests/styleFile';
import type { GenerationRequest, ImageModel } from '../core/gateway/types';
import { collectIssues } from '../core/requests/validation';
import { checkReferenceFiles } from './jobFiles';

type Options = Omit<GenerationRequest, 'model' | 'prompt' | 'input_references'>;

/** The caller's own values. `null` clears what the style sets (the model's default then applies). */
export type OptionOverrides = { [K in keyof Options]?: Options[K] | null };

export interface StyleInput {
  prompt: string;
  /** Empty or absent: the style's model. */
  model?: string;
  options?: OptionOverrides;
  /** The caller's own reference images (absolute paths): the sources of an edit. They come first. */
  references?: string[];
}

export interface StyledRequest {
  /** The request to send: the final prompt, the model and every option. */
  request: GenerationRequest;
  /** Reference images to send (absolute): the caller's, then the style's when the model edits. */
  references: string[];
  /** The style's output folder (absolute, inside the workspace) and file name pattern, when it sets them. */
  output: { directory?: string; pattern?: string };
  style?: StyleRecord;
  /** For the person: style references not sent, options the model ignores, output ignored. */
  notes: string[];
  /** The request's fields whose values came from the style. */
  fromStyle: string[];
  /** A style of an untrusted workspace: the person confirms the request before it is sent. */
  confirm: boolean;
}

/** The style (or none) and the caller's values as the request to send, or the first problem of the style. */
export async function resolveStyledRequest(
  source: StylesSource | undefined,
  styleName: string | undefined,
  input: StyleInput,
  models: readonly ImageModel[],
): Promise<StyledRequest> {
  // The caller's model as given: the job normalises it (and says so), a style only needs to know it is there.
  const own = input.model?.trim() ? input.model : '';
  if (!styleName) {
    const request = { ...withoutNulls(input.options ?? {}), model: own, prompt: input.prompt };
    return { request, references: [...(input.references ?? [])], output: {}, notes: [], fromStyle: [], confirm: false };
  }
  if (!source) {
    throw new ValidationError(
      'style',
      l10n.t('There is no styles file: {0} does not exist in this workspace folder. Run "Gateway Images: Edit Styles" to make one.', STYLES_FILE),
    );
  }
  const values = resolveStyle(source, styleName);
  const refuse = (field: string, message: string, allowed?: readonly (string | number)[], kind?: ValidationError['kind']) =>
    styleError(source.file, styleName, field, message, allowed, kind);
  const fromStyle: string[] = [];

  const model = own || values.model || '';
  if (!own && values.model) {
    fromStyle.push('model');
    if (!models.some((m) => m.id === values.model)) {
      throw refuse(
        'model',
        l10n.t('unknown model "{0}"', values.model),
        models.map((m) => m.id),
        'unknown-model',
      );
    }
  }
  const options = mergeOptions(values.options ?? {}, input.options ?? {}, fromStyle);
  const request: GenerationRequest = { ...options, model, prompt: joinPrompt(values.promptPrefix, input.prompt, values.promptSuffix) };
  if (values.promptPrefix || values.promptSuffix) fromStyle.push('prompt');

  const styleReferences = await checkStyleReferences(source, values.references ?? [], refuse);
  const chosen = models.find((m) => m.id === model.trim());
  const notes: string[] = [];
  const ownReferences = input.references ?? [];
  let references = ownReferences;
  if (styleReferences.length && chosen) {
    if (!canEdit(chosen)) {
      notes.push(l10n.t('The reference images of style "{0}" are not sent: {1} does not edit images.', styleName, chosen.id));
    } else if (ownReferences.length + styleReferences.length > chosen.max_input_references) {
      throw refuse(
        'references',
        l10n.t(
          '{0} accepts at most {1} reference images; the style adds {2} to the {3} given',
          chosen.id,
          chosen.max_input_references,
          styleReferences.length,
          ownReferences.length,
        ),
      );
    } else {
      references = [...ownReferences, ...styleReferences];
      fromStyle.push('references');
    }
  }
  if (chosen) checkAgainstModel(request, chosen, models, references.length, fromStyle, refuse, notes);

  const output = source.trusted ? await styleOutput(source, values, refuse) : {};
  if (!source.trusted && (values.outputFolder || values.fileNamePattern)) {
    notes.push(l10n.t('The output folder and file name pattern of style "{0}" are ignored: the workspace is not trusted. Your own settings apply.', styleName));
  }
  const style: StyleRecord = { name: styleName, file: source.file, values };
  return { request, references, output, style, notes, fromStyle, confirm: !source.trusted };
}

/** The style's options with the caller's on top; `fromStyle` collects the fields the style decided. */
function mergeOptions(style: NonNullable<StyleValues['options']>, own: OptionOverrides, fromStyle: string[]): Options {
  const merged: Options = {};
  const set = merged as Record<string, unknown>;
  for (const field of [...STYLE_NUMBER_OPTIONS, ...STYLE_TEXT_OPTIONS]) {
    const mine = own[field];
    if (mine === null) continue;
    if (mine !== undefined) set[field] = mine;
    else if (style[field] !== undefined) {
      set[field] = style[field];
      fromStyle.push(field);
    }
  }
  if (own.params !== null) {
    const params: StyleParams = { ...style.params, ...own.params };
    for (const name of Object.keys(style.params ?? {})) if (!own.params || !(name in own.params)) fromStyle.push(`params.${name}`);
    if (Object.keys(params).length) merged.params = params;
  }
  return merged;
}

/** The caller's options with the cleared ones left out (there is no style to clear them from). */
function withoutNulls(options: OptionOverrides): Options {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== null && v !== undefined));
}

/**
 * The style's words around the prompt, joined by a space (none before punctuation such as ", …"),
 * so "Watercolour:" + "a fox" + ", soft light" reads "Watercolour: a fox, soft light".
 */
export function joinPrompt(prefix: string | undefined, prompt: string, suffix: string | undefined): string {
  const parts = [prefix, prompt, suffix].map((p) => p?.trim() ?? '').filter(Boolean);
  return parts.reduce((text, part) => (!text ? part : /^[,.;:!?)]/.test(part) ? `${text}${part}` : `${text} ${part}`), '');
}

type Refuse = (field: string, message: string, allowed?: readonly (string | number)[], kind?: ValidationError['kind']) => ValidationError;

/** Every reference of the style inside the workspace folder (symbolic links resolved) and an image; absolute paths. */
async function checkStyleReferences(source: StylesSource, references: readonly string[], refuse: Refuse): Promise<string[]> {
  const files: string[] = [];
  for (const [i, reference] of references.entries()) {
    const field = `references[${i}]`;
    const file = path.resolve(source.root, reference);
    const confined = await confine(source.root, file);
    if (!confined.inside) {
      throw refuse(
        field,
        confined.throughLink
          ? l10n.t('{0} leads outside the workspace folder through a symbolic link; use an image inside it', reference)
          : l10n.t('{0} is outside the workspace folder; use an image inside it, relative to the folder', reference),
      );
    }
    try {
      await checkReferenceFiles([file]);
    } catch (error) {
      throw error instanceof ValidationError ? refuse(field, error.message) : error;
    }
    files.push(file);
  }
  return files;
}

/** The model's rules on the values the style decided: a value it does not accept is the style's fault, named as such. */
function checkAgainstModel(
  request: GenerationRequest,
  model: ImageModel,
  models: readonly ImageModel[],
  referenceCount: number,
  fromStyle: readonly string[],
  refuse: Refuse,
  notes: string[],
): void {
  for (const issue of collectIssues(request, { models, referenceCount })) {
    // A provider parameter's issue is named after the parameter.
    const field = fromStyle.includes(`params.${issue.field}`) ? `params.${issue.field}` : issue.field;
    if (field === 'prompt' || !fromStyle.includes(field)) continue;
    throw refuse(field === 'model' ? field : `options.${field}`, issue.message, issue.allowed, issue.kind);
  }
  const ignored = (['quality', 'output_format', 'seed'] as const).filter(
    (field) =>
      fromStyle.includes(field) &&
      (field === 'seed' ? !model.supports_seed : (field === 'quality' ? model.supported_quality : model.supported_output_formats).length === 0),
  );
  if (ignored.length) notes.push(l10n.t('{0} ignores what the style sets for {1}.', model.id, ignored.join(', ')));
}

/** The style's output folder, decided by the one rule (relative to the workspace folder, confined to it), and its file name pattern. */
async function styleOutput(source: StylesSource, values: StyleValues, refuse: Refuse): Promise<StyledRequest['output']> {
  const output: StyledRequest['output'] = {};
  const folder = values.outputFolder?.trim();
  if (folder) {
    try {
      output.directory = await decideOutputFolder({
        value: folder,
        origin: 'style',
        base: source.root,
        workspaceFolders: [source.root],
        field: 'outputFolder',
      });
    } catch (error) {
      throw error instanceof OutputFolderError ? refuse('outputFolder', error.detail) : error;
    }
  }
  if (values.fileNamePattern?.trim()) output.pattern = values.fileNamePattern.trim();
  return output;
}
