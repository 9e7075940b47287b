// Where a command's images go: the argument, else the setting inside the workspace folder, else
// (no folder open) a folder the user picks.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CancelledError } from '../core/errors';
import { resolveOutputDirectory } from '../core/outputPath';
import { readPathSetting } from '../host/settings';

export function workspaceFolderFor(uri?: vscode.Uri): vscode.WorkspaceFolder | undefined {
  const active = uri ?? vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
}

/** `argument` comes from a caller of the command (a keybinding, a task, another extension, a test). */
export async function resolveOutputFolder(argument?: string): Promise<string> {
  const folder = workspaceFolderFor();
  const root = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
  if (argument !== undefined && path.isAbsolute(argument)) return argument;
  const setting = readPathSetting('outputDirectory', 'generated-images', folder?.uri);
  const configured = argument ?? setting.value;
  if (!root && !path.isAbsolute(configured)) return askForFolder();
  return resolveOutputDirectory({ configured, trustedSource: argument !== undefined || setting.trustedSource, workspaceFolder: root });
}

async function askForFolder(): Promise<string> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
    openLabel: vscode.l10n.t('Save Images Here'),
    title: vscode.l10n.t('No folder is open: where should the images be saved?'),
  });
  if (!picked?.[0]) throw new CancelledError(vscode.l10n.t('No folder was chosen: nothing was sent.'));
  return picked[0].fsPath;
}
