// What the studio's result cards can do with a saved image: open, reveal, copy its path, insert a
// link, use it as a reference, fill the form from its request, or move it to the trash.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { insertMarkdownLinks } from '../../commands/images/jobRunner';
import { summarizeError } from '../../core/gateway/errors';
import type { GenerationRequest } from '../../core/gateway/types';
import type { Services } from '../../services';
import type { GalleryActionMessage } from '../protocol/protocol';
import { messageText } from '../../core/common/markdownText';

/** What the panel does for an action that goes back to the page. */
export interface GalleryActionTarget {
  addReferences(requestId: number, paths: string[]): Promise<void>;
  fillForm(request: GenerationRequest, references: string[], madeWithStyle?: string): Promise<void>;
  /** Opens the region editor on the card's image. */
  editRegion(file: string): Promise<void>;
}

export async function runGalleryAction(
  services: Services,
  { requestId, action, entryId, file }: GalleryActionMessage,
  target: GalleryActionTarget,
): Promise<void> {
  // Only files the history knows (the host's own record) can be acted on.
  const entry = (await services.history.index()).find(entryId);
  if (!entry || !entry.files.includes(file)) {
    services.log.warn(`Image Studio: ignored a gallery action on a file that is not in the history`);
    return;
  }
  const uri = vscode.Uri.file(file);
  switch (action) {
    case 'open':
      await vscode.commands.executeCommand('vscode.open', uri);
      return;
    case 'reveal':
      await vscode.commands.executeCommand('revealInExplorer', uri);
      return;
    case 'copyPath':
      await vscode.env.clipboard.writeText(file);
      return;
    case 'insertLink': {
      const editors = vscode.window.visibleTextEditors;
      const editor = vscode.window.activeTextEditor ?? editors.find((e) => e.document.languageId === 'markdown') ?? editors[0];
      if (!editor) {
        void vscode.window.showInformationMessage(vscode.l10n.t('Open a text editor to insert the link into.'));
        return;
      }
      await insertMarkdownLinks(editor, [uri], { model: entry.model });
      return;
    }
    case 'useAsReference':
      await target.addReferences(requestId, [file]);
      return;
    case 'editRegion':
      await target.editRegion(file);
      return;
    case 'regenerate':
      await target.fillForm(entry.request, entry.references ?? [], entry.style?.name);
      return;
    case 'delete':
      return deleteResult(services, file);
  }
}

async function deleteResult(services: Services, file: string): Promise<void> {
  const confirm = vscode.l10n.t('Move to Trash');
  const answer = await vscode.window.showWarningMessage(
    vscode.l10n.t('Delete {0}?', path.basename(file)),
    { modal: true, detail: vscode.l10n.t('The file is moved to the trash and removed from the studio’s results.') },
    confirm,
  );
  if (answer !== confirm) return;
  try {
    await trashResult(services, file);
  } catch (error) {
    void vscode.window.showErrorMessage(messageText(vscode.l10n.t('Could not move {0} to the trash: {1}', path.basename(file), summarizeError(error).message)));
  }
}

/**
 * Moves a result to the trash (`useTrash` false: deletes it for good) and out of the studio's
 * results; one already gone counts as removed. Throws when it stays.
 */
export async function trashResult(services: Services, file: string, useTrash = true): Promise<void> {
  try {
    await vscode.workspace.fs.delete(vscode.Uri.file(file), { useTrash });
  } catch (error) {
    if (!(error instanceof vscode.FileSystemError && error.code === 'FileNotFound')) throw error;
  }
  await services.history.removeFile(file);
  await services.thumbnails.cache().forget(file);
}
