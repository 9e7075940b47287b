// Generate Image: from the palette as a multi-step quick pick, or without prompts from arguments.
import * as vscode from 'vscode';
import { type Services } from '../services';
import { type GenerateArgs, isArgsObject, requestOf, toGenerateArgs } from './commandArgs';
import { type CommandResult, type RunExtras, runJobCommand } from './jobRunner';
import { readPathSetting } from '../host/settings';
import { resolveOutputFolder, workspaceFolderFor } from './outputFolder';
import { askPrompt, pickModel, reviewOptions } from './pickers';
import { runCommandBody } from './showError';

export const FILE_NAME_PATTERN_DEFAULT = '{date}-{slug}-{model}-{index}';

export function registerGenerate(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.generate', (args?: unknown) => generateCommand(services, args));
}

export function generateCommand(services: Services, args?: unknown): Promise<CommandResult | undefined> {
  if (isArgsObject(args)) return runCommandBody(services, true, (errorActions) => generate(services, toGenerateArgs(args), false, { errorActions }));
  return runCommandBody(services, false, async (errorActions) => generate(services, await askGenerateArgs(services), true, { errorActions }));
}

/** Runs a generation; shared by the command, the public API and the studio. */
export async function generate(services: Services, args: GenerateArgs, interactive: boolean, extra: RunExtras = {}): Promise<CommandResult> {
  const directory = await resolveOutputFolder(args.outputDirectory);
  const pattern = readPathSetting('fileNamePattern', FILE_NAME_PATTERN_DEFAULT, workspaceFolderFor()?.uri).value;
  return runJobCommand(
    services,
    { request: requestOf(args), output: { directory, pattern } },
    { title: vscode.l10n.t('Generating with {0}', args.model), interactive, ...extra },
  );
}

async function askGenerateArgs(services: Services): Promise<GenerateArgs> {
  await services.connection.assertReady();
  const title = vscode.l10n.t('Generate Image');
  const model = await pickModel(services, (m) => m.supports_generation, title);
  const editor = vscode.window.activeTextEditor;
  const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const prompt = await askPrompt(title, selection.trim(), vscode.l10n.t('A lighthouse on a cliff at dawn, watercolour'));
  const options = await reviewOptions(services, model, { model: model.id, prompt }, 0, title);
  return { ...options, model: model.id, prompt };
}
