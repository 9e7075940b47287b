// Generate Image: from the palette as a multi-step quick pick, or without prompts from arguments.
import * as vscode from 'vscode';
import { type Services } from '../../services';
import { type GenerateArgs, isArgsObject, styleInputOf, toGenerateArgs } from '../common/commandArgs';
import { type CommandResult, type RunExtras, runJobCommand } from './jobRunner';
import { readPathSetting, readSettings } from '../../host/settings';
import { resolveOutputFolder, workspaceFolderFor } from '../common/outputFolder';
import { askPrompt, pickModel, reviewRequest } from './pickers';
import { runCommandBody } from '../common/showError';
import { applyStyle, askStyle, showStyleNotes, styledJob } from '../styles/styles';

export const FILE_NAME_PATTERN_DEFAULT = '{date}-{slug}-{model}-{index}';

export function registerGenerate(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.generate', (args?: unknown) => generateCommand(services, args));
}

export function generateCommand(services: Services, args?: unknown): Promise<CommandResult | undefined> {
  if (isArgsObject(args)) return runCommandBody(services, true, (errorActions) => generate(services, toGenerateArgs(args), false, { errorActions }));
  return runCommandBody(services, false, async (errorActions) => generate(services, await askGenerateArgs(services), true, { errorActions }));
}

/**
 * Runs a generation; shared by the command, the public API, the studio and the chat tool. The
 * style (if any) makes the request; an output folder given as an argument comes before the style's.
 */
export async function generate(services: Services, args: GenerateArgs, interactive: boolean, extra: RunExtras = {}): Promise<CommandResult> {
  const styled = await applyStyle(services, args.style, styleInputOf(args));
  if (interactive) showStyleNotes(styled);
  const directory = args.outputDirectory === undefined && styled.output.directory ? styled.output.directory : await resolveOutputFolder(args.outputDirectory);
  const pattern = styled.output.pattern ?? readPathSetting('fileNamePattern', FILE_NAME_PATTERN_DEFAULT, workspaceFolderFor()?.uri).value;
  return runJobCommand(services, styledJob(styled, { directory, pattern }, readSettings().editTransport), {
    title: vscode.l10n.t('Generating with {0}', styled.request.model),
    interactive,
    // A style of an untrusted workspace never sends on its own: the person confirms what it makes.
    forceConfirm: styled.confirm,
    origin: { kind: 'palette' },
    ...extra,
  });
}

/** Model, prompt, review (with a Style row); a Style step comes first only where the project has styles. */
async function askGenerateArgs(services: Services): Promise<GenerateArgs> {
  await services.connection.assertReady();
  const title = vscode.l10n.t('Generate Image');
  const asked = await askStyle(services, title);
  const model = await pickModel(services, (m) => m.supports_generation, title, asked);
  const editor = vscode.window.activeTextEditor;
  const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const prompt = await askPrompt(title, selection.trim(), vscode.l10n.t('A lighthouse on a cliff at dawn, watercolour'));
  const { options, style } = await reviewRequest(services, model, { prompt, style: asked }, title);
  return { ...options, model: model.id, prompt, ...(style ? { style } : {}) };
}
