// Files the page may name: only images inside the workspace folders. The page is untrusted, so
// every path and URI it sends is resolved (symlinks too, by core/files/outputPath.ts confine) and checked here before use.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { resolveOutputFolder } from '../../commands/common/outputFolder';
import { EDITABLE_MEDIA_TYPES, readImageHead, sniffImage } from '../../core/images/imageSniff';
import { confine } from '../../core/files/outputPath';

export function allowedRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/** The real path of `file` when it exists inside a workspace folder; undefined otherwise. */
export async function insideRoots(file: string): Promise<string | undefined> {
  if (!path.isAbsolute(file) || !(await fs.stat(file).catch(() => undefined))) return undefined;
  for (const root of allowedRoots()) {
    const confined = await confine(root, file);
    if (confined.inside) return confined.real;
  }
  return undefined;
}

export type ReferenceCheck = { ok: true; path: string } | { ok: false; reason: string };

/** A reference must be a PNG, JPEG or WebP file (by its bytes) inside the workspace. */
export async function checkReference(file: string): Promise<ReferenceCheck> {
  const name = path.basename(file);
  const real = await insideRoots(file);
  if (!real) return { ok: false, reason: vscode.l10n.t('{0} is not a file inside the workspace.', name) };
  const kind = await readImageHead(real).then(sniffImage, () => undefined);
  if (!kind || !EDITABLE_MEDIA_TYPES.includes(kind.mediaType)) {
    return { ok: false, reason: vscode.l10n.t('{0} is not a PNG, JPEG or WebP image.', name) };
  }
  return { ok: true, path: real };
}

/**
 * A dropped `text/uri-list` entry as a local path. In the web workbench an Explorer drag may carry
 * a vscode-remote: URI of a file on this machine; its path is then the local path.
 */
export function pathOfDroppedUri(text: string): string | undefined {
  const trimmed = text.trim();
  if (!trimmed || trimmed.startsWith('#')) return undefined;
  if (path.isAbsolute(trimmed) && !trimmed.includes('://')) return trimmed;
  let uri: vscode.Uri;
  try {
    uri = vscode.Uri.parse(trimmed, true);
  } catch {
    return undefined;
  }
  if (uri.scheme === 'file' || uri.scheme === 'vscode-remote') return vscode.Uri.file(uri.path).fsPath;
  return undefined;
}

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** Writes pasted image bytes to <output folder>/pasted/ and returns the file's path. */
export async function savePastedImage(bytes: Uint8Array, mediaType: string): Promise<string> {
  const kind = sniffImage(bytes.subarray(0, 64));
  if (!kind || kind.mediaType !== mediaType || !EXTENSIONS[mediaType]) {
    throw new Error(vscode.l10n.t('The pasted data is not a PNG, JPEG or WebP image.'));
  }
  const firstRoot = allowedRoots()[0];
  if (firstRoot === undefined) throw new Error(vscode.l10n.t('Open a folder first: pasted images are saved into the workspace.'));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const name = `pasted-${stamp}-${randomBytes(3).toString('hex')}.${EXTENSIONS[mediaType]}`;
  // A user-chosen absolute output folder is outside the workspace: pasted references stay inside.
  const output = await resolveOutputFolder().catch(() => undefined);
  for (const folder of [output, path.join(firstRoot, 'generated-images')]) {
    const file = folder && path.join(folder, 'pasted', name);
    if (!file || !(await insideAnyRoot(file))) continue;
    await vscode.workspace.fs.writeFile(vscode.Uri.file(file), bytes);
    return file;
  }
  throw new Error(vscode.l10n.t('Pasted images are saved inside the workspace, but its output folder leads outside it through a symbolic link.'));
}

async function insideAnyRoot(file: string): Promise<boolean> {
  for (const root of allowedRoots()) if ((await confine(root, file)).inside) return true;
  return false;
}
