// Where things are: the repository root, the code-server install, the fixtures.
// Resolved from this file's location, so it works from test/harness (ts) and out/test/harness (js).
import * as fs from 'fs';
import * as path from 'path';

export const CODE_SERVER_VERSION = '4.100.3';

function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && fs.existsSync(path.join(dir, 'esbuild.mjs'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`Cannot find the repository root above ${start}`);
    dir = parent;
  }
}

export const REPO_ROOT = findRepoRoot(__dirname);
/** Compiled test output (tsc -p . --outDir out). */
export const OUT_DIR = path.join(REPO_ROOT, 'out');
export const CACHE_DIR = path.join(REPO_ROOT, '.cache');
export const CODE_SERVER_PREFIX = path.join(CACHE_DIR, `code-server-${CODE_SERVER_VERSION}`);
export const CODE_SERVER_PACKAGE = path.join(CODE_SERVER_PREFIX, 'node_modules', 'code-server');
export const CODE_SERVER_ENTRY = path.join(CODE_SERVER_PACKAGE, 'out', 'node', 'entry.js');
export const CODE_SERVER_VSCODE = path.join(CODE_SERVER_PACKAGE, 'lib', 'vscode');
/** Written last by setup; its absence means the install is incomplete and is redone. */
export const INSTALL_MARKER = path.join(CODE_SERVER_PREFIX, '.install-complete.json');
export const EXTENSION_BUNDLE = path.join(REPO_ROOT, 'dist', 'extension.js');
export const FIXTURE_WORKSPACE = path.join(REPO_ROOT, 'test', 'fixtures', 'workspace');
export const DEFAULT_INTEGRATION_ENTRY = path.join(OUT_DIR, 'test', 'integration', 'index.js');
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
export const CHROMIUM = '/usr/bin/chromium';

export interface Manifest {
  name: string;
  publisher: string;
  contributes?: {
    commands?: { command: string; title: string; category?: string }[];
    configuration?: { properties?: Record<string, { default?: unknown }> };
    menus?: Record<string, { command: string; when?: string }[]>;
  };
}

/** package.json with its `%key%` strings resolved from package.nls.json (English), as VS Code shows them. */
export function readManifest(): Manifest {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8');
  const nlsFile = path.join(REPO_ROOT, 'package.nls.json');
  const nls = fs.existsSync(nlsFile) ? (JSON.parse(fs.readFileSync(nlsFile, 'utf8')) as Record<string, string>) : {};
  return JSON.parse(text, (_key, value: unknown) => {
    if (typeof value !== 'string') return value;
    const match = /^%(.+)%$/.exec(value);
    return match && match[1] in nls ? nls[match[1]] : value;
  }) as Manifest;
}
