// Host side of the studio's style picker: the styles as the page shows them (pushed again when the
// file changes), a form with its style resolved for the live evaluation, and "Save as Style…".
// Every request still goes through the one resolution (commands/styles/styles.ts applyStyle).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { editStyles, saveStyle } from '../../commands/styles/editStyles';
import { showError } from '../../commands/common/showError';
import { applyStyle, loadStylesOrStarters, stylesCode, stylesRoot } from '../../commands/styles/styles';
import { ValidationError } from '../../core/gateway/errors';
import type { StyleDefinition, StylesSource, StyleValues } from '../../core/requests/styleFile';
import { STYLES_FILE } from '../../core/requests/stylesPath';
import { type Services } from '../../services';
import type { FormValues } from '../protocol/protocol';
import type { StyleFromWebviewMessage, StylesView, StyleView } from '../protocol/styleProtocol';
import { formArgs, type StyledForm, toRequest } from '../model/view';

/** The workspace's styles as the picker shows them; without a styles file, the built-in starter styles. */
export async function stylesView(services: Services): Promise<StylesView> {
  let source: StylesSource | undefined;
  try {
    source = await loadStylesOrStarters(services, undefined, false);
  } catch (error) {
    return { file: STYLES_FILE, exists: true, error: error instanceof Error ? error.message : String(error), styles: [] };
  }
  if (!source) return { file: STYLES_FILE, exists: false, styles: [] };
  const builtIn = stylesCode().isStarterSource(source);
  if (source.fileError) return { file: source.file, exists: true, error: source.fileError.message, styles: [] };
  const code = stylesCode();
  const styles = code.styleNames(source).map((name): StyleView => {
    try {
      return toStyleView(name, code.resolveStyle(source, name), source.trusted);
    } catch (error) {
      return { name, error: error instanceof Error ? error.message : String(error), options: {}, params: {}, references: [] };
    }
  });
  return builtIn ? { file: STYLES_FILE, exists: false, builtIn: true, styles } : { file: source.file, exists: true, styles };
}

function toStyleView(name: string, values: StyleValues, trusted: boolean): StyleView {
  const { params, ...options } = values.options ?? {};
  const output = [values.outputFolder, values.fileNamePattern].filter(Boolean).join(' · ');
  return {
    name,
    description: values.description,
    model: values.model,
    promptPrefix: values.promptPrefix,
    promptSuffix: values.promptSuffix,
    options: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, String(v)])),
    params: Object.fromEntries(Object.entries(params ?? {}).map(([k, v]) => [k, String(v)])),
    references: values.references ?? [],
    ...(output ? { outputText: trusted ? output : vscode.l10n.t('{0} (ignored: the workspace is not trusted)', output) } : {}),
  };
}

/** Fires when a styles file is made, changed or deleted, or the workspace becomes trusted. */
export function watchStyles(onChange: () => void): vscode.Disposable {
  const watcher = vscode.workspace.createFileSystemWatcher(`**/${STYLES_FILE}`);
  return vscode.Disposable.from(
    watcher,
    watcher.onDidChange(onChange),
    watcher.onDidCreate(onChange),
    watcher.onDidDelete(onChange),
    vscode.workspace.onDidGrantWorkspaceTrust(onChange),
  );
}

/** The form's request as it will be sent, or the style's problem (for the live evaluation); undefined without a style. */
export async function styledForm(services: Services, form: FormValues, references: string[]): Promise<StyledForm | undefined> {
  if (!form.style) return undefined;
  const { prompt, model, style, outputDirectory: _dir, ...options } = formArgs(form);
  try {
    // Before the prompt is written, the style's words show around a placeholder.
    const styled = await applyStyle(services, style, { prompt: prompt || '…', model, options, references });
    const request = { ...styled.request, prompt: prompt ? styled.request.prompt : '' };
    return { request, referenceCount: styled.references.length, promptSent: styled.request.prompt, notes: styled.notes };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const problem = { field: error.field, message: error.message };
    return { request: toRequest(form), referenceCount: references.length, promptSent: '', problem, notes: [] };
  }
}

/** "Save as Style…" and "Edit Styles" from the page; resolves the saved style's name. */
export async function handleStyleMessage(services: Services, message: StyleFromWebviewMessage<FormValues>): Promise<string | undefined> {
  try {
    if (message.type === 'editStyles') {
      await editStyles();
      return undefined;
    }
    return await saveStyle(await styleOfForm(services, message.form), message.form.style ?? '');
  } catch (error) {
    void showError(services, error);
    return undefined;
  }
}

/** The form as a style: its model and options (the style's words and references kept), its references added. */
async function styleOfForm(services: Services, form: FormValues): Promise<StyleDefinition> {
  const { model, prompt: _prompt, ...options } = toRequest(form);
  // A built-in style's words come along: this is how the studio saves one as a project style.
  const current = form.style ? await currentValues(services, form.style) : undefined;
  const root = stylesRoot();
  const own = root === undefined ? [] : form.references.map((file) => path.relative(root, file).split(path.sep).join('/'));
  const references = [...new Set([...own, ...(current?.references ?? [])])];
  return {
    ...(current?.description ? { description: current.description } : {}),
    ...(current?.promptPrefix ? { promptPrefix: current.promptPrefix } : {}),
    ...(current?.promptSuffix ? { promptSuffix: current.promptSuffix } : {}),
    ...(model ? { model } : {}),
    ...(Object.keys(options).length ? { options } : {}),
    ...(references.length ? { references } : {}),
    ...(current?.outputFolder ? { outputFolder: current.outputFolder } : {}),
    ...(current?.fileNamePattern ? { fileNamePattern: current.fileNamePattern } : {}),
  };
}

async function currentValues(services: Services, style: string): Promise<StyleValues | undefined> {
  const source = await loadStylesOrStarters(services);
  return source && stylesCode().resolveStyle(source, style);
}
