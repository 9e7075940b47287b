// The page's HTML shell (pageHtml.ts) with the script and stylesheet as built, and the webview's
// options.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { studioPageHtml } from './pageHtml';

/**
 * What the page may load: images of the workspace, and `shownFolders`, the folders outside it that
 * hold images the comparison grid shows (shownFolders.ts). Its script and stylesheet are inline.
 */
export function webviewOptions(shownFolders: readonly string[] = []): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri), ...shownFolders.map((folder) => vscode.Uri.file(folder))],
  };
}

export function buildHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string, loading: string): string {
  // Read for each page (about 60 KB): a rebuilt bundle (npm run watch) is used by the next page.
  const read = (...segments: string[]) => readFileSync(vscode.Uri.joinPath(extensionUri, ...segments).fsPath, 'utf8');
  return studioPageHtml({
    nonce: randomBytes(18).toString('base64'),
    cspSource: webview.cspSource,
    lang: vscode.env.language,
    title,
    loading,
    script: read('dist', 'studio.js'),
    style: ['studio.css', 'gallery.css', 'region.css'].map((file) => read('media', 'studio', file)).join('\n'),
  });
}
