// The studio page's HTML (src/studio/panel/pageHtml.ts): a strict CSP, and the script and stylesheet
// inline under the page's nonce, so the page starts without fetching through VS Code's webview
// service worker. Checked against the bundle and stylesheet as built.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { studioPageHtml, type StudioPageParts } from '../../src/studio/panel/pageHtml';

const ROOT = path.resolve(__dirname, '../../..');
const parts: StudioPageParts = {
  nonce: 'bm9uY2UtZm9yLXRlc3Rz',
  cspSource: 'https://*.vscode-cdn.net',
  lang: 'ru',
  title: 'Image <Studio> & "more"',
  loading: 'Загрузка…',
  script: 'console.log("a </script> in a string", /<\\/script>/); const x = "</SCRIPT >";',
  style: 'main { color: var(--vscode-foreground); } /* </style> */',
};

const csp = (html: string) => /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!.replace(/&#39;/g, "'");

describe('studio page HTML', () => {
  it("has a CSP that allows nothing but the page's own nonce'd script and style, and images of the webview and data", () => {
    const html = studioPageHtml(parts);
    assert.deepEqual(csp(html).split('; '), [
      "default-src 'none'",
      'img-src https://*.vscode-cdn.net data:',
      "style-src 'nonce-bm9uY2UtZm9yLXRlc3Rz'",
      "script-src 'nonce-bm9uY2UtZm9yLXRlc3Rz'",
    ]);
    assert.doesNotMatch(html, /\bsrc=|\bhref=|unsafe-/, 'nothing is loaded from a URL, nothing unsafe is allowed');
  });

  it('puts the script and the stylesheet inline under the nonce; neither can end its element early', () => {
    const html = studioPageHtml(parts);
    const scripts = [...html.matchAll(/<script nonce="([^"]+)">([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.equal(scripts[0]![1], parts.nonce);
    assert.equal(scripts[0]![2], 'console.log("a <\\/script> in a string", /<\\/script>/); const x = "<\\/SCRIPT >";');
    const styles = [...html.matchAll(/<style nonce="([^"]+)">([\s\S]*?)<\/style>/g)];
    assert.equal(styles.length, 1);
    assert.equal(styles[0]![2], 'main { color: var(--vscode-foreground); } /* <\\/style> */');
  });

  it('escapes the title, the language and the loading text', () => {
    const html = studioPageHtml(parts);
    assert.match(html, /<title>Image &lt;Studio&gt; &amp; &quot;more&quot;<\/title>/);
    assert.match(html, /<html lang="ru">/);
    assert.match(html, /<p class="loading">Загрузка…<\/p>/);
  });

  it('holds the built bundle and stylesheet whole', function () {
    const bundle = path.join(ROOT, 'dist', 'studio.js');
    if (!existsSync(bundle)) return this.skip(); // built by `npm run build`, which `npm test` runs first
    const script = readFileSync(bundle, 'utf8');
    const style = readFileSync(path.join(ROOT, 'media', 'studio', 'studio.css'), 'utf8');
    const html = studioPageHtml({ ...parts, script, style });
    const inlined = /<script nonce="[^"]+">([\s\S]*?)<\/script>/.exec(html)![1]!;
    assert.equal(inlined.replace(/<\\\/script/gi, '</script'), script);
    assert.ok(inlined.length > 10_000, `${inlined.length} characters`);
  });
});
