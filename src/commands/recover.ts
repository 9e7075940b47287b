// Recover Images: paid images that could not be saved into the workspace wait in the recovery
// folder with a manifest. This lists them and moves them where the user wants.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { FALLBACK_RECOVERY_DIR, listRecoverable, placeWithoutOverwrite, type RecoveryManifest } from '../core/imageStore';
import { type Services } from '../services';
import { resolveOutputFolder } from './outputFolder';
import { trPlural } from '../core/plural';

export function registerRecover(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.recoverImages', () => recoverImages(services));
}

export async function recoverImages(services: Services): Promise<RecoveryManifest[]> {
  const waiting = await listWaiting(services);
  if (!waiting.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No images are waiting in the recovery folder.'));
    return [];
  }
  const picked = await vscode.window.showQuickPick(
    waiting.map((manifest) => ({
      label: `$(file-media) ${trPlural(manifest.files.length, { one: '{0} image from {1}', other: '{0} images from {1}' }, manifest.files.length, manifest.model)}`,
      description: new Date(manifest.createdAt).toLocaleString(services.locale),
      detail: `${manifest.prompt.slice(0, 120)} — ${manifest.reason}`,
      manifest,
    })),
    { title: vscode.l10n.t('Images Waiting for Recovery'), placeHolder: vscode.l10n.t('Choose images to move into the workspace') },
  );
  if (!picked) return waiting;
  const moveToWorkspace = vscode.l10n.t('Move into Workspace');
  const moveElsewhere = vscode.l10n.t('Choose Folder…');
  const reveal = vscode.l10n.t('Reveal in File Manager');
  const choice = await vscode.window.showInformationMessage(
    trPlural(
      picked.manifest.files.length,
      { one: 'Where should the {0} image go? It was meant for {1}.', other: 'Where should these {0} images go? They were meant for {1}.' },
      picked.manifest.files.length,
      picked.manifest.intendedDirectory,
    ),
    moveToWorkspace,
    moveElsewhere,
    reveal,
  );
  const first = picked.manifest.files[0];
  if (choice === reveal) {
    if (first) await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(first.path));
  } else if (choice === moveToWorkspace || choice === moveElsewhere) {
    const target = choice === moveElsewhere ? await askFolder() : await resolveOutputFolder().catch(() => picked.manifest.intendedDirectory);
    if (target) await moveImages(picked.manifest, target);
  }
  return listWaiting(services);
}

async function listWaiting(services: Services): Promise<RecoveryManifest[]> {
  return [...(await listRecoverable(services.recoveryDir)), ...(await listRecoverable(FALLBACK_RECOVERY_DIR))];
}

async function askFolder(): Promise<string | undefined> {
  const folder = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: vscode.l10n.t('Move Here') });
  return folder?.[0]?.fsPath;
}

async function moveImages(manifest: RecoveryManifest, directory: string): Promise<void> {
  const moved: string[] = [];
  try {
    for (const file of manifest.files) {
      const ext = path.extname(file.suggestedName).slice(1) || 'png';
      moved.push(await placeWithoutOverwrite(file.path, directory, path.basename(file.suggestedName, path.extname(file.suggestedName)), ext));
    }
    if (manifest.manifestPath) await fs.rm(manifest.manifestPath, { force: true });
    void vscode.window.showInformationMessage(
      trPlural(moved.length, { one: 'Moved {0} image to {1}.', other: 'Moved {0} images to {1}.' }, moved.length, vscode.workspace.asRelativePath(directory)),
    );
    if (moved[0]) await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(moved[0]));
  } catch (error) {
    // The manifest stays: whatever was not moved is still listed next time.
    void vscode.window.showErrorMessage(
      vscode.l10n.t('Could not move the images ({0}). They stay in the recovery folder.', error instanceof Error ? error.message : String(error)),
    );
  }
}
