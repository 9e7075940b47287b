// The page's HTML shell: a strict CSP, one nonce'd script and the stylesheet. The page builds its
// DOM itself from the `init` reply; nothing untrusted is ever put into this HTML.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { escapeHtml } from '../core/escapeHtml';

/** `shownFolders`: folders outside the workspace that hold images the page shows (the thumbnail cache, shownFolders.ts). */
export function webviewOptions(extensionUri: vscode.Uri, shownFolders: readonly string[] = []): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist'),
      vscode.Uri.joinPath(extensionUri, 'media'),
      ...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri),
      ...shownFolders.map((folder) => vscode.Uri.file(folder)),
    ],
  };
}

export function buildHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string, loading: string): string {
  const nonce = randomBytes(18).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'studio.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'studio', 'studio.css'));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="${escapeHtml(vscode.env.language)}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(style.toString())}">
<title>${escapeHtml(title)}</title>
</head>
<body>
<main id="app" aria-busy="true"><p class="loading">${escapeHtml(loading)}</p></main>
<script nonce="${nonce}" src="${escapeHtml(script.toString())}"></script>
</body>
</html>`;
}
