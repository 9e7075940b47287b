// Generate Image: from the palette as a multi-step quick pick, or without prompts from arguments.
import * as vscode from 'vscode';
import { NotConfiguredError } from '../core/errors';
import { Services } from '../services';
import { GenerateArgs, isArgsObject, requestOf, toGenerateArgs } from './commandArgs';
import { CommandResult, RunExtras, runJobCommand } from './jobRunner';
import { resolveOutputFolder } from './outputFolder';
import { askPrompt, pickModel, reviewOptions } from './pickers';
import { showError } from './showError';

export const FILE_NAME_PATTERN_DEFAULT = '{date}-{slug}-{model}-{index}';

export function registerGenerate(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.generate', (args?: unknown) => generateCommand(services, args));
}

export async function generateCommand(services: Services, args?: unknown): Promise<CommandResult | undefined> {
  if (isArgsObject(args)) {
    try {
      return await generate(services, toGenerateArgs(args), false);
    } catch (error) {
      if (!isShown(error)) void showError(services, error);
      throw error;
    }
  }
  try {
    const chosen = await askGenerateArgs(services);
    return await generate(services, chosen, true);
  } catch (error) {
    // Interactive runs show their errors; they are not rethrown into the command service.
    if (!isShown(error)) await showError(services, error);
    return undefined;
  }
}

/** Runs a generation; shared by the command, the public API and the studio. */
export async function generate(services: Services, args: GenerateArgs, interactive: boolean, extra: RunExtras = {}): Promise<CommandResult> {
  const directory = await resolveOutputFolder(args.outputDirectory);
  const pattern = vscode.workspace.getConfiguration('gatewayImages').get<string>('fileNamePattern', FILE_NAME_PATTERN_DEFAULT);
  return runJobCommand(
    services,
    { request: requestOf(args), output: { directory, pattern } },
    { title: vscode.l10n.t('Generating with {0}', args.model), interactive, ...extra },
  ).catch((error) => {
    throw markShown(error);
  });
}

async function askGenerateArgs(services: Services): Promise<GenerateArgs> {
  const readiness = await services.connection.readiness();
  if (readiness === 'no-url') throw new NotConfiguredError('baseUrl');
  if (readiness === 'no-key') throw new NotConfiguredError('apiKey');
  const title = vscode.l10n.t('Generate Image');
  const model = await pickModel(services, (m) => m.supports_generation, title);
  const editor = vscode.window.activeTextEditor;
  const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const prompt = await askPrompt(title, selection.trim(), vscode.l10n.t('A lighthouse on a cliff at dawn, watercolour'));
  const options = await reviewOptions(services, model, { model: model.id, prompt }, 0, title);
  return { ...options, model: model.id, prompt };
}

const shown = new WeakSet<object>();

/** Errors already shown by runJobCommand are not shown again by the interactive wrapper. */
export function markShown(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) shown.add(error);
  return error;
}

export function isShown(error: unknown): boolean {
  return typeof error === 'object' && error !== null && shown.has(error);
}
