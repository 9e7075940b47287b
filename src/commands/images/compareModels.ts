// Compare Models…: one prompt (and references, for editing) sent to 2 to 6 models of the catalog
// that accept it. One combined estimate, one confirmation, a refusal when the known funds cannot
// cover it; each model is one paid request sent once; results go into the studio's grid, every
// image is saved named after its model and lands in the history.
import { trPlural } from '../../core/common/plural';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { asCostEstimate, combineEstimates } from '../../core/money/combinedEstimate';
import { checkAffordable, formatRubleRange, formatRubles } from '../../core/money/cost';
import { CancelledError, ValidationError } from '../../core/gateway/errors';
import { type ImageModel } from '../../core/gateway/types';
import { type CompareEntry, type CompareOptions, eligibleModels, MAX_COMPARE_MODELS, MIN_COMPARE_MODELS, runComparison } from '../../jobs/compare';
import { withAspectDefault } from '../../jobs/editShape';
import type { ImageJob, PreparedJob } from '../../jobs/jobTypes';
import { readSettings } from '../../host/settings';
import { type Services } from '../../services';
import { comparisonFeed } from '../../jobs/comparisonFeed';
import { type GenerateArgs, isArgsObject, styleInputOf, toGenerateArgs } from '../common/commandArgs';
import { confirmRun, describeStyledRun, refuseUnaffordable } from '../common/confirmRun';
import { resolveEditOutputFolder, resolveOutputFolder } from '../common/outputFolder';
import { askPrompt, modelDetail } from './pickers';
import { runCommandBody } from '../common/showError';
import { applyStyle, askStyle, chooseStyle, showStyleNotes, styledJob } from '../styles/styles';

export const COMPARE_FILE_NAME_PATTERN = '{model}-{slug}-{index}';
const LAST_MODEL_KEY = 'gatewayImages.lastModel';

export interface CompareArgs extends Omit<GenerateArgs, 'model'> {
  /** 2 to 6 model ids of the catalog. */
  models: string[];
  /** Reference images (paths or URIs) for an edit comparison. */
  images?: unknown[];
  /** API only: cancels every model. */
  signal?: AbortSignal;
}

export interface CompareResult {
  runId: string;
  entries: CompareEntry[];
  files: vscode.Uri[];
}

export function compareModelsCommand(services: Services, args?: unknown): Promise<CompareResult | undefined> {
  if (isArgsObject(args)) return runCommandBody(services, true, () => compareModels(services, toCompareArgs(args), false));
  return runCommandBody(services, false, async () => {
    await services.connection.assertReady();
    const title = vscode.l10n.t('Compare Models');
    const asked = await askStyle(services, title);
    const prompt = await askPrompt(title, '', vscode.l10n.t('A lighthouse on a cliff at dawn, watercolour'));
    // Without a Style step (no project styles), the models' list has a Style button: the built-in styles.
    let style = asked;
    let models: string[] | typeof STYLE_CHOSEN;
    while ((models = await pickCompareModels(services, prompt, {}, 0, style, asked === undefined)) === STYLE_CHOSEN) {
      const chosen = await chooseStyle(services, title, style);
      if (chosen) style = chosen.style;
    }
    return compareModels(services, { prompt, models, ...(style ? { style } : {}) }, true);
  });
}

/** What the models' list answers when its Style button is pressed. */
const STYLE_CHOSEN = Symbol('style');

/**
 * A multi-select of the models that accept the request (with the style's options, when one is
 * given); 2 to 6 must be picked. With `styleButton`, a title button to choose the style instead.
 */
export async function pickCompareModels(services: Services, prompt: string, options: CompareOptions, referenceCount: number, style?: string): Promise<string[]>;
export async function pickCompareModels(
  services: Services,
  prompt: string,
  options: CompareOptions,
  referenceCount: number,
  style: string | undefined,
  styleButton: boolean,
): Promise<string[] | typeof STYLE_CHOSEN>;
export async function pickCompareModels(
  services: Services,
  prompt: string,
  options: CompareOptions,
  referenceCount: number,
  style?: string,
  styleButton = false,
): Promise<string[] | typeof STYLE_CHOSEN> {
  const { model: _model, prompt: _prompt, ...styledOptions } = (await applyStyle(services, style, { prompt, options })).request;
  const eligible = eligibleModels(await services.catalog.get(), prompt, styledOptions, referenceCount);
  if (eligible.length < MIN_COMPARE_MODELS) {
    throw new ValidationError(
      'models',
      trPlural(
        eligible.length,
        {
          one: 'Only {0} model of the catalog accepts this request; a comparison needs at least 2. Remove options or references that narrow it.',
          other: 'Only {0} models of the catalog accept this request; a comparison needs at least 2. Remove options or references that narrow it.',
        },
        eligible.length,
      ),
    );
  }
  const button: vscode.QuickInputButton = {
    iconPath: new vscode.ThemeIcon('symbol-color'),
    tooltip: vscode.l10n.t('Style: {0} (choose another)', style ?? vscode.l10n.t('No style')),
  };
  for (;;) {
    const quickPick = vscode.window.createQuickPick<vscode.QuickPickItem & { model: ImageModel }>();
    quickPick.title = style ? `${vscode.l10n.t('Compare Models')} — ${vscode.l10n.t('style {0}', style)}` : vscode.l10n.t('Compare Models');
    quickPick.placeholder = vscode.l10n.t('Pick 2 to 6 models that accept this request');
    quickPick.canSelectMany = true;
    quickPick.ignoreFocusOut = true;
    quickPick.matchOnDescription = true;
    quickPick.items = eligible.map((model) => ({ label: model.id, ...modelDetail(model, services.locale), model }));
    if (styleButton) quickPick.buttons = [button];
    const picked = await new Promise<readonly { model: ImageModel }[] | typeof STYLE_CHOSEN | undefined>((resolve) => {
      quickPick.onDidAccept(() => resolve(quickPick.selectedItems));
      quickPick.onDidTriggerButton(() => resolve(STYLE_CHOSEN));
      quickPick.onDidHide(() => resolve(undefined));
      quickPick.show();
    }).finally(() => quickPick.dispose());
    if (picked === STYLE_CHOSEN) return picked;
    if (!picked) throw new CancelledError(vscode.l10n.t('Cancelled: nothing was sent.'));
    if (picked.length >= MIN_COMPARE_MODELS && picked.length <= MAX_COMPARE_MODELS) return picked.map((p) => p.model.id);
    void vscode.window.showWarningMessage(vscode.l10n.t('Pick from 2 to 6 models; {0} were picked.', picked.length));
  }
}

export async function compareModels(services: Services, args: CompareArgs, interactive: boolean, signal?: AbortSignal): Promise<CompareResult> {
  const ids = args.models;
  if (new Set(ids).size !== ids.length || ids.length < MIN_COMPARE_MODELS || ids.length > MAX_COMPARE_MODELS) {
    throw new ValidationError('models', vscode.l10n.t('"models" must list 2 to 6 different models; got {0}.', ids.length), [
      MIN_COMPARE_MODELS,
      MAX_COMPARE_MODELS,
    ]);
  }
  // Taken before the first await: a second run started meanwhile is refused, not run beside this one.
  if (!comparisonFeed.claim()) throw new ValidationError('models', vscode.l10n.t('A comparison is already running.'));
  try {
    return await compareClaimed(services, args, interactive, signal);
  } finally {
    comparisonFeed.release();
  }
}

/** The comparison that holds the feed: prepare, confirm, then run every model. */
async function compareClaimed(services: Services, args: CompareArgs, interactive: boolean, signal?: AbortSignal): Promise<CompareResult> {
  const ids = args.models;
  const images = (args.images ?? []).map(toFilePath);
  const source = images[0];
  const catalog = await services.catalog.get();
  const { models: _models, images: _images, signal: _signal, ...rest } = args;
  // One style, several models: each model's request is the style resolved with that model.
  const styledByModel = [];
  for (const id of ids) styledByModel.push(await applyStyle(services, args.style, { ...styleInputOf({ ...rest, model: id }), references: images }));
  const first = styledByModel[0]!;
  if (interactive) showStyleNotes(first);
  // With images, next to the first (a style's folder is not used: each model's results sit by the source).
  const directory = source
    ? await resolveEditOutputFolder(source, args.outputDirectory)
    : args.outputDirectory === undefined && first.output.directory
      ? first.output.directory
      : await resolveOutputFolder(args.outputDirectory);
  const jobs: ImageJob[] = [];
  for (const styled of styledByModel) {
    const model: ImageModel | undefined = catalog.find((m) => m.id === styled.request.model);
    // The pattern names the model: a style's pattern would give every model's images the same names.
    const output = { directory, pattern: COMPARE_FILE_NAME_PATTERN, sourceName: source ? path.basename(source, path.extname(source)) : undefined };
    const job = styledJob(styled, output, readSettings().editTransport);
    job.request = await withAspectDefault(job.request, model, source);
    jobs.push(job);
  }
  // Everything before money: each model's request is validated (field named), references checked.
  const prepared: PreparedJob[] = [];
  for (const job of jobs) prepared.push(await services.jobs.prepare(job));
  const combined = combineEstimates(prepared.map((p) => p.estimate));
  refuseUnaffordable(services, checkAffordable(asCostEstimate(combined), await services.account.currentFunds()), combined.requests);
  const promptSent = first.request.prompt;
  const question = vscode.l10n.t('Compare {0} models?', ids.length);
  if (!(await confirmRun(services, combined, question, describeStyledRun(first.style?.name, promptSent), first.confirm))) {
    throw new CancelledError(vscode.l10n.t('Not sent: the cost was not confirmed.'));
  }

  const runId = randomUUID();
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal?.addEventListener('abort', abort);
  args.signal?.addEventListener('abort', abort);
  if (signal?.aborted || args.signal?.aborted) abort();
  const estimateText = vscode.l10n.t(
    'reserved {0}, expected {1}',
    formatRubles(combined.reservation, services.locale),
    formatRubleRange(combined.expectedMin, combined.expectedMax, services.locale),
  );
  comparisonFeed.start({ runId, prompt: promptSent, estimateText, entries: ids.map((model) => ({ model, status: 'waiting', files: [] })) }, controller);
  if (interactive) await vscode.commands.executeCommand('gatewayImages.openStudio');
  let entries: CompareEntry[] = [];
  try {
    entries = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Comparing {0} models', ids.length), cancellable: true },
      (progress, token) => {
        const subscription = token.onCancellationRequested(abort);
        return runComparison(jobs, {
          jobs: services.jobs,
          // Confirmed as a whole: the models do not ask one by one, and none sends more than it showed.
          confirmedReservations: prepared.map((p) => p.estimate.reservation),
          concurrency: readSettings().batchConcurrency,
          signal: controller.signal,
          onUpdate: (current) => {
            comparisonFeed.update(current);
            const finished = current.filter((e) => e.status !== 'waiting' && e.status !== 'running').length;
            progress.report({ message: vscode.l10n.t('{0} of {1} models finished', finished, current.length) });
          },
          history: {
            store: services.history,
            runId,
            warn: (message) => services.log.warn(message),
            onPaidFailure: (failure) => services.outcomes.watch(failure),
          },
        }).finally(() => {
          subscription.dispose();
        });
      },
    );
  } finally {
    comparisonFeed.finish(entries.length ? entries : (comparisonFeed.latest?.entries ?? []));
    signal?.removeEventListener('abort', abort);
    args.signal?.removeEventListener('abort', abort);
  }
  if (entries.some((e) => e.status === 'outcome-unknown')) services.account.reconcileSoon();
  return { runId, entries, files: entries.flatMap((e) => e.files.map((f) => vscode.Uri.file(f))) };
}

/** "Use this model": the winner becomes the default of the next run (pickers and the chat tool). */
export async function useModel(services: Services, model: string): Promise<void> {
  await services.context.globalState.update(LAST_MODEL_KEY, model);
}

function toCompareArgs(args: Record<string, unknown>): CompareArgs {
  const models = args.models;
  if (!Array.isArray(models) || !models.every((m) => typeof m === 'string'))
    throw new ValidationError('models', '"models" must be a list of 2 to 6 model ids.');
  if (args.images !== undefined && !Array.isArray(args.images)) throw new ValidationError('images', '"images" must be a list of image files (Uri or path).');
  const { model: _model, ...generate } = toGenerateArgs({ ...args, model: '' });
  return { ...generate, models: models, images: args.images as unknown[] | undefined, signal: args.signal instanceof AbortSignal ? args.signal : undefined };
}

function toFilePath(value: unknown): string {
  if (value instanceof vscode.Uri) return value.fsPath;
  if (typeof value === 'string') return value.startsWith('file:') ? vscode.Uri.parse(value).fsPath : value;
  throw new ValidationError('images', '"images" must contain Uri objects or file paths.');
}
