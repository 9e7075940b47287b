// Project styles in VS Code: the workspace folder whose styles apply, the "Style" step of the
// pickers and the review's Style row (the last style remembered per workspace), and a style applied to a command's values
// through the one resolution (jobs/styledRequest.ts, loaded from dist/styles.js on first use).
import * as vscode from 'vscode';
import { CancelledError, ValidationError } from '../../core/gateway/errors';
import type { StylesSource, StyleValues } from '../../core/requests/styleFile';
import { STYLES_FILE } from '../../core/requests/stylesPath';
import type { ImageJob } from '../../jobs/jobTypes';
import type { StyledRequest, StyleInput } from '../../jobs/styledRequest';
import type * as StylesModules from '../../jobs/stylesBundle';
import { type Services } from '../../services';
import { starterStylesCode } from './starterStylesChunk';
import { workspaceFolderFor } from '../common/outputFolder';
import { messageText } from '../../core/common/markdownText';

export type StylesCode = typeof StylesModules;

let chunk: StylesCode | undefined;
/** Loads dist/styles.js on first use; esbuild leaves this require alone. */
export function stylesCode(): StylesCode {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./styles.js') as StylesCode;
  return chunk;
}

const LAST_STYLE_KEY = 'gatewayImages.lastStyle';

/** The workspace folder (a local one) whose styles file applies to `uri` (default: the active editor's, else the first). */
export function stylesRoot(uri?: vscode.Uri): string | undefined {
  const folder = workspaceFolderFor(uri);
  return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}

/** The styles of the workspace folder, read now (undefined without a folder or a styles file). Untrusted: read, never sent on their own. */
export async function loadStyles(uri?: vscode.Uri): Promise<StylesSource | undefined> {
  const root = stylesRoot(uri);
  return root === undefined ? undefined : stylesCode().readStyles(root, vscode.workspace.isTrusted);
}

/**
 * The project's styles, or, when the project has no styles file, the built-in starter styles that
 * the catalog can make (core/requests/styleOffer.ts): built-in styles never stand beside a project's.
 * A starter is made with `preferredModel` (the model chosen) when that model can make it.
 */
export async function loadStylesOrStarters(
  services: Services,
  uri?: vscode.Uri,
  fetchCatalog = true,
  preferredModel?: string,
): Promise<StylesSource | undefined> {
  const project = await loadStyles(uri);
  if (project) return project;
  const cached = services.catalog.peek();
  // The studio draws from the cached catalog and again when it changes: it never fetches here.
  const models = cached.length || !fetchCatalog ? cached : await services.catalog.get().catch(() => []);
  const code = stylesCode();
  return code.stylesOnOffer(undefined, () => code.starterSource(stylesRoot(uri) ?? '', models, preferredModel || undefined));
}

/**
 * A style (or none) applied to a caller's values against the catalog. A model the style names that
 * the cached catalog lacks may be new: the catalog is read once more before it is refused.
 */
export async function applyStyle(services: Services, style: string | undefined, input: StyleInput, uri?: vscode.Uri): Promise<StyledRequest> {
  const { resolveStyledRequest } = stylesCode();
  const source = style ? await loadStylesOrStarters(services, uri, true, input.model) : undefined;
  // Without a style nothing is checked against the catalog here: the job does that.
  const models = style ? await services.catalog.get() : [];
  let styled: StyledRequest;
  try {
    styled = await resolveStyledRequest(source, style || undefined, input, models);
  } catch (error) {
    if (!(error instanceof ValidationError && error.field === 'style.model' && error.kind === 'unknown-model')) throw error;
    styled = await resolveStyledRequest(source, style, input, await services.catalog.refresh());
  }
  for (const note of styled.notes) services.log.info(note);
  return styled;
}

/** Says the notes of a styled request (style references not sent, output ignored...) without waiting. */
export function showStyleNotes(styled: StyledRequest): void {
  for (const note of styled.notes) void vscode.window.showInformationMessage(messageText(note));
}

/** The style's values with `extends` applied, for the steps that follow the Style step (its model first). */
export async function styleValues(name: string | undefined, uri?: vscode.Uri, services?: Services): Promise<StyleValues | undefined> {
  if (!name) return undefined;
  const source = services ? await loadStylesOrStarters(services, uri) : await loadStyles(uri);
  return source && stylesCode().resolveStyle(source, name);
}

type StyleItem = vscode.QuickPickItem & { style?: string; error?: ValidationError };

/**
 * The "Style" step, before the model: only where the project's styles file has styles (or a problem
 * to show); the last style used in this workspace first. Without, no step (undefined): the review
 * offers the style in a row (`chooseStyle`), built-in starters included. A style written wrongly is
 * refused when picked.
 */
export async function askStyle(services: Services, title: string, uri?: vscode.Uri): Promise<string | undefined> {
  const code = stylesCode();
  const source = await loadStyles(uri);
  if (!code.asksStyleFirst(source)) return undefined;
  const current = code.preselectedStyle(services.context.workspaceState.get<string>(LAST_STYLE_KEY), source);
  const answer = await pickStyle(services, title, source!, code.styleNames(source!), current, vscode.l10n.t('only what you choose next'));
  if (!answer) throw new CancelledError(vscode.l10n.t('Cancelled: nothing was sent.'));
  if (answer.error) throw answer.error;
  return answer.style;
}

/** The styles a review's Style row offers for the model (project styles, else the starters it makes); none: no row. */
export async function reviewStyleNames(services: Services, model: string, uri?: vscode.Uri): Promise<string[]> {
  return stylesCode().stylesForModel(await loadStylesOrStarters(services, uri, true, model), model);
}

/**
 * The review's Style row: no style, or one on offer for the model, `current` (else the last style
 * used) active; a built-in style has a button that saves it into the project (the list then shows
 * the project's styles). Undefined when dismissed: the review goes on unchanged.
 */
export async function chooseStyle(
  services: Services,
  title: string,
  current: string | undefined,
  model?: string,
  uri?: vscode.Uri,
): Promise<{ style?: string } | undefined> {
  for (;;) {
    const source = await loadStylesOrStarters(services, uri, true, model);
    if (!source) return { style: undefined };
    const code = stylesCode();
    const names = code.stylesForModel(source, model);
    // Without a style yet, the last one used in this workspace is the active row (still "No style" until picked).
    const start = current ?? code.preselectedStyle(services.context.workspaceState.get<string>(LAST_STYLE_KEY), source);
    const answer = await pickStyle(services, title, source, names, start, vscode.l10n.t('only the options of the review'));
    if (!answer) return undefined;
    // A style written wrongly is taken: the review says why it cannot be sent. A file that cannot be read is said here.
    if (answer.error && answer.style === undefined) {
      void vscode.window.showErrorMessage(messageText(answer.error.message));
      continue;
    }
    if (answer.save === undefined) return { style: answer.style };
    // Saved into the project: the list shows the project's styles from now on.
    const saved = await starterStylesCode().saveStarterStyle(services, { style: answer.save });
    if (saved !== undefined) current = saved;
  }
}

const SAVE_BUTTON = (): vscode.QuickInputButton => ({ iconPath: new vscode.ThemeIcon('save'), tooltip: vscode.l10n.t('Save as Project Style…') });

/** A quick pick of "No style" and `names` of the source, `current` active; undefined when dismissed. */
async function pickStyle(
  services: Services,
  title: string,
  source: StylesSource,
  names: readonly string[],
  current: string | undefined,
  noStyleNote: string,
): Promise<{ style?: string; save?: string; error?: ValidationError } | undefined> {
  const code = stylesCode();
  const builtIn = code.isStarterSource(source);
  const items: StyleItem[] = [{ label: `$(circle-slash) ${vscode.l10n.t('No style')}`, description: noStyleNote }];
  // A file that cannot be read as styles is shown (picking it says why), and "No style" still works.
  if (source.fileError) items.push({ label: `$(error) ${source.file}`, detail: source.fileError.message, error: source.fileError });
  for (const name of names) {
    const broken = source.broken.get(name);
    try {
      if (broken) throw broken;
      const values = code.resolveStyle(source, name);
      const words = [values.promptPrefix && `${values.promptPrefix} …`, values.promptSuffix && `… ${values.promptSuffix}`].filter(Boolean).join(' ');
      items.push({
        label: name,
        description: builtIn ? vscode.l10n.t('built-in · {0}', values.model ?? '') : values.model,
        detail: [values.description, words].filter(Boolean).join(' · ') || undefined,
        style: name,
        ...(builtIn ? { buttons: [SAVE_BUTTON()] } : {}),
      });
    } catch (error) {
      const problem = error instanceof ValidationError ? error : new ValidationError('style', String(error));
      items.push({ label: `$(error) ${name}`, detail: problem.message, style: name, error: problem });
    }
  }
  const active = items.find((item) => item.style === current && !item.error) ?? items[0];
  const quickPick = vscode.window.createQuickPick<StyleItem>();
  quickPick.title = title;
  quickPick.placeholder = builtIn
    ? vscode.l10n.t('No project styles yet: built-in styles (save one into {0} to change it)', STYLES_FILE)
    : vscode.l10n.t('Choose a style of this project ({0})', source.file);
  quickPick.items = items;
  quickPick.matchOnDetail = true;
  quickPick.ignoreFocusOut = true;
  if (active) quickPick.activeItems = [active];
  const picked = await new Promise<StyleItem | { save: string } | undefined>((resolve) => {
    quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
    quickPick.onDidTriggerItemButton((event) => resolve({ save: event.item.style ?? '' }));
    quickPick.onDidHide(() => resolve(undefined));
    quickPick.show();
  }).finally(() => quickPick.dispose());
  if (!picked) return undefined;
  if ('save' in picked) return { save: picked.save };
  if (picked.error) return { style: picked.style, error: picked.error };
  // The last style used in this workspace is picked first next time.
  await services.context.workspaceState.update(LAST_STYLE_KEY, picked.style ?? '');
  return { style: picked.style };
}

/** The job of a styled request: its references (the caller's and the style's) go with the edit transport of the settings. */
export function styledJob(styled: StyledRequest, output: ImageJob['output'], transport: ImageJob['transport']): ImageJob {
  return {
    request: styled.request,
    ...(styled.references.length ? { references: styled.references, transport } : {}),
    output,
    ...(styled.style ? { style: styled.style } : {}),
  };
}
