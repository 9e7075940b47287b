// Launches a real VS Code (code-server from .cache/) with the extension under development, the
// gateway emulator and a headless Chromium on the workbench. Used by runIntegration (with a test
// payload) and by the e2e helpers (without one). Everything lives in one temp dir and one
// process group, and is removed/killed by close(), on Ctrl+C, on errors and at process exit.
// Ports, process groups and the clean-up at exit: processes.ts; flags, checks and the workbench URL:
// workbenchConfig.ts; what the page logs: workbenchLog.ts.
import { type ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { BrowserContext, Page } from 'playwright-core';
import { type EmulatorHandle, emulatorEnv, startSuiteEmulator } from './emulator';
import { CHROMIUM, FIXTURE_WORKSPACE, nodeFor, REPO_ROOT, selectedVscodeTarget, type VscodeTarget } from './paths';
import { languagePacksJson } from './languagePack';
import { freePort, installSafetyNet, killGroup, live, type Resource, signalGroup, waitForCodeServer } from './processes';
import {
  buildWorkbenchUrl,
  checkCodeServerInstalled,
  checkExtensionBuilt,
  CHROMIUM_ARGS,
  E2E_CHROMIUM_ARGS,
  codeServerFlags,
  disableExtensionsInPage,
  enableSmokeTestDriverInPage,
  installExtensionCopy,
  NO_BUILTIN_AI,
  NO_PORT_SCAN,
  QUIET_EDITOR,
  UNCOMPRESSED,
  UNUSED_BUILTIN_EXTENSIONS,
  writeJson,
} from './workbenchConfig';
import { formatAutomationLog, recordPageEvents, WORKBENCH_NOISE } from './workbenchLog';
import { setTimeout as sleep } from 'timers/promises';

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
  /**
   * VS Code's built-in extensions that are off in the window, as after a person disabled them in
   * the Extensions view (their ids). Default: UNUSED_BUILTIN_EXTENSIONS; `[]` runs them all.
   */
  disabledBuiltinExtensions?: readonly string[];
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
      ...NO_PORT_SCAN,
      ...QUIET_EDITOR,
      ...NO_BUILTIN_AI,
      // A blinking cursor repaints twice a second, in software (VS Code 1.139 focuses the Chat input).
      'editor.cursorBlinking': 'solid',
      'security.workspace.trust.enabled': options.workspaceTrust === true,
      // With trust on: no start-up trust dialog; the window opens in Restricted Mode.
      ...(options.workspaceTrust ? { 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.untrustedFiles': 'open' } : {}),
      // The money alerts (on by default for people) would add warnings to tests of other things whenever
      // their key's budget or balance crosses a line; the alerts' own tests turn them on.
      'gatewayImages.alerts.budgetThresholds': [],
      'gatewayImages.alerts.runwayDays': 0,
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
      args: options.extensionTestsPath ? CHROMIUM_ARGS : E2E_CHROMIUM_ARGS,
      // Uncompressed answers: code-server brotli-compresses each workbench file per request (about a
      // second of its CPU per window, and more per reload), for a loopback connection.
      extraHTTPHeaders: UNCOMPRESSED,
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

    recordPageEvents(page, context, logLines);

    // The built-in extensions that are off: recorded where the workbench keeps a person's choice
    // (its global state in the page's IndexedDB, on the server's origin) before the workbench loads.
    const disabled = options.disabledBuiltinExtensions ?? UNUSED_BUILTIN_EXTENSIONS;
    if (disabled.length) {
      await page.goto(`${serverUrl}/healthz`, { timeout: 60_000 });
      await page.evaluate(disableExtensionsInPage(disabled));
    }

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
