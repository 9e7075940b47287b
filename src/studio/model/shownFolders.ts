// The folders outside the workspace the studio's webview may load images from: exactly those that
// hold a file it shows (an absolute output folder, the recovery folder). No vscode import.
import * as path from 'node:path';
import { isInside } from '../../core/files/outputPath';

/** The folders of `files` that lie outside every workspace folder, each once, sorted. */
export function foldersOutside(files: Iterable<string>, workspaceFolders: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const file of files) {
    const folder = path.dirname(file);
    if (!workspaceFolders.some((root) => isInside(root, folder))) folders.add(folder);
  }
  return [...folders].sort();
}
