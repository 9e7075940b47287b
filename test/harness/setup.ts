// Setup for the real-VS-Code tests: Debian packages, then code-server from npm into .cache/.
// CLI: `node out/test/harness/setup.js`. Idempotent; a second run with a complete install is fast.
import { ChildProcess, spawn, SpawnOptions, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  CODE_SERVER_ENTRY,
  CODE_SERVER_PACKAGE,
  CODE_SERVER_PREFIX,
  CODE_SERVER_VERSION,
  CODE_SERVER_VSCODE,
  INSTALL_MARKER,
} from './paths';

/** Debian packages: the browser, ripgrep for search, headers for the native modules, build tools. */
export const APT_PACKAGES = [
  'chromium',
  'ripgrep',
  'libkrb5-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
  'pkg-config',
  // node-gyp needs a compiler, make and python3 to rebuild the native modules.
  'build-essential',
  'python3',
];

/** Native modules of VS Code's server that are rebuilt explicitly (their install scripts are skipped). */
export const VSCODE_NATIVE_MODULES = [
  'kerberos',
  'node-pty',
  '@vscode/spdlog',
  'native-watchdog',
  '@vscode/deviceid',
  '@parcel/watcher',
];

export class SetupError extends Error {}

function log(message: string): void {
  process.stdout.write(`[setup] ${message}\n`);
}

let currentChild: ChildProcess | undefined;
let interruptedBy: NodeJS.Signals | undefined;

/**
 * Runs a command to completion. On SIGINT/SIGTERM the setup waits for the running command to
 * finish (npm rolls back a half-done install) instead of leaving it running behind a new setup.
 */
function run(command: string, args: string[], options: SpawnOptions = {}): Promise<void> {
  if (interruptedBy) return Promise.reject(new SetupError(`interrupted (${interruptedBy})`));
  const cwd = options.cwd ? String(options.cwd) : undefined;
  if (cwd && !fs.existsSync(cwd)) {
    return Promise.reject(new SetupError(`${cwd} has disappeared: is another setup running on the same .cache/?`));
  }
  log(`$ ${command} ${args.join(' ')}${cwd ? ` (in ${path.relative(process.cwd(), cwd) || '.'})` : ''}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    currentChild = child;
    child.on('error', (err) => reject(new SetupError(`${command} could not start: ${err.message}`)));
    child.on('exit', (code, signal) => {
      currentChild = undefined;
      if (interruptedBy) reject(new SetupError(`interrupted (${interruptedBy})`));
      else if (code === 0) resolve();
      else reject(new SetupError(`${command} ${args.join(' ')} failed with ${signal ?? `exit code ${code}`}`));
    });
  });
}

function onInterrupt(signal: NodeJS.Signals): void {
  if (interruptedBy) return;
  interruptedBy = signal;
  process.stderr.write(`\n[setup] ${signal}: waiting for the running step to stop; the install will be redone next time\n`);
  // Ctrl+C reaches the whole foreground group already; a SIGTERM is usually aimed at us alone.
  if (signal === 'SIGTERM') currentChild?.kill('SIGTERM');
}

function isInstalled(pkg: string): boolean {
  const r = spawnSync('dpkg', ['-s', pkg], { stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' });
  return r.status === 0 && /^Status: install ok installed$/m.test(r.stdout);
}

export function missingAptPackages(packages = APT_PACKAGES): string[] {
  const dpkg = spawnSync('dpkg', ['--version'], { stdio: 'ignore' });
  if (dpkg.error || dpkg.status !== 0) {
    throw new SetupError('dpkg is not available: this setup supports Debian/Ubuntu only.');
  }
  return packages.filter((p) => !isInstalled(p));
}

/** Installs missing Debian packages as root; otherwise prints the command and fails. */
export async function ensureAptPackages(): Promise<void> {
  const missing = missingAptPackages();
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    const command =
      `sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing.join(' ')}`;
    process.stderr.write(`[setup] Missing Debian packages: ${missing.join(' ')}\n`);
    process.stderr.write(`[setup] Run this, then run the setup again:\n${command}\n`);
    throw new SetupError(`missing Debian packages: ${missing.join(' ')}`);
  }
  log(`Installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update'], { env });
  await run('apt-get', ['install', '-y', ...missing], { env });
  const still = missingAptPackages();
  if (still.length > 0) throw new SetupError(`apt-get did not install: ${still.join(' ')}`);
}

interface Marker {
  codeServer: string;
  node: string;
  modules: string;
  installedAt: string;
}

function readMarker(): Marker | undefined {
  try {
    return JSON.parse(fs.readFileSync(INSTALL_MARKER, 'utf8')) as Marker;
  } catch {
    return undefined;
  }
}

/** A complete install for this code-server version and this Node ABI (native modules depend on it). */
export function isCodeServerInstalled(): boolean {
  const marker = readMarker();
  return (
    marker !== undefined &&
    marker.codeServer === CODE_SERVER_VERSION &&
    marker.modules === process.versions.modules &&
    fs.existsSync(CODE_SERVER_ENTRY)
  );
}

function symlink(target: string, linkPath: string): void {
  fs.rmSync(linkPath, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(linkPath), { recursive: true });
  fs.symlinkSync(target, linkPath);
}

/**
 * Loads every native module with this Node (code-server from npm runs on the system Node),
 * in a child process so a crash in a binding cannot take the setup down with it.
 */
function verifyNativeModules(): void {
  const checks: { cwd: string; modules: string[] }[] = [
    { cwd: CODE_SERVER_PACKAGE, modules: ['argon2'] },
    { cwd: CODE_SERVER_VSCODE, modules: VSCODE_NATIVE_MODULES },
  ];
  const failures: string[] = [];
  for (const { cwd, modules } of checks) {
    for (const mod of modules) {
      const script = `require(${JSON.stringify(mod)}); process.stdout.write('ok')`;
      const r = spawnSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8', timeout: 30_000 });
      if (r.status !== 0 || r.stdout !== 'ok') {
        const reason = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').slice(0, 6).join('\n    ');
        failures.push(`${mod} (from ${path.relative(CODE_SERVER_PREFIX, cwd)}):\n    ${reason}`);
      } else {
        log(`native module loads: ${mod}`);
      }
    }
  }
  const rg = path.join(CODE_SERVER_VSCODE, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg');
  const r = spawnSync(rg, ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) failures.push(`ripgrep at ${rg} does not run: ${r.error?.message ?? r.stderr}`);
  if (failures.length > 0) {
    throw new SetupError(`native modules do not load with ${process.execPath} (${process.version}):\n  ${failures.join('\n  ')}`);
  }
}

async function installCodeServer(): Promise<void> {
  // Start from scratch: a leftover directory without the marker is an interrupted install.
  fs.rmSync(CODE_SERVER_PREFIX, { recursive: true, force: true });
  fs.mkdirSync(CODE_SERVER_PREFIX, { recursive: true });
  fs.writeFileSync(
    path.join(CODE_SERVER_PREFIX, 'package.json'),
    JSON.stringify({ name: 'gateway-images-code-server', private: true }, null, 2) + '\n',
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_yes: 'true', // node-pty's rebuild runs npx
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
  };
  // Never let anything download a browser or an Electron binary.
  env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
  env.ELECTRON_SKIP_BINARY_DOWNLOAD = '1';
  const npm = 'npm';

  // 1. code-server itself, without its postinstall (it would build kerberos and download ripgrep).
  await run(npm, ['install', `code-server@${CODE_SERVER_VERSION}`, '--ignore-scripts', '--no-save'], {
    cwd: CODE_SERVER_PREFIX,
    env,
  });
  await run(npm, ['rebuild', 'argon2'], { cwd: CODE_SERVER_PREFIX, env });

  // 2. VS Code's server dependencies, pinned by lib/vscode/npm-shrinkwrap.json; natives rebuilt by name.
  await run(npm, ['install', '--omit=dev', '--ignore-scripts'], { cwd: CODE_SERVER_VSCODE, env });
  await run(npm, ['rebuild', ...VSCODE_NATIVE_MODULES], { cwd: CODE_SERVER_VSCODE, env });

  // 3. ripgrep from Debian instead of @vscode/ripgrep's GitHub download.
  symlink('/usr/bin/rg', path.join(CODE_SERVER_VSCODE, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg'));

  // 4. What code-server's postinstall.sh does after its `npm install` in lib/vscode.
  symlink('node_modules', path.join(CODE_SERVER_VSCODE, 'node_modules.asar'));
  symlink('code-linux.sh', path.join(CODE_SERVER_VSCODE, 'bin', 'remote-cli', 'code-server'));
  symlink('browser-linux.sh', path.join(CODE_SERVER_VSCODE, 'bin', 'helpers', 'browser.sh'));
  await run(npm, ['install', '--omit=dev'], { cwd: path.join(CODE_SERVER_VSCODE, 'extensions'), env });

  // 5. Prove it: every native module loads, ripgrep runs, the CLI answers.
  verifyNativeModules();
  // Even --version writes ~/.config/code-server/config.yaml and log files: give it a throwaway home.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gi-cs-version-'));
  try {
    const version = spawnSync(process.execPath, [CODE_SERVER_ENTRY, '--version'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data') },
    });
    const line = version.stdout.split('\n').find((l) => l.startsWith(CODE_SERVER_VERSION));
    if (version.status !== 0 || !line) {
      throw new SetupError(`code-server --version failed: ${version.stdout}${version.stderr}`);
    }
    log(`code-server --version: ${line.trim()}`);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }

  const marker: Marker = {
    codeServer: CODE_SERVER_VERSION,
    node: process.version,
    modules: process.versions.modules,
    installedAt: new Date().toISOString(),
  };
  fs.writeFileSync(INSTALL_MARKER, JSON.stringify(marker, null, 2) + '\n');
}

export interface SetupResult {
  reused: boolean;
  seconds: number;
}

const LOCK = `${CODE_SERVER_PREFIX}.lock`;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One installer at a time per checkout (parallel CI jobs, several terminals). */
async function withInstallLock<T>(fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  let waited = false;
  for (;;) {
    try {
      const fd = fs.openSync(LOCK, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(LOCK, 'utf8').trim());
      if (!owner || !pidAlive(owner)) {
        fs.rmSync(LOCK, { force: true }); // stale: its owner died
        continue;
      }
      if (!waited) log(`Another setup (pid ${owner}) is installing code-server; waiting for it`);
      waited = true;
      await new Promise((r) => setTimeout(r, 1000));
      if (interruptedBy) throw new SetupError(`interrupted (${interruptedBy})`);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(LOCK, { force: true });
  }
}

/** Makes sure Debian packages and code-server are there. Rejects with SetupError on any failure. */
export async function ensureSetup(): Promise<SetupResult> {
  const started = Date.now();
  await ensureAptPackages();
  let reused = true;
  if (!isCodeServerInstalled()) {
    await withInstallLock(async () => {
      if (isCodeServerInstalled()) return; // the other setup finished it
      reused = false;
      log(`Installing code-server ${CODE_SERVER_VERSION} into ${CODE_SERVER_PREFIX}`);
      await installCodeServer();
    });
  }
  return { reused, seconds: (Date.now() - started) / 1000 };
}

if (require.main === module) {
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  ensureSetup().then(
    ({ reused, seconds }) => {
      log(
        reused
          ? `code-server ${CODE_SERVER_VERSION} already installed (${CODE_SERVER_PREFIX}); checked in ${seconds.toFixed(2)} s`
          : `code-server ${CODE_SERVER_VERSION} installed in ${seconds.toFixed(1)} s`,
      );
    },
    (err: unknown) => {
      process.stderr.write(`[setup] FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = interruptedBy === 'SIGINT' ? 130 : interruptedBy === 'SIGTERM' ? 143 : 1;
    },
  );
}
