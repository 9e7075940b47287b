// Says in the log when a workspace sets one of the settings only the user may set (baseUrl, scope
// `machine`, and USER_ONLY_SETTINGS, scope `application`): VS Code drops such values without a word,
// and the extension never reads them either, so a person who wrote one into .vscode/settings.json
// learns why it has no effect. A file is read as VS Code reads it (jsonc-parser: comments, trailing
// commas, and past an error the part before it).
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { isRecord } from '../core/common/json';
import type * as StylesModules from '../jobs/stylesBundle';
import { SECTION, USER_ONLY_SETTINGS } from './settings';

/** jsonc-parser comes with the styles chunk (dist/styles.js), loaded only for a file that names this extension's settings. */
function settingsReader(): Pick<typeof StylesModules, 'parseJsonc' | 'setsSetting'> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./styles.js') as typeof StylesModules;
}

export function logIgnoredWorkspaceSettings(log: vscode.LogOutputChannel): vscode.Disposable {
  let told = new Set<string>();
  let checking = Promise.resolve();
  const check = async () => {
    const found = new Set<string>();
    for (const { uri, section } of settingsSources()) {
      const text = await vscode.workspace.fs.readFile(uri).then(
        (bytes) => new TextDecoder().decode(bytes),
        () => undefined,
      );
      if (text === undefined || !text.includes(SECTION)) continue;
      const { parseJsonc, setsSetting } = settingsReader();
      const parsed = parseJsonc(text).value;
      const settings = section === undefined ? parsed : isRecord(parsed) ? parsed[section] : undefined;
      for (const name of ['baseUrl', ...USER_ONLY_SETTINGS]) {
        if (!setsSetting(settings, `${SECTION}.${name}`)) continue;
        found.add(vscode.l10n.t('"{0}" in {1} is ignored: only your user settings may set it.', `${SECTION}.${name}`, vscode.workspace.asRelativePath(uri)));
      }
    }
    for (const message of found) if (!told.has(message)) log.warn(message);
    told = found;
  };
  const recheck = () => {
    checking = checking.then(check).catch(() => undefined);
  };
  const watchers = [vscode.workspace.createFileSystemWatcher('**/.vscode/settings.json')];
  const file = vscode.workspace.workspaceFile;
  if (file?.scheme === 'file')
    watchers.push(vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.joinPath(file, '..'), basename(file.fsPath))));
  const subscriptions = [
    ...watchers,
    ...watchers.flatMap((watcher) => [watcher.onDidCreate(recheck), watcher.onDidChange(recheck), watcher.onDidDelete(recheck)]),
    vscode.workspace.onDidChangeConfiguration(recheck),
    vscode.workspace.onDidChangeWorkspaceFolders(recheck),
  ];
  recheck();
  return vscode.Disposable.from(...subscriptions);
}

/** Where a workspace keeps settings: each folder's .vscode/settings.json, and a .code-workspace file's "settings". */
function settingsSources(): { uri: vscode.Uri; section?: string }[] {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => ({ uri: vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json') }));
  const file = vscode.workspace.workspaceFile;
  return file?.scheme === 'file' ? [...folders, { uri: file, section: 'settings' }] : folders;
}
