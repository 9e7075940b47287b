// Pure conversions between the services' data and the page's messages: models, account, gallery,
// form <-> request, and the live estimate. No vscode import (the page never sees these types).
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FUNDS_MAX_AGE_MS, type AccountSnapshot } from '../../account/accountModel';
import * as l10n from '@vscode/l10n';
import { canEdit } from '../../core/gateway/catalog';
import { checkAffordable, estimateCost, formatRubleRange, formatRubles, fundsAfter } from '../../core/money/cost';
import { type GenerationRequest, type ImageModel, OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from '../../core/gateway/types';
import { collectIssues } from '../../core/requests/validation';
import type { GallerySlot, ResultsIndex } from '../../jobs/results/resultsIndex';
import type { GenerateArgs } from '../../commands/common/commandArgs';
import {
  FORM_FIELDS,
  STYLE_FIELDS,
  type AccountView,
  type EvaluationMessage,
  type FormField,
  type FormInteraction,
  type FormValues,
  type GalleryItem,
  type GalleryPageView,
  type Issue,
  type ModelInfo,
} from '../protocol/protocol';

export function toModelInfo(model: ImageModel, locale: string): ModelInfo {
  return {
    id: model.id,
    provider: model.provider,
    description: model.description,
    priceText: formatRubleRange(model.min_price_per_image, model.max_price_per_image, locale),
    maxN: model.max_n,
    maxReferences: canEdit(model) ? model.max_input_references : 0,
    supportsGeneration: model.supports_generation,
    resolutions: model.supported_resolutions,
    aspectRatios: model.supported_aspect_ratios,
    backgrounds: model.supported_background,
    // Quality and format are universal: the model's own list when it has one, else every value.
    qualities: model.supported_quality.length ? model.supported_quality : [...QUALITY_VALUES],
    formats: model.supported_output_formats.length ? model.supported_output_formats : [...OUTPUT_FORMAT_VALUES],
    supportsSeed: model.supports_seed,
    passthrough: model.allowed_passthrough_parameters,
  };
}

export function toAccountView(snapshot: AccountSnapshot, locale: string): AccountView {
  return {
    status: snapshot.status,
    ...(snapshot.switching ? { switchingText: l10n.t('The API key or gateway changed: reading the new balance…') } : {}),
    balanceText: snapshot.balance === undefined ? undefined : formatRubles(snapshot.balance, locale),
    budgetText: snapshot.budget === undefined ? undefined : formatRubles(snapshot.budget, locale),
  };
}

/** The cards of gallery slots (a saved file of a result each), in the gallery's order. */
export function toGalleryItems(slots: readonly GallerySlot[], locale: string): GalleryItem[] {
  const date = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
  return slots.map(({ entry, file }) => ({
    entryId: entry.id,
    file,
    uri: pathToFileURL(file).href,
    name: path.basename(file),
    prompt: entry.request.prompt,
    model: entry.model,
    costText: entry.costRub === undefined ? undefined : formatRubles(entry.costRub, locale),
    dateText: safeDate(date, entry.createdAt),
    isEdit: !!entry.references?.length,
  }));
}

/** Items `start`… of the gallery, at most `count`. */
export function toGalleryPage(index: Pick<ResultsIndex, 'galleryPage' | 'galleryCount'>, start: number, count: number, locale: string): GalleryPageView {
  return { total: index.galleryCount, start, items: toGalleryItems(index.galleryPage(start, count), locale) };
}

/** "JPEG · 1024×768": what a card shows for an image without a thumbnail. */
export function thumbnailStandIn(thumbnail: { format: string; width?: number; height?: number }): string {
  return thumbnail.width && thumbnail.height ? `${thumbnail.format} · ${thumbnail.width}×${thumbnail.height}` : thumbnail.format;
}

function safeDate(format: Intl.DateTimeFormat, iso: string): string {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? '' : format.format(time);
}

const OPTIONAL_TEXT = ['resolution', 'aspect_ratio', 'background', 'quality', 'output_format', 'size'] as const;

/** The request of a form. A number typed wrongly is passed on as text so validation names it. */
export function toRequest(form: FormValues): Omit<GenerationRequest, 'input_references'> {
  const request: GenerationRequest = { model: form.model.trim(), prompt: form.prompt.trim(), n: form.n };
  for (const key of OPTIONAL_TEXT) {
    const value = form[key]?.trim();
    if (value) request[key] = value;
  }
  const seed = wholeNumber(form.seed);
  if (seed !== undefined) request.seed = seed as number;
  const compression = wholeNumber(form.output_compression);
  if (compression !== undefined) request.output_compression = compression as number;
  const params = Object.entries(form.params).filter(([, v]) => v.trim() !== '');
  if (params.length) request.params = Object.fromEntries(params.map(([k, v]) => [k, passthroughValue(v.trim())]));
  return request;
}

function wholeNumber(text: string | undefined): number | string | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

/** Text inputs carry text; numbers and booleans typed into them are meant as such. */
function passthroughValue(text: string): string | number | boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+(\.\d+)?$/.test(text) && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/**
 * What the person chose in a form, as command arguments. With a style, a field that shows the
 * style's value is left to the style (read again from its file), and a field they emptied clears it.
 */
export function formArgs(form: FormValues): GenerateArgs {
  const request = toRequest(form);
  if (!form.style) return request;
  const fromStyle = new Set<string>(form.fromStyle ?? []);
  const args: GenerateArgs = { ...request, style: form.style, model: fromStyle.has('model') ? '' : request.model };
  const fields = args as unknown as Record<string, unknown>;
  for (const field of STYLE_FIELDS) {
    if (field === 'model') continue;
    if (fromStyle.has(field)) delete fields[field];
    else if (fields[field] === undefined) fields[field] = null;
  }
  return args;
}

/** The form of a past request ("regenerate"). */
export function toFormValues(request: GenerationRequest, references: string[]): FormValues {
  const text = (v: number | undefined) => (v === undefined ? undefined : String(v));
  return {
    model: request.model,
    prompt: request.prompt,
    n: Number.isInteger(request.n) && request.n! >= 1 && request.n! <= 10 ? request.n! : 1,
    resolution: request.resolution,
    aspect_ratio: request.aspect_ratio,
    background: request.background,
    quality: request.quality,
    output_format: request.output_format,
    size: request.size,
    seed: text(request.seed),
    output_compression: text(request.output_compression),
    params: Object.fromEntries(Object.entries(request.params ?? {}).map(([k, v]) => [k, String(v)])),
    references,
  };
}

/** The form field an issue is about; undefined for issues of no single field (provider parameters…). */
function formFieldOf(issue: Issue): FormField | undefined {
  const root = issue.field.split(/[.[]/)[0] ?? '';
  if (root === 'input_references' || root === 'images') return 'references';
  return (FORM_FIELDS as readonly string[]).includes(root) ? (root as FormField) : undefined;
}

/**
 * No red errors on a form nobody has touched: an issue shows once its field was edited (issues of
 * no single field once anything was edited), every issue once Generate was pressed. While some are
 * held back and none shows, a neutral hint takes their place.
 */
export function visibleIssues(issues: readonly Issue[], interaction: FormInteraction): { issues: Issue[]; hiddenIssues: number; hint?: string } {
  const shown = interaction.submitted
    ? [...issues]
    : issues.filter((issue) => {
        const field = formFieldOf(issue);
        return field ? interaction.edited.includes(field) : interaction.edited.length > 0;
      });
  const hiddenIssues = issues.length - shown.length;
  return { issues: shown, hiddenIssues, hint: hiddenIssues > 0 && shown.length === 0 ? l10n.t('Choose a model and write a prompt') : undefined };
}

/** A form with a style, as the one resolution made it: the request to send, or the style's problem. */
export interface StyledForm {
  request: GenerationRequest;
  referenceCount: number;
  /** The prompt as it will be sent (the style's words around the person's). */
  promptSent: string;
  problem?: Issue;
  notes: string[];
}

/** Issues of the form (collectIssues; a style's problem first) and the estimate against the account's known funds. */
export function evaluateForm(
  form: FormValues,
  models: readonly ImageModel[],
  account: AccountSnapshot,
  locale: string,
  requestId: number,
  interaction: FormInteraction = { edited: [], submitted: true },
  styled?: StyledForm,
): EvaluationMessage {
  const request = styled?.request ?? toRequest(form);
  const referenceCount = styled?.referenceCount ?? form.references.length;
  const all = [
    ...(styled?.problem ? [styled.problem] : []),
    ...collectIssues(request, { models, referenceCount }).map(({ field, message }) => ({ field, message })),
  ];
  const { issues, hiddenIssues, hint } = visibleIssues(all, interaction);
  const styleParts = styled && !styled.problem ? { promptSent: styled.promptSent, styleNotes: styled.notes } : {};
  const model = models.find((m) => m.id === request.model);
  if (!model) return { type: 'evaluation', requestId, issues, hiddenIssues, hint, ...styleParts };
  const estimate = estimateCost(model, request.n ?? 1);
  const funds = { balance: account.balance, budget: account.budget };
  const after = fundsAfter(funds, estimate.reservation);
  // The form is refused only on current figures of this key (the job checks again before sending).
  const current = account.status === 'ready' && !account.switching && account.updatedAt !== undefined && Date.now() - account.updatedAt <= FUNDS_MAX_AGE_MS;
  const refused =
    !!account.budgetRefusal && !(account.budget !== undefined && account.budgetRefusal.budget !== undefined && account.budget > account.budgetRefusal.budget);
  const affordable = current ? checkAffordable(estimate, { ...funds, budgetRefusedByGateway: refused }) : { ok: true as const };
  return {
    type: 'evaluation',
    requestId,
    issues,
    hiddenIssues,
    hint,
    ...styleParts,
    estimate: {
      reservationText: formatRubles(estimate.reservation, locale),
      expectedText: formatRubleRange(estimate.expectedMin, estimate.expectedMax, locale),
      balanceAfterText: after.balance === undefined ? undefined : formatRubles(after.balance, locale),
      budgetAfterText: after.budget === undefined ? undefined : formatRubles(after.budget, locale),
      cannotAfford: affordable.ok ? undefined : affordable.scope,
    },
  };
}
