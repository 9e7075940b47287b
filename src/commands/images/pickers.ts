// The multi-step quick pick: model, prompt (a Style step first only where the project has styles),
// then a review list of the style and the options offered only from the model's own lists, with the
// final prompt and the estimate shown before anything is sent. Choices are remembered per model
// (not those made under a style, which decides them).
import * as vscode from 'vscode';
import { canEdit } from '../../core/gateway/catalog';
import { estimateCost, formatRubleRange, formatRubles } from '../../core/money/cost';
import { CancelledError, ValidationError } from '../../core/gateway/errors';
import { type GenerationRequest, type ImageModel, OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from '../../core/gateway/types';
import { collectIssues } from '../../core/requests/validation';
import { type AspectDefault, leavesAspectOpen } from '../../jobs/editShape';
import type { OptionOverrides, StyledRequest } from '../../jobs/styledRequest';
import { type Services } from '../../services';
import { trPlural } from '../../core/common/plural';
import { applyStyle, chooseStyle, reviewStyleNames, stylesCode, styleValues } from '../styles/styles';

const CHOICES_KEY = 'gatewayImages.choices';
const LAST_MODEL_KEY = 'gatewayImages.lastModel';

export type Options = Omit<GenerationRequest, 'model' | 'prompt' | 'input_references'>;

function cancelled(): never {
  throw new CancelledError(vscode.l10n.t('Cancelled: nothing was sent.'));
}

export function modelDetail(model: ImageModel, locale: string): { description: string; detail: string } {
  const price = formatRubleRange(model.min_price_per_image, model.max_price_per_image, locale);
  const edits = canEdit(model)
    ? trPlural(model.max_input_references, { one: 'edits up to {0} image', other: 'edits up to {0} images' }, model.max_input_references)
    : vscode.l10n.t('no editing');
  return {
    description: [model.provider, vscode.l10n.t('{0} per image', price)].filter(Boolean).join(' · '),
    detail: [vscode.l10n.t('up to {0} per request', model.max_n), edits, model.supported_resolutions.join('/'), model.description].filter(Boolean).join(' · '),
  };
}

/** Shows the cached catalog at once; fills in when the background refresh arrives. The style's model (else the last one) comes first. */
/** What the model step of Edit Image with AI… offers besides the models (one image): the region editor. */
export const REGION_CHOICE = 'region';

export async function pickModel(services: Services, filter: (m: ImageModel) => boolean, title: string, style?: string): Promise<ImageModel>;
export async function pickModel(
  services: Services,
  filter: (m: ImageModel) => boolean,
  title: string,
  style: string | undefined,
  options: { offerRegion: true },
): Promise<ImageModel | typeof REGION_CHOICE>;
export async function pickModel(
  services: Services,
  filter: (m: ImageModel) => boolean,
  title: string,
  style?: string,
  options: { offerRegion?: boolean } = {},
): Promise<ImageModel | typeof REGION_CHOICE> {
  const lastModel = (await styleValues(style, undefined, services))?.model ?? services.context.globalState.get<string>(LAST_MODEL_KEY);
  const quickPick = vscode.window.createQuickPick<vscode.QuickPickItem & { model?: ImageModel }>();
  quickPick.title = title;
  quickPick.placeholder = vscode.l10n.t('Choose a model');
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  // Like every later step: a click elsewhere must not cancel. The walkthrough's Generate Image and
  // Edit an Image buttons run the command and then focus their step, which closed the picker at once.
  quickPick.ignoreFocusOut = true;
  const fill = (models: ImageModel[]) => {
    const items = models.filter(filter).map((model) => ({ label: model.id, ...modelDetail(model, services.locale), model }));
    // Typing a model's name filters this row away: the whole-image edit keeps its steps.
    quickPick.items = options.offerRegion ? [...items, { label: '', kind: vscode.QuickPickItemKind.Separator }, regionItem()] : items;
    const last = items.find((i) => i.model.id === lastModel);
    if (last) quickPick.activeItems = [last];
  };
  const cached = services.catalog.peek();
  fill(cached);
  quickPick.busy = true;
  void (cached.length ? services.catalog.get() : services.catalog.refresh())
    .then((models) => fill(models))
    .catch((error: unknown) => {
      if (!quickPick.items.length)
        quickPick.placeholder = vscode.l10n.t('Could not load the catalog: {0}', error instanceof Error ? error.message : String(error));
    })
    .finally(() => (quickPick.busy = false));
  try {
    const picked = await new Promise<ImageModel | typeof REGION_CHOICE | undefined>((resolve) => {
      quickPick.onDidAccept(() => {
        const item = quickPick.selectedItems[0];
        resolve(item?.model ?? (item && options.offerRegion ? REGION_CHOICE : undefined));
      });
      quickPick.onDidHide(() => resolve(undefined));
      quickPick.show();
    });
    if (!picked) cancelled();
    if (picked === REGION_CHOICE) return picked;
    await services.context.globalState.update(LAST_MODEL_KEY, picked.id);
    return picked;
  } finally {
    quickPick.dispose();
  }
}

function regionItem(): vscode.QuickPickItem {
  return {
    label: `$(symbol-color) ${vscode.l10n.t('Change only a region…')}`,
    detail: vscode.l10n.t('Paint the part to change in Image Studio: everything outside it stays exactly as it is.'),
  };
}

export async function askPrompt(title: string, initial: string, placeholder: string): Promise<string> {
  const prompt = await vscode.window.showInputBox({
    title,
    value: initial,
    placeHolder: placeholder,
    prompt: vscode.l10n.t('Describe the image'),
    ignoreFocusOut: true,
    validateInput: (text) => (text.trim() ? undefined : vscode.l10n.t('The prompt must not be empty.')),
  });
  if (prompt === undefined) cancelled();
  return prompt.trim();
}

export function rememberedOptions(services: Services, model: ImageModel): Options {
  const all = services.context.globalState.get<Record<string, Options>>(CHOICES_KEY, {});
  const saved = all[model.id] ?? {};
  // A remembered value the model no longer supports is dropped rather than refused.
  const keep = (value: string | undefined, list: string[]) => (value !== undefined && list.includes(value) ? value : undefined);
  return {
    ...saved,
    n: saved.n && saved.n <= model.max_n ? saved.n : undefined,
    resolution: keep(saved.resolution, model.supported_resolutions),
    aspect_ratio: keep(saved.aspect_ratio, model.supported_aspect_ratios),
    background: keep(saved.background, model.supported_background),
  };
}

async function rememberOptions(services: Services, model: ImageModel, options: Options): Promise<void> {
  const all = services.context.globalState.get<Record<string, Options>>(CHOICES_KEY, {});
  await services.context.globalState.update(CHOICES_KEY, { ...all, [model.id]: options });
}

type OptionItem = vscode.QuickPickItem & { action: 'send' | 'show' | 'prompt' | 'style' | keyof Options };

/** What the review starts from: the prompt, the style it is made with, the caller's own references (edit sources). */
export interface ReviewBase {
  prompt: string;
  style?: string;
  references?: string[];
  /** The prompt can be edited in the review (one proposed by a language model, or the selection). */
  editablePrompt?: boolean;
  /** Where the prompt came from, or why the selection is the prompt: shown on the prompt's line. */
  promptNote?: string;
  /** The file whose workspace folder's styles apply (edits: the first source); default: the active editor's. */
  styleUri?: vscode.Uri;
}

/** What the review ends with: the person's own choices over the style, the prompt as accepted, the style. */
export interface Reviewed {
  options: OptionOverrides;
  prompt: string;
  style?: string;
}

/**
 * The review step: the final prompt (with the style's words), the style and every option with its
 * value and where it comes from; choosing one changes it and comes back; the first item sends.
 * Returns the person's own choices over the style (`null`: a style's value cleared to the model's
 * default), the prompt as accepted (edited here when `editablePrompt`) and the style.
 */
export async function reviewRequest(
  services: Services,
  model: ImageModel,
  base: ReviewBase,
  title: string,
  /** Edits: the ratio that keeps the source's shape; it replaces a remembered ratio and says why. */
  aspectDefault?: AspectDefault,
): Promise<Reviewed> {
  let style = base.style;
  let options: OptionOverrides = style ? {} : rememberedOptions(services, model);
  let prompt = base.prompt;
  /** The options chosen in this review: they stay when the style changes. */
  const chosenHere = new Set<keyof Options>();
  const resolve = async (): Promise<{ styled?: StyledRequest; problem?: string }> => {
    try {
      return { styled: await applyStyle(services, style, { prompt, model: model.id, options, references: base.references }, base.styleUri) };
    } catch (error) {
      if (error instanceof ValidationError) return { problem: error.message };
      throw error;
    }
  };
  /** No ratio chosen (nor by the style): keep the shape of the source. */
  const keepShape = async (resolved: { styled?: StyledRequest; problem?: string }) => {
    const { styled } = resolved;
    if (!aspectDefault || options.size !== undefined || options.aspect_ratio !== undefined || (styled && !leavesAspectOpen(styled.request))) return resolved;
    options = { ...options, aspect_ratio: aspectDefault.ratio };
    return resolve();
  };
  // The row shows only when there is a style to offer (the project's, or a starter this model makes).
  const styleRow = base.style !== undefined || (await reviewStyleNames(services, model.id, base.styleUri).catch(() => [])).length > 0;
  let { styled, problem } = await keepShape(await resolve());
  for (;;) {
    const full: GenerationRequest = styled?.request ?? { ...ownValues(options), model: model.id, prompt };
    const fromStyle = styled?.fromStyle ?? [];
    const estimate = estimateCost(model, full.n ?? 1);
    const issues = collectIssues(full, { models: [model], referenceCount: styled?.references.length ?? base.references?.length ?? 0 });
    const reserve = formatRubles(estimate.reservation, services.locale);
    const blocked = problem ?? issues[0]?.message;
    const item = (label: string, field: keyof Options, note?: string) =>
      optionItem(
        label,
        full[field] as string | number | undefined,
        field,
        fromStyle.includes(field) ? [vscode.l10n.t('style {0}', style!), note].filter(Boolean).join(' · ') : note,
      );
    const items: OptionItem[] = [
      {
        label: blocked ? `$(error) ${blocked}` : `$(sparkle) ${vscode.l10n.t('Send (reserve {0})', reserve)}`,
        description: vscode.l10n.t('expected {0}', formatRubleRange(estimate.expectedMin, estimate.expectedMax, services.locale)),
        action: 'send',
      },
      { label: '', kind: vscode.QuickPickItemKind.Separator, action: 'send' },
    ];
    if (base.editablePrompt) {
      items.push({
        label: `$(edit) ${vscode.l10n.t('Prompt')}`,
        description: base.promptNote ?? vscode.l10n.t('choose to edit'),
        detail: prompt,
        action: 'prompt',
      });
    }
    if (styleRow) {
      items.push({
        label: vscode.l10n.t('Style'),
        description: style ?? vscode.l10n.t('No style'),
        detail: style ? undefined : vscode.l10n.t('choose to give the image a look: words around the prompt and options'),
        action: 'style',
      });
    }
    if (style) items.push(...styleItems(style, full.prompt, styled));
    items.push(item(vscode.l10n.t('Number of images'), 'n'));
    if (model.supported_resolutions.length) items.push(item(vscode.l10n.t('Resolution'), 'resolution'));
    if (model.supported_aspect_ratios.length) {
      const keepsShape = aspectDefault && full.aspect_ratio === aspectDefault.ratio && options.aspect_ratio === aspectDefault.ratio;
      items.push(item(vscode.l10n.t('Aspect ratio'), 'aspect_ratio', keepsShape ? aspectDefault.why : undefined));
    }
    if (model.supported_background.length) items.push(item(vscode.l10n.t('Background'), 'background'));
    items.push(
      item(vscode.l10n.t('Quality'), 'quality', model.supported_quality.length ? undefined : vscode.l10n.t('ignored by this model')),
      item(vscode.l10n.t('Format'), 'output_format', model.supported_output_formats.length ? undefined : vscode.l10n.t('ignored by this model')),
      item(vscode.l10n.t('Size'), 'size'),
      item(vscode.l10n.t('Seed'), 'seed', model.supports_seed ? undefined : vscode.l10n.t('ignored by this model')),
    );
    const picked = await vscode.window.showQuickPick(items, {
      title: `${title} — ${model.id}`,
      placeHolder: vscode.l10n.t('Review the options; the first item sends the request'),
      ignoreFocusOut: true,
    });
    if (!picked) cancelled();
    if (picked.action === 'send' && !blocked) {
      if (!style) await rememberOptions(services, model, ownValues(options));
      return { options, prompt, ...(style ? { style } : {}) };
    }
    if (picked.action === 'style') {
      const chosen = await chooseStyle(services, title, style, model.id, base.styleUri);
      if (chosen && chosen.style !== style) {
        style = chosen.style;
        options = stylesCode().optionsAfterStyleChange(options, chosenHere, style !== undefined, rememberedOptions(services, model));
        ({ styled, problem } = await keepShape(await resolve()));
      }
    } else if (picked.action === 'prompt') {
      prompt = await askPrompt(title, prompt, '');
      ({ styled, problem } = await resolve());
    } else if (picked.action !== 'send' && picked.action !== 'show') {
      const styleValue = fromStyle.includes(picked.action) ? (full[picked.action] as string | number | undefined) : undefined;
      const before = options;
      options = await changeOption(model, options, picked.action, styleValue);
      if (options !== before) chosenHere.add(picked.action);
      ({ styled, problem } = await resolve());
    }
  }
}

/** The style's lines of the review: the prompt as it will be sent, and its reference images. */
function styleItems(style: string, prompt: string, styled: StyledRequest | undefined): OptionItem[] {
  const items: OptionItem[] = [{ label: vscode.l10n.t('Prompt sent'), description: vscode.l10n.t('style {0}', style), detail: prompt, action: 'show' }];
  const references = styled?.style?.values.references ?? [];
  if (references.length) {
    const sent = styled!.fromStyle.includes('references');
    items.push({
      label: vscode.l10n.t('Style references'),
      description: `${references.join(', ')} · ${sent ? vscode.l10n.t('sent') : vscode.l10n.t('not sent: the model does not edit')}`,
      action: 'show',
    });
  }
  return items;
}

/** The person's own values, with the cleared ones left out. */
function ownValues(options: OptionOverrides): Options {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== null && v !== undefined));
}

function optionItem(label: string, value: string | number | undefined, action: keyof Options, note?: string): OptionItem {
  const shown = value === undefined || value === '' ? vscode.l10n.t('default') : String(value);
  return { label, description: note ? `${shown} · ${note}` : shown, action };
}

/** A new value for one option; `styleValue`: what the style sets for it (offered back, and "default" then clears it). */
async function changeOption(model: ImageModel, options: OptionOverrides, field: keyof Options, styleValue?: string | number): Promise<OptionOverrides> {
  const fromStyle = styleValue !== undefined || options[field] === null;
  const choose = async (values: readonly (string | number)[]) => {
    const items: { label: string; value: string | number | null | undefined }[] = [
      ...(fromStyle ? [{ label: vscode.l10n.t('as the style sets it'), value: undefined }] : []),
      { label: vscode.l10n.t('default'), value: fromStyle ? null : undefined },
      ...values.map((v) => ({ label: String(v), value: v })),
    ];
    const picked = await vscode.window.showQuickPick(items, { title: field, ignoreFocusOut: true });
    return picked ? { ...options, [field]: picked.value } : options;
  };
  switch (field) {
    case 'n':
      return choose(Array.from({ length: model.max_n }, (_, i) => i + 1));
    case 'resolution':
      return choose(model.supported_resolutions);
    case 'aspect_ratio':
      return choose(model.supported_aspect_ratios);
    case 'background':
      return choose(model.supported_background);
    case 'quality':
      return choose(model.supported_quality.length ? model.supported_quality : QUALITY_VALUES);
    case 'output_format':
      return choose(model.supported_output_formats.length ? model.supported_output_formats : OUTPUT_FORMAT_VALUES);
    case 'size': {
      const size = await vscode.window.showInputBox({
        title: vscode.l10n.t('Size'),
        value: String(options.size ?? styleValue ?? ''),
        prompt: vscode.l10n.t('A tier label such as 2K, WIDTHxHEIGHT with the Latin letter x, or auto. Empty for the default.'),
        ignoreFocusOut: true,
      });
      return size === undefined ? options : { ...options, size: size.trim() || (fromStyle ? null : undefined) };
    }
    case 'seed': {
      const seed = await vscode.window.showInputBox({
        title: vscode.l10n.t('Seed'),
        value: String(options.seed ?? styleValue ?? ''),
        prompt: vscode.l10n.t('A whole number for repeatable results. Empty for random.'),
        validateInput: (v) => (v.trim() === '' || /^-?\d+$/.test(v.trim()) ? undefined : vscode.l10n.t('The seed must be a whole number.')),
        ignoreFocusOut: true,
      });
      return seed === undefined ? options : { ...options, seed: seed.trim() ? Number(seed.trim()) : fromStyle ? null : undefined };
    }
    default:
      return options;
  }
}
