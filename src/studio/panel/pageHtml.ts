// The studio page's HTML: a strict CSP (nothing but what it lists; the script and the stylesheet
// inline, each with the page's nonce). Inline, because a webview's files are fetched through VS
// Code's webview service worker, which can hold a new page for up to 30 s when a webview closed
// with a fetch still open: the studio must start without it. Nothing untrusted is put into this
// HTML: the page builds its DOM itself from the `init` reply. No vscode import.
import { escapeHtml } from '../../core/common/escapeHtml';

export interface StudioPageParts {
  /** A fresh random value per page. */
  nonce: string;
  /** The webview's `cspSource`: images of the workspace and of the comparison grid. */
  cspSource: string;
  lang: string;
  title: string;
  /** Shown until the script has built the page. */
  loading: string;
  /** dist/studio.js and media/studio/studio.css with gallery.css and region.css, as built. */
  script: string;
  style: string;
}

export function studioPageHtml(parts: StudioPageParts): string {
  const csp = ["default-src 'none'", `img-src ${parts.cspSource} data:`, `style-src 'nonce-${parts.nonce}'`, `script-src 'nonce-${parts.nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="${escapeHtml(parts.lang)}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${parts.nonce}">${inlineText(parts.style, 'style')}</style>
<title>${escapeHtml(parts.title)}</title>
</head>
<body>
<main id="app" aria-busy="true"><p class="loading">${escapeHtml(parts.loading)}</p></main>
<script nonce="${parts.nonce}">${inlineText(parts.script, 'script')}</script>
</body>
</html>`;
}

/**
 * Text that cannot end its element early: the HTML parser ends a script or style element at the
 * first `</script` or `</style`, wherever it is. `<\/` means the same in a JS string, regular
 * expression or comment, and never occurs elsewhere in the bundle or the stylesheet.
 */
function inlineText(text: string, element: 'script' | 'style'): string {
  return text.replace(new RegExp(`</(${element})`, 'gi'), '<\\/$1');
}
