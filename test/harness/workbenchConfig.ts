// How code-server, Chromium and the workbench page are set up for a run: command-line flags, the
// checks that the extension is built and code-server installed, the extension copied in as a user
// has it, and the workbench URL with its test payload.
import * as fs from 'fs';
import * as path from 'path';
import { EXTENSION_BUNDLE, REPO_ROOT, selectedVscodeTarget, type VscodeTarget } from './paths';
import { isCodeServerInstalled } from './setup';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // The browser, its renderers, GPU and network service in one process: no IPC between them. Two
  // runs at once, one with it and one without: an integration run 5.5-6 % less CPU (twice), five
  // e2e suites (webviews, two pages of one browser) 4 % less. Chromium calls it a debugging mode;
  // a crash of one page then ends the browser, and the test that met it fails with its log.
  '--single-process',
  '--no-zygote',
];

/**
 * For the windows an e2e test drives (no tests inside the extension host): V8 runs the workbench's
 * JavaScript with its baseline compiler only, no optimizing tiers. Most e2e windows live for a suite
 * and spend their CPU starting the workbench, where optimizing code costs more than it saves. Two
 * e2e subset runs at once on 1.139.1, one with it: 5.5 % and 4.5 % less CPU; with Maglev allowed
 * (`--max-opt=2`) 4 % more than with neither; the studio at 5,000 results and the region editor
 * 1.7 % less. Not for the integration windows, which run every test in one long-lived window: there
 * it cost 2-6 % more.
 */
export const E2E_CHROMIUM_ARGS = [...CHROMIUM_ARGS, '--js-flags=--max-opt=1'];

/** The browser's request headers: no compression asked for (code-server's compression middleware then sends the files as they are). */
export const UNCOMPRESSED = { 'Accept-Encoding': 'identity' };

export const CODE_SERVER_FLAGS = [
  '--auth',
  'none',
  '--disable-telemetry',
  '--disable-update-check',
  '--disable-workspace-trust',
  '--disable-getting-started-override',
];

/**
 * No search for ports to forward among the processes: with VS Code's default (`process`) each
 * window's extension host lists the sockets of every process (`ls -l` of each /proc/<pid>/fd) and
 * runs `ps`, every 2 s or more (an idle window used 2.2 s of CPU per 30 s with it, 1.0 s without).
 * URLs in terminals are still forwarded. code-server registers a tunnel provider, so
 * `remote.autoForwardPorts: false` does not stop it.
 */
export const NO_PORT_SCAN = { 'remote.autoForwardPortsSource': 'output' } as const;

/**
 * Editor features no test looks at, off in every test window: each asks a language feature of the
 * extension host (folding, symbols for the breadcrumbs and sticky scroll, links, colours, code lenses,
 * semantic tokens, inlay hints) or the editor worker (links, unicode highlights, word ranges) again
 * on every change of a visible document, or redraws (the minimap, guides, bracket and line
 * highlights). Measured with two integration runs at once on VS Code 1.139.1, one with them:
 * 3.5-4 % less CPU for the whole run. A test that looks at one passes `settings` to turn it back on.
 */
export const QUIET_EDITOR = {
  'editor.minimap.enabled': false,
  'editor.links': false,
  'editor.unicodeHighlight.ambiguousCharacters': false,
  'editor.unicodeHighlight.invisibleCharacters': false,
  'editor.wordBasedSuggestions': 'off',
  'editor.occurrencesHighlight': 'off',
  'editor.selectionHighlight': false,
  'editor.codeLens': false,
  'editor.lightbulb.enabled': 'off',
  'editor.guides.indentation': false,
  'editor.stickyScroll.enabled': false,
  'editor.colorDecorators': false,
  'editor.folding': false,
  'editor.matchBrackets': 'never',
  'editor.renderLineHighlight': 'none',
  'editor.semanticHighlighting.enabled': false,
  'editor.inlayHints.enabled': 'off',
  'breadcrumbs.enabled': false,
  'outline.problems.enabled': false,
  'workbench.localHistory.enabled': false,
  'extensions.ignoreRecommendations': true,
} as const;

/**
 * VS Code's own AI features hidden (Copilot's Chat view, which 1.139 opens and focuses in every new
 * window, its setup and completions; the language model and tool APIs our extension uses stay, and
 * VS Code 1.100 has no such setting). Two runs at once on 1.139.1, one with it: the integration subset
 * 9.5 % less CPU, the e2e subset 16 % less, every test passing as without it. A test passes
 * `settings` to show them.
 */
export const NO_BUILTIN_AI = { 'chat.disableAIFeatures': true } as const;

/**
 * Built-in extensions that no test uses, off in every test window. TypeScript and JavaScript start a
 * tsserver (10-12 % of a core each) for any .js, .ts or .jsonc file opened; Git, its base and GitHub
 * activate on start-up and run git on the workspace; Emmet activates on any language; merge
 * conflicts, the debugger's auto-attach and npm on start-up or on a package.json. The rest cost the
 * workbench and the extension host their contributions in every window (languages, grammars, themes,
 * views), and some activate: GitHub's sign-in when VS Code 1.139 asks for a GitHub session, the
 * extension manifest checker on any JSON file. Two integration runs at once on 1.139.1, one with the
 * second group off: 4-6 % less CPU; the e2e subset 1 %. On stay Markdown, its math and diagrams (the
 * extension opens Account and Usage and a prompt-file run's report in Markdown's preview; the tests
 * render outside text with VS Code's Markdown renderer as a person has it), JSON and settings
 * editing (the styles file is checked against its schema), HTML, CSS, JavaScript and TypeScript
 * grammars, image preview, the default themes and icons, logs, and port forwarding.
 */
export const UNUSED_BUILTIN_EXTENSIONS: readonly string[] = [
  ...['typescript-language-features', 'git', 'git-base', 'github', 'emmet', 'merge-conflict', 'debug-auto-launch', 'npm'],
  // Languages no test opens.
  ...['bat', 'clojure', 'coffeescript', 'cpp', 'csharp', 'dart', 'docker', 'dotenv', 'fsharp', 'go', 'groovy', 'handlebars', 'hlsl', 'ini'],
  ...['java', 'julia', 'latex', 'less', 'lua', 'make', 'objective-c', 'perl', 'php', 'powershell', 'pug', 'python', 'r', 'razor'],
  ...['restructuredtext', 'ruby', 'rust', 'scss', 'shaderlab', 'shellscript', 'sql', 'swift', 'vb', 'xml', 'yaml'],
  // Features no test uses: language servers, sign-in, notebooks, task runners, views.
  ...['php-language-features', 'css-language-features', 'html-language-features', 'extension-editing', 'references-view', 'search-result'],
  ...['debug-server-ready', 'ipynb', 'notebook-renderers', 'simple-browser', 'terminal-suggest', 'github-authentication'],
  ...['microsoft-authentication', 'grunt', 'gulp', 'jake'],
  // Colour themes besides the defaults (the screenshots use Default Dark Modern and Default Light Modern).
  ...['theme-abyss', 'theme-kimbie-dark', 'theme-monokai', 'theme-monokai-dimmed', 'theme-quietlight', 'theme-red', 'theme-solarized-dark'],
  ...['theme-solarized-light', 'theme-tomorrow-night-blue'],
]
  .map((name) => `vscode.${name}`)
  .concat(['ms-vscode.js-debug', 'ms-vscode.js-debug-companion', 'ms-vscode.vscode-js-profile-table']);

/** The flags for a run with Workspace Trust on (the workspace starts untrusted). */
export function codeServerFlags(workspaceTrust: boolean): string[] {
  return workspaceTrust ? CODE_SERVER_FLAGS.filter((f) => f !== '--disable-workspace-trust') : [...CODE_SERVER_FLAGS];
}

export function checkExtensionBuilt(): void {
  if (!fs.existsSync(EXTENSION_BUNDLE)) {
    throw new Error(`${path.relative(REPO_ROOT, EXTENSION_BUNDLE)} is missing: build the extension first with \`npm run build\` (or \`node esbuild.mjs\`).`);
  }
}

export function checkCodeServerInstalled(t: VscodeTarget = selectedVscodeTarget()): void {
  if (!isCodeServerInstalled(t)) {
    throw new Error(
      `code-server ${t.codeServer} (${t.name}) is not installed: run \`npm run setup:vscode\` (node out/test/harness/setup.js --vscode ${t.name}).`,
    );
  }
}

export function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

/**
 * Runs in the page before the workbench: the workbench reads its configuration from the
 * `data-settings` JSON of the vscode-workbench-web-configuration meta tag; this returns it with
 * `developmentOptions.enableSmokeTestDriver` set, as the server writes it when started with
 * --enable-smoke-test-driver. (Rewriting the HTML response instead breaks the remote connection.)
 */
export function enableSmokeTestDriverInPage(): void {
  type Attr = (this: { id: string }, name: string) => string | null;
  const proto = (globalThis as unknown as { Element: { prototype: { getAttribute: Attr } } }).Element.prototype;
  const original = proto.getAttribute;
  proto.getAttribute = function (this: { id: string }, name: string): string | null {
    const value = original.call(this, name);
    if (this.id !== 'vscode-workbench-web-configuration' || name !== 'data-settings' || !value) return value;
    const config = JSON.parse(value) as { developmentOptions?: Record<string, unknown> };
    config.developmentOptions = { ...config.developmentOptions, enableSmokeTestDriver: true };
    return JSON.stringify(config);
  };
}

/**
 * A script for the page, on the workbench's origin before the workbench loads: writes the
 * extensions `ids` as disabled into the workbench's global state (IndexedDB
 * `vscode-web-state-db-global`, key `extensionsIdentifiers/disabled`), where VS Code keeps the
 * extensions a person disabled in the Extensions view. The run's browser profile is new, so nothing
 * else is there yet.
 */
export function disableExtensionsInPage(ids: readonly string[]): string {
  const value = JSON.stringify(JSON.stringify(ids.map((id) => ({ id }))));
  return `new Promise((resolve, reject) => {
    const open = indexedDB.open('vscode-web-state-db-global');
    open.onupgradeneeded = () => open.result.createObjectStore('ItemTable');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction('ItemTable', 'readwrite');
      tx.objectStore('ItemTable').put(${value}, 'extensionsIdentifiers/disabled');
      tx.oncomplete = () => { db.close(); resolve(true); };
      tx.onerror = () => reject(tx.error);
    };
  })`;
}

/** What the .vsix holds of the extension (see .vscodeignore), copied from the working tree. */
const INSTALLED_ENTRIES = ['package.json', 'dist', 'media', 'l10n', 'images', 'README.md', 'CHANGELOG.md', 'LICENSE'];

/**
 * Installs the built extension at `source` into `extensionsDir` as `<publisher>.<name>-<version>`
 * (VS Code registers a folder it finds there in extensions.json, as after an install). Copies the
 * files a .vsix ships, from the working tree: no packaging, so dist/ is the development build.
 */
export function installExtensionCopy(source: string, extensionsDir: string): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };
  const target = path.join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`);
  fs.mkdirSync(target, { recursive: true });
  const nls = fs.readdirSync(source).filter((f) => /^package\.nls(\.[\w-]+)?\.json$/.test(f));
  for (const entry of [...INSTALLED_ENTRIES, ...nls]) {
    const from = path.join(source, entry);
    if (fs.existsSync(from)) fs.cpSync(from, path.join(target, entry), { recursive: true });
  }
  return target;
}

/** The `payload` URL parameter the workbench reads (VS Code's web integration test mechanism). */
export function buildWorkbenchUrl(port: number, workspace: string | undefined, payload: [string, string][]): string {
  const q = new URLSearchParams({ ...(workspace ? { folder: workspace } : { ew: 'true' }), payload: JSON.stringify(payload) });
  return `http://127.0.0.1:${port}/?${q.toString()}`;
}
