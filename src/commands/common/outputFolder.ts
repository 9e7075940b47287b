// Where a command's images go, decided by core/files/outputFolder.ts (decideOutputFolder) for every entry
// point: this adapter supplies the workspace folders, the setting and who named the value.
// Generation: the argument (relative to the workspace folder), else the setting, else (no folder
// open) a folder the person picks. An edit: the argument (relative to the first source's folder),
// else next to the first source.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CancelledError } from '../../core/gateway/errors';
import { decideOutputFolder } from '../../core/files/outputFolder';
import { readPathSetting } from '../../host/settings';

const SETTING_FIELD = 'gatewayImages.outputDirectory';
const ARGUMENT_FIELD = 'outputDirectory';

export function workspaceFolderFor(uri?: vscode.Uri): vscode.WorkspaceFolder | undefined {
  const active = uri ?? vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
}

/** The local workspace folders: what output is confined to. */
function localFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/** A blank argument means none (the default applies), as it always has. */
function given(argument: string | undefined): string | undefined {
  return argument?.trim() ? argument : undefined;
}

/**
 * A generation's folder. `argument` comes from a caller of the command (a keybinding, a task,
 * another extension, a test); relative values are taken from the workspace folder.
 */
export async function resolveOutputFolder(argument?: string): Promise<string> {
  const folder = workspaceFolderFor();
  const root = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
  const workspaceFolders = localFolders();
  const own = given(argument);
  if (own !== undefined) return decideOutputFolder({ value: own, origin: 'argument', base: root, workspaceFolders, field: ARGUMENT_FIELD });
  const setting = readPathSetting('outputDirectory', 'generated-images', folder?.uri);
  const value = setting.value.trim() || 'generated-images';
  if (!root && !path.isAbsolute(value) && !/^~(?=$|[/\\])/.test(value)) {
    return decideOutputFolder({ value: await askForFolder(), origin: 'argument', workspaceFolders, field: ARGUMENT_FIELD });
  }
  const origin = setting.trustedSource ? 'user-settings' : 'workspace-settings';
  return decideOutputFolder({ value, origin, base: root, workspaceFolders, field: SETTING_FIELD });
}

/**
 * An edit's folder: the argument taken from the first source's folder, else the style's (already
 * decided by the same rules), else next to the first source. "Next to" is the folder of the source
 * as it was named (a link's own folder, not its target's): that is where the person sees it, and a
 * link's target is whoever made the link's choice. That folder is confined like any other.
 */
export async function resolveEditOutputFolder(source: string, argument: string | undefined, styleFolder?: string): Promise<string> {
  const base = path.dirname(path.resolve(source));
  const workspaceFolders = localFolders();
  const own = given(argument);
  if (own !== undefined) return decideOutputFolder({ value: own, origin: 'argument', base, workspaceFolders, field: ARGUMENT_FIELD });
  if (styleFolder !== undefined) return styleFolder;
  // The source was named by the caller (an argument, the explorer, a dialog, the studio's checked reference).
  return decideOutputFolder({ value: base, origin: 'argument', workspaceFolders, field: ARGUMENT_FIELD });
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
