// Launches a real VS Code (code-server from .cache/) with the extension under development, the
// gateway emulator and a headless Chromium on the workbench. Used by runIntegration (with a test
// payload) and by the e2e helpers (without one). Everything lives in one temp dir and one
// process group, and is removed/killed by close(), on Ctrl+C, on errors and at process exit.
import { type ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { format } from 'util';
import type { BrowserContext, Page, Request as BrowserRequest } from 'playwright-core';
import { type EmulatorHandle, emulatorEnv, startSuiteEmulator } from './emulator';
import { CHROMIUM, EXTENSION_BUNDLE, FIXTURE_WORKSPACE, nodeFor, REPO_ROOT, selectedVscodeTarget, type VscodeTarget } from './paths';
import { languagePacksJson } from './languagePack';
import { isCodeServerInstalled } from './setup';
import { setTimeout as sleep } from 'timers/promises';

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
];

export const CODE_SERVER_FLAGS = [
  '--auth',
  'none',
  '--disable-telemetry',
  '--disable-update-check',
  '--disable-workspace-trust',
  '--disable-getting-started-override',
];

/** The flags for a run with Workspace Trust on (the workspace starts untrusted). */
export function codeServerFlags(workspaceTrust: boolean): string[] {
  return workspaceTrust ? CODE_SERVER_FLAGS.filter((f) => f !== '--disable-workspace-trust') : [...CODE_SERVER_FLAGS];
}

export interface LaunchOptions {
  /** Workspace folder to open. Default: a fresh temp copy of test/fixtures/workspace/. */
  workspace?: string;
  /** Open an empty window (no folder); `workspace` is then only a scratch folder the tests may use. */
  noFolder?: boolean;
  /** Test entry module (exports run()). Without it the workbench opens for e2e use. */
  extensionTestsPath?: string;
  /** Extension under development. Default: the repository root. */
  extensionDevelopmentPath?: string;
  /** Extra environment for code-server and the extension host. */
  env?: Record<string, string>;
  /** Extra user settings (merged over the harness defaults). */
  settings?: Record<string, unknown>;
  /** Receives each relayed line of the workbench/extension host log. Default: stdout. */
  onLog?: (line: string) => void;
  /** Echo code-server's own stdout/stderr and all workbench chatter. Default: env GATEWAY_IMAGES_TEST_VERBOSE=1. */
  verbose?: boolean;
  /** Start a gateway emulator (default true). */
  emulator?: boolean;
  viewport?: { width: number; height: number };
  /** Which VS Code (default: env GATEWAY_IMAGES_TEST_VSCODE, else the oldest). */
  vscode?: VscodeTarget;
  /** Run with Workspace Trust on; the opened folder is then untrusted until trusted (default false). */
  workspaceTrust?: boolean;
  /** Display language (argv.json `locale`); a language pack for it must be among `extensions`. */
  locale?: string;
  /** Extension folders installed into the run's extensions dir (copied) before code-server starts. */
  extensions?: string[];
  /**
   * Install the extension under development into the run's extensions dir (as a user has it)
   * instead of loading it through the `extensionDevelopmentPath` payload. Default: only for runs
   * without tests on a VS Code that reads the payload only with the smoke-test driver, because
   * that driver also hides every notification toast (VS Code 1.139's NotificationsToasts skips
   * them when `enableSmokeTestDriver` is set): the e2e suite on the current VS Code.
   */
  installExtension?: boolean;
  /**
   * A command that starts code-server for the run: its arguments, then code-server's command line
   * (e.g. `unshare --mount … sh -c '…; exec "$@"' sh`: a private mount namespace for one run).
   */
  wrapCommand?: string[];
}

export interface Workbench {
  /** The one temp dir holding home, user data, extensions, workspace copy and browser profile. */
  root: string;
  port: number;
  serverUrl: string;
  workspace: string;
  userDataDir: string;
  emulator: EmulatorHandle | undefined;
  context: BrowserContext;
  page: Page;
  /** The VS Code it runs. */
  vscode: VscodeTarget;
  /** Every relayed log line, for failure reports. */
  logLines: string[];
  /** code-server's own output (never used for pass/fail). */
  serverLog(): string;
  /** Resolves with the code passed to window.codeAutomationExit (test runs only). */
  exitCode: Promise<number>;
  /** VS Code's log files handed over with codeAutomationExit. */
  vscodeLogs: { relativePath: string; contents: string }[];
  close(): Promise<void>;
}

// ---- process-wide safety net ---------------------------------------------------------------

interface Resource {
  /** Best-effort synchronous cleanup, for process exit. */
  killSync(): void;
  close(): Promise<void>;
}
const live = new Set<Resource>();
let handlersInstalled = false;

function installSafetyNet(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const r of live) r.killSync();
  });
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    process.stderr.write(`\n[harness] ${signal}: cleaning up\n`);
    const all = [...live].map((r) => r.close().catch(() => undefined));
    const force = setTimeout(() => process.exit(code), 10_000);
    force.unref();
    void Promise.all(all).finally(() => process.exit(code));
  };
  process.once('SIGINT', () => onSignal('SIGINT', 130));
  process.once('SIGTERM', () => onSignal('SIGTERM', 143));
  process.once('SIGHUP', () => onSignal('SIGHUP', 129));
}

/** Closes every workbench this process launched (also ones still starting). */
export async function closeAllWorkbenches(): Promise<void> {
  await Promise.all([...live].map((r) => r.close().catch(() => undefined)));
}

// ---- helpers -------------------------------------------------------------------------------

/**
 * A free port that no other process will be handed by the system meanwhile: it is taken from below
 * the ephemeral range (ports given to `listen(0)` and outgoing connections), since the port is
 * passed to a server that binds it seconds later. A port from the ephemeral range was once taken
 * in between by one of VS Code's own servers, which then answered the e2e-control requests.
 */
export async function freePort(): Promise<number> {
  const ceiling = Math.min(EPHEMERAL_LOW, 32768) - 1;
  for (let attempt = 0; ceiling > 20_000 && attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * (ceiling - 20_000));
    const bound = await listenOnce(port).catch(() => undefined);
    if (bound !== undefined) return bound;
  }
  return listenOnce(0);
}

/** Where the system's ephemeral ports start (Linux); otherwise the IANA range most systems use. */
const EPHEMERAL_LOW: number = (() => {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // not Linux
  }
  return 49152;
})();

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/** Resolves once code-server answers /healthz with 200; rejects after `timeoutMs` or once `exited()` says it died. */
export async function waitForCodeServer(serverUrl: string, timeoutMs: number, exited: () => string | undefined, output: () => string): Promise<void> {
  const readyBy = Date.now() + timeoutMs;
  while ((await httpStatus(`${serverUrl}/healthz`)) !== 200) {
    const gone = exited();
    if (gone) throw new Error(`${gone} before it was ready:\n${output().slice(-4000)}`);
    if (Date.now() > readyBy) throw new Error(`code-server did not answer on ${serverUrl} within ${timeoutMs / 1000} s:\n${output().slice(-4000)}`);
    await sleep(100);
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

/** SIGTERM the whole group, SIGKILL what is left after a grace period, wait until it is empty. */
export async function killGroup(child: ChildProcess, graceMs = 3000): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(50);
  if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  const hard = Date.now() + 5000;
  while (groupAlive(pgid) && Date.now() < hard) await sleep(50);
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

/**
 * Formats one codeAutomationLog call. VS Code hands either a formatted string or console-style
 * arguments; `%c` CSS directives (and their style arguments) are dropped, the rest is
 * printf-formatted like console.log.
 */
export function formatAutomationLog(type: string, args: unknown): string {
  let parts = Array.isArray(args) ? [...args] : [args];
  if (typeof parts[0] === 'string' && parts[0].includes('%c')) {
    const template = parts[0];
    const styles = (template.match(/%c/g) ?? []).length;
    parts = [template.replace(/%c/g, ''), ...parts.slice(1 + styles)];
  }
  void type; // every level goes to the same stream; mocha's output is mostly 'info'
  if (parts.length > 0 && typeof parts[0] === 'string') return format(...(parts as [string, ...unknown[]]));
  return parts.map((p) => format('%O', p)).join(' ');
}

/** Workbench start-up chatter that comes through codeAutomationLog; kept in logLines, not printed. */
const WORKBENCH_NOISE =
  /^(Resolving connection token|Resolved connection token|Creating a socket|Ignoring fetching additional builtin extensions|\[Service Worker\]|ChatSessionStore:|Updating additional builtin extensions cache)/;

function writeJson(file: string, value: unknown): void {
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

// ---- launch --------------------------------------------------------------------------------

export async function launchWorkbench(options: LaunchOptions = {}): Promise<Workbench> {
  checkExtensionBuilt();
  const vscode = options.vscode ?? selectedVscodeTarget();
  checkCodeServerInstalled(vscode);
  installSafetyNet();

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-images-vscode-'));
  const dirs = {
    home: path.join(root, 'home'),
    config: path.join(root, 'home', '.config'),
    data: path.join(root, 'home', '.local', 'share'),
    cache: path.join(root, 'home', '.cache'),
    tmp: path.join(root, 'tmp'),
    userData: path.join(root, 'user-data'),
    extensions: path.join(root, 'extensions'),
    browser: path.join(root, 'chromium-profile'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });

  let child: ChildProcess | undefined;
  let context: BrowserContext | undefined;
  let emulator: EmulatorHandle | undefined;
  let closed = false;
  let serverOutput = '';
  const logLines: string[] = [];
  const verbose = options.verbose ?? process.env.GATEWAY_IMAGES_TEST_VERBOSE === '1';
  const emit = options.onLog ?? ((line: string) => process.stdout.write(line + '\n'));

  const resource: Resource = {
    killSync() {
      if (child?.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      fs.rmSync(root, { recursive: true, force: true });
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        // A wedged browser must not block the clean-up: Playwright kills it at exit anyway.
        if (context) await Promise.race([context.close().catch(() => undefined), sleep(10_000)]);
        if (child) await killGroup(child);
        await Promise.resolve(emulator?.close()).catch(() => undefined);
      } finally {
        for (let i = 0; i < 5; i++) {
          try {
            fs.rmSync(root, { recursive: true, force: true });
            break;
          } catch {
            await sleep(200); // a dying process may still be writing its logs
          }
        }
        live.delete(resource);
      }
    },
  };
  live.add(resource);

  try {
    // Workspace: a throwaway copy of the fixture so tests may write files.
    let workspace = options.workspace ? path.resolve(options.workspace) : path.join(root, 'workspace');
    if (!options.workspace) fs.cpSync(FIXTURE_WORKSPACE, workspace, { recursive: true });
    if (!fs.existsSync(workspace)) throw new Error(`Workspace folder does not exist: ${workspace}`);
    workspace = fs.realpathSync(workspace);

    const extEnv: Record<string, string> = {};
    const settings: Record<string, unknown> = {
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
      'security.workspace.trust.enabled': options.workspaceTrust === true,
      // With trust on: no start-up trust dialog; the window opens in Restricted Mode.
      ...(options.workspaceTrust ? { 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.untrustedFiles': 'open' } : {}),
    };
    if (options.emulator !== false) {
      emulator = await startSuiteEmulator();
      Object.assign(extEnv, emulatorEnv(emulator));
      settings['gatewayImages.baseUrl'] = emulator.url;
    }
    Object.assign(settings, options.settings); // the caller's settings win, baseUrl included
    // baseUrl is machine-scoped: a remote window ignores it in User settings, so write both.
    const machine = 'gatewayImages.baseUrl' in settings ? { 'gatewayImages.baseUrl': settings['gatewayImages.baseUrl'] } : {};
    writeJson(path.join(dirs.userData, 'User', 'settings.json'), settings);
    writeJson(path.join(dirs.userData, 'Machine', 'settings.json'), machine);
    // The display language: VS Code reads `locale` from argv.json in the user data dir.
    if (options.locale) writeJson(path.join(dirs.userData, 'User', 'argv.json'), { locale: options.locale });
    const installed = (options.extensions ?? []).map((ext) => {
      const dir = path.join(dirs.extensions, path.basename(ext));
      fs.cpSync(ext, dir, { recursive: true });
      return dir;
    });
    writeJson(path.join(dirs.userData, 'languagepacks.json'), languagePacksJson(installed));
    const extensionDevelopmentPath = path.resolve(options.extensionDevelopmentPath ?? REPO_ROOT);
    const installExtension = options.installExtension ?? (!options.extensionTestsPath && vscode.payloadNeedsSmokeTestDriver);
    if (installExtension) installExtensionCopy(extensionDevelopmentPath, dirs.extensions);

    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      // Don't let an enclosing VS Code (terminal, debugger) leak into this one.
      if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE' || k.startsWith('npm_')) continue;
      env[k] = v;
    }
    Object.assign(env, {
      HOME: dirs.home,
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      XDG_CACHE_HOME: dirs.cache,
      TMPDIR: dirs.tmp,
      EXTENSIONS_GALLERY: '{}',
      ...extEnv,
      ...options.env,
    });

    const port = await freePort();
    const serverUrl = `http://127.0.0.1:${port}`;
    const args = [
      vscode.entry,
      '--bind-addr',
      `127.0.0.1:${port}`,
      ...codeServerFlags(options.workspaceTrust === true),
      ...(options.locale ? ['--locale', options.locale] : []),
      '--user-data-dir',
      dirs.userData,
      '--extensions-dir',
      dirs.extensions,
      '--ignore-last-opened',
    ];
    // The target's Node runs code-server and so the extension host (Node 24 for the current one).
    const [command, ...prefix] = options.wrapCommand ?? [nodeFor(vscode)];
    const commandLine = options.wrapCommand ? [...prefix, nodeFor(vscode), ...args] : args;
    child = spawn(command!, commandLine, { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const onOutput = (chunk: Buffer) => {
      const s = chunk.toString();
      serverOutput += s;
      if (serverOutput.length > 2_000_000) serverOutput = serverOutput.slice(-1_000_000);
      if (verbose) process.stderr.write(s.replace(/^/gm, '[code-server] '));
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    let serverExited: string | undefined;
    const serverExit = new Promise<never>((_, reject) => {
      child!.on('exit', (code, signal) => {
        serverExited = `code-server exited (${signal ?? code})`;
        if (!closed) reject(new Error(`${serverExited}\n${serverOutput.slice(-4000)}`));
      });
    });
    serverExit.catch(() => undefined);

    await waitForCodeServer(
      serverUrl,
      60_000,
      () => serverExited,
      () => serverOutput,
    );

    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(dirs.browser, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: options.viewport ?? { width: 1400, height: 900 },
      env: { ...env, HOME: dirs.home, TMPDIR: dirs.tmp },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    if (vscode.payloadNeedsSmokeTestDriver && !installExtension) await page.addInitScript(enableSmokeTestDriverInPage);

    let resolveExit!: (code: number) => void;
    const exitCode = new Promise<number>((resolve) => (resolveExit = resolve));
    const vscodeLogs: { relativePath: string; contents: string }[] = [];
    await page.exposeFunction('codeAutomationLog', (type: string, args: unknown) => {
      const line = formatAutomationLog(type, args);
      logLines.push(line);
      if (verbose || type !== 'info' || !WORKBENCH_NOISE.test(line)) emit(line);
    });
    await page.exposeFunction('codeAutomationExit', (code: number, logs?: { relativePath: string; contents: string }[]) => {
      if (Array.isArray(logs)) vscodeLogs.push(...logs);
      resolveExit(typeof code === 'number' ? code : 1);
    });
    page.on('pageerror', (err) => logLines.push(`[page error] ${err.message}`));
    page.on('crash', () => logLines.push('[page crashed]'));
    // Webview frames and VS Code's webview service worker: a page that stays blank is explained here
    // (kept in relayed.log of a failed run, never printed).
    const stamp = () => new Date().toISOString().slice(11, 23);
    page.on('console', (message) => {
      if (/\/webview\//.test(message.location().url)) logLines.push(`[webview ${stamp()}] ${message.type()}: ${message.text()}`);
    });
    const webviewRequest = (url: string) => /vscode-resource|vscode-cdn|\/webview\/browser\/pre\//.test(url);
    const requestStarted = new WeakMap<object, number>();
    context.on('request', (request) => {
      if (!webviewRequest(request.url())) return;
      requestStarted.set(request, Date.now());
      logLines.push(`[webview request ${stamp()}] ${request.method()} ${request.url().slice(0, 200)}`);
    });
    const requestEnded = (outcome: string) => (request: BrowserRequest) => {
      const started = requestStarted.get(request);
      if (started === undefined) return;
      const ms = Date.now() - started;
      // Only the slow and the failed: a webview that waits on a resource shows here.
      if (ms >= 1000 || outcome !== 'finished')
        logLines.push(`[webview request ${stamp()}] ${outcome} after ${ms} ms: ${request.method()} ${request.url().slice(0, 200)}`);
    };
    context.on('requestfinished', requestEnded('finished'));
    context.on('requestfailed', (request) => requestEnded(`failed (${request.failure()?.errorText ?? '?'})`)(request));
    context.on('serviceworker', (worker) => {
      logLines.push(`[service worker ${stamp()}] started: ${worker.url().replace(/\?.*/, '')}`);
      worker.on('console', (message) => logLines.push(`[service worker ${stamp()}] ${message.type()}: ${message.text()}`));
    });

    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload: [string, string][] = installExtension ? [] : [['extensionDevelopmentPath', remote(extensionDevelopmentPath)]];
    if (options.extensionTestsPath) payload.push(['extensionTestsPath', remote(path.resolve(options.extensionTestsPath))]);
    payload.push(['skipWelcome', 'true']);
    await page.goto(buildWorkbenchUrl(port, options.noFolder ? undefined : workspace, payload), { waitUntil: 'domcontentloaded', timeout: 60_000 });

    return {
      root,
      port,
      serverUrl,
      workspace,
      userDataDir: dirs.userData,
      vscode,
      emulator,
      context,
      page,
      logLines,
      serverLog: () => serverOutput,
      exitCode: Promise.race([exitCode, serverExit]),
      vscodeLogs,
      close: () => resource.close(),
    };
  } catch (err) {
    await resource.close();
    throw err;
  }
}

/** Rejects after ms (for an overall deadline); the timer does not keep the process alive. */
export function deadline(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)), ms);
    t.unref();
  });
}
