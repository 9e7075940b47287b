// Gateway Images: Export Results as CSV…: the whole results journal of this workspace, one row per
// result (jobs/results/resultsCsv.ts), to a file the user picks. Loaded with the Account and Usage page's chunk.
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { trPlural } from '../../core/common/plural';
import { resultsCsv } from '../../jobs/results/resultsCsv';
import { type Services } from '../../services';

/** Errors reject: the command's registration (account.ts) shows them, with the code already loaded at activation. */
export async function exportResultsCsv(services: Services, target?: vscode.Uri): Promise<vscode.Uri | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const uri =
    target ??
    (await vscode.window.showSaveDialog({
      title: vscode.l10n.t('Export Results as CSV'),
      filters: { CSV: ['csv'] },
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, 'gateway-images-results.csv') } : {}),
    }));
  if (!uri) return undefined;
  const index = await services.history.index();
  await fs.writeFile(
    uri.fsPath,
    resultsCsv(index.entries(), (file) => vscode.workspace.asRelativePath(file, false)),
    'utf8',
  );
  if (!target)
    void vscode.window.showInformationMessage(
      trPlural(index.size, { one: 'Exported {0} result to {1}.', other: 'Exported {0} results to {1}.' }, index.size, uri.fsPath),
    );
  return uri;
}
