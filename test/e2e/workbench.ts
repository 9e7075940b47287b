// End-to-end helpers: a real VS Code workbench (code-server + headless Chromium) with the
// extension under development loaded and the gateway emulator running, driven like a person.
// Use from plain mocha suites (test/e2e/**/*.e2e.test.ts, `npm run test:e2e`).
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from 'playwright-core';
import type { EmulatorHandle } from '../harness/emulator';
import { setTimeout as sleep } from 'timers/promises';
import { launchWorkbench, type LaunchOptions, type Workbench } from '../harness/launch';
import { freePort } from '../harness/processes';
import { readManifest, REPO_ROOT, RESULTS_DIR } from '../harness/paths';
import { readToasts } from './notifications';
import { runCommand } from './quickInput';
import { readStatusBar } from './parts';
import type { OpenedWorkbench } from './openedWorkbench';
import { waitFor } from './wait';

export * from './notifications';
export * from './parts';
export * from './quickInput';
export * from './wait';

export const E2E_RESULTS_DIR = path.join(RESULTS_DIR, 'e2e');

export interface OpenWorkbenchOptions {
  /** Folder to open. Default: a fresh temp copy of test/fixtures/workspace/. */
  workspace?: string;
  /** Open an empty window with no folder. */
  noFolder?: boolean;
  /** Extra user settings. */
  settings?: Record<string, unknown>;
  /** Extra environment for code-server and the extension host. */
  env?: Record<string, string>;
  /** Wait until the extension has been activated (default true). */
  waitForActivation?: boolean;
  /** Start-up deadline in ms (default 90 s). */
  timeoutMs?: number;
  /** Print the workbench log and code-server's output as they come (default: env GATEWAY_IMAGES_TEST_VERBOSE=1). */
  verbose?: boolean;
  viewport?: LaunchOptions['viewport'];
  /** Workspace Trust on (the folder opens untrusted), display language, extra extension folders. */
  workspaceTrust?: boolean;
  locale?: string;
  extensions?: string[];
  /** Starts code-server through this command (LaunchOptions.wrapCommand). */
  wrapCommand?: string[];
  /** Built-in extensions off in the window (LaunchOptions.disabledBuiltinExtensions). Default: UNUSED_BUILTIN_EXTENSIONS; `[]` runs them all. */
  disabledBuiltinExtensions?: readonly string[];
}

export type { McpDefinitionJson, OpenedWorkbench } from './openedWorkbench';

/** `<publisher>.<name>` from package.json. */
export function extensionId(): string {
  const m = readManifest();
  return `${m.publisher}.${m.name}`;
}

/** The id suffix of the extension's status bar item (src/account/statusBar.ts, STATUS_ITEM_ID). */
const STATUS_ITEM = 'gateway-images.status';

function findFiles(dir: string, test: (name: string) => boolean, out: string[] = []): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) findFiles(full, test, out);
    else if (test(e.name)) out.push(full);
  }
  return out;
}

/**
 * Waits until the extension host has activated the extension, from the extension host's log in
 * the run's user-data dir (VS Code logs `ExtensionService#_doActivateExtension <id>` at info level
 * and `Activating extension '<id>' failed` on errors). Not used for any test verdict.
 */
async function waitForActivation(wb: Workbench, id: string, timeoutMs: number): Promise<void> {
  const logsDir = path.join(wb.userDataDir, 'logs');
  const activated = `ExtensionService#_doActivateExtension ${id}`;
  const failed = new RegExp(`Activating extension '?${id.replace(/\./g, '\\.')}'? failed`, 'i');
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const file of findFiles(logsDir, (n) => /exthost/i.test(n) && n.endsWith('.log'))) {
      const text = fs.readFileSync(file, 'utf8');
      const failure = text.split('\n').find((l) => failed.test(l));
      if (failure) throw new Error(`The extension failed to activate: ${failure}`);
      if (text.includes(activated)) {
        // activate() has run its synchronous part (contributions registered) once its status bar item shows.
        while ((await readStatusBar(wb.page, STATUS_ITEM).catch(() => [])).length === 0) {
          if (Date.now() > until) throw new Error(`Extension ${id} activated, but its status bar item did not show`);
          await sleep(100);
        }
        return;
      }
    }
    if (Date.now() > until) throw new Error(`Extension ${id} was not activated within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(200);
  }
}

/** The fixture extension that runs VS Code commands for a test's set-up (test/fixtures/e2e-control). */
const CONTROL_FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'e2e-control');

/**
 * Hovers never show in e2e windows. A person's pointer rests and then moves on; Playwright's pointer
 * jumps to a target and clicks at once, then stays there. With a short delay, a hover opened by
 * where the last click left the pointer lays itself over a toast's or a row's button that the next
 * step clicks (the click lands on the hover: seen as a Cancel that cancelled nothing). No test here
 * is about a hover's content; the status bar's tooltip text is tested through its aria-label.
 */
const NO_HOVERS = { 'workbench.hover.delay': 3_600_000 };

async function post<T>(port: number, route: string, body: unknown): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', body: JSON.stringify(body) });
  const answer = (await response.json()) as { result?: T; error?: string };
  if (!response.ok) throw new Error(`e2e-control ${route} ${JSON.stringify(body)}: ${answer.error ?? response.status}`);
  return answer.result as T;
}

/** Waits until the control fixture answers (it activates on startup finished, after our extension). */
async function waitForControl(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await post(port, '/ready', {});
      return;
    } catch (error) {
      if (Date.now() > until) throw new Error(`The e2e-control fixture did not answer on port ${port}`, { cause: error });
      await sleep(100);
    }
  }
}

/** Opens the workbench and waits until it is ready (workbench, status bar, extension activated). */
export async function openWorkbench(options: OpenWorkbenchOptions = {}): Promise<OpenedWorkbench> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const controlPort = await freePort();
  const wb = await launchWorkbench({
    workspace: options.workspace,
    noFolder: options.noFolder,
    settings: { ...NO_HOVERS, ...options.settings },
    env: { ...options.env, GATEWAY_IMAGES_E2E_CONTROL_PORT: String(controlPort) },
    verbose: options.verbose,
    viewport: options.viewport,
    workspaceTrust: options.workspaceTrust,
    locale: options.locale,
    extensions: [CONTROL_FIXTURE, ...(options.extensions ?? [])],
    ...(options.wrapCommand ? { wrapCommand: options.wrapCommand } : {}),
    ...(options.disabledBuiltinExtensions ? { disabledBuiltinExtensions: options.disabledBuiltinExtensions } : {}),
    // Kept in workbench.logLines (saved on failure); printed only when verbose.
    onLog: (line) => {
      if (options.verbose ?? process.env.GATEWAY_IMAGES_TEST_VERBOSE === '1') process.stdout.write(`[workbench] ${line}\n`);
    },
  });
  try {
    const { page } = wb;
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: timeoutMs });
    await page.locator('#workbench\\.parts\\.statusbar').waitFor({ state: 'visible', timeout: timeoutMs });
    if (options.waitForActivation !== false) await waitForActivation(wb, extensionId(), timeoutMs);
    if (!wb.emulator) throw new Error('The gateway emulator did not start');
    await waitForControl(controlPort, timeoutMs);
    return {
      page,
      emulator: wb.emulator,
      workspace: wb.workspace,
      workbench: wb,
      command: (id, ...args) => post(controlPort, '/command', { command: id, args }),
      extensionHostPid: () => post<number>(controlPort, '/pid', {}),
      waitForNewExtensionHost: (previous, wait = timeoutMs) =>
        waitFor(
          async () => {
            const pid = await post<number>(controlPort, '/pid', {}).catch(() => undefined);
            return pid !== undefined && pid !== previous && pid;
          },
          wait,
          `an extension host other than ${previous} to answer`,
        ),
      settings: (values) => post(controlPort, '/settings', { values }),
      mcpDefinitions: () => post(controlPort, '/mcp-definitions', { extension: extensionId() }),
      testSettings: new Set(),
      close: () => wb.close(),
    };
  } catch (err) {
    await saveArtifacts(wb, 'openWorkbench-failed').catch(() => undefined);
    await wb.close();
    throw err;
  }
}

// ---- a test's own state -------------------------------------------------------------------------

/** The emulator's demo keys by name ('unlimited', 'budget', 'expired', …). */
export type KeyName = keyof EmulatorHandle['keys'];

export interface TestState {
  /** The API key the test starts with, by the emulator's name for it, or null for none. */
  key: KeyName | null;
  /** User settings the test needs; the next prepareTest removes them again. */
  settings?: Record<string, unknown>;
  /** Keep the open editors and panels (by default every editor is closed). */
  keepEditors?: boolean;
}

/**
 * Puts the window into the state a test needs, whatever an earlier test left behind: no picker,
 * menu or dialog open, no emulator fault armed, the given key and settings, no editors, and no
 * notifications (toasts and centre). Run it first in every test: each test stands alone.
 */
export async function prepareTest(opened: OpenedWorkbench, state: TestState): Promise<void> {
  const { page, emulator } = opened;
  // A modal dialog or a context menu holds the keyboard; Escape is its Cancel.
  for (const modal of ['.monaco-dialog-box', '.context-view .monaco-menu']) {
    if (await page.locator(modal).first().isVisible()) await page.keyboard.press('Escape');
    await page.locator(modal).first().waitFor({ state: 'hidden', timeout: 5000 });
  }
  await opened.command('workbench.action.closeQuickOpen');
  emulator.state.clearFaults();
  emulator.state.imageGapMs = 0;
  emulator.state.headGapMs = 0;
  emulator.state.midImageGapMs = 0;
  const wanted = state.settings ?? {};
  const settings: Record<string, unknown> = { ...wanted };
  for (const name of opened.testSettings) if (!(name in wanted)) settings[name] = null;
  if (Object.keys(settings).length) await opened.settings(settings);
  opened.testSettings.clear();
  for (const name of Object.keys(wanted)) opened.testSettings.add(name);
  if (state.key === null) await opened.command('gatewayImages.clearApiKey');
  else await opened.command('gatewayImages.setApiKey', emulator.keys[state.key]);
  if (!state.keepEditors) await opened.command('workbench.action.closeAllEditors');
  // A progress notification outlives clearAll (VS Code shows one for at least 800 ms), and an earlier
  // test's last toast ("Saved 1 image…") may arrive after its files did, so after a clearAll: the
  // test starts once none is left, clearing again each second, so no toast of the set-up closes under
  // the test's own (and shifts them down).
  let lastClear = 0;
  await waitFor(
    async () => {
      if ((await readToasts(page)).length === 0) return true;
      if (Date.now() - lastClear >= 1000) {
        await opened.command('notifications.clearAll');
        lastClear = Date.now();
      }
      return false;
    },
    30_000,
    async () => `the set-up's toasts to close: ${JSON.stringify(await readToasts(page))}`,
  );
}

// ---- artifacts -------------------------------------------------------------------------------

function safeName(name: string): string {
  return (
    name
      .replace(/[^\w.-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 120) || 'unnamed'
  );
}

/** Saves a PNG of the page as test-results/e2e/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(E2E_RESULTS_DIR, { recursive: true });
  const file = path.join(E2E_RESULTS_DIR, `${safeName(name)}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Screenshot + relayed workbench log + code-server output into test-results/e2e/<name>/. */
export async function saveArtifacts(wb: Workbench, name: string): Promise<string> {
  const dir = path.join(E2E_RESULTS_DIR, safeName(name));
  fs.mkdirSync(dir, { recursive: true });
  await wb.page.screenshot({ path: path.join(dir, 'screenshot.png') }).catch(() => undefined);
  fs.writeFileSync(path.join(dir, 'workbench.log'), wb.logLines.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'code-server.log'), wb.serverLog());
  for (const file of findFiles(path.join(wb.userDataDir, 'logs'), (n) => n.endsWith('.log'))) {
    const target = path.join(dir, 'vscode-logs', path.relative(path.join(wb.userDataDir, 'logs'), file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(file, target);
  }
  return dir;
}

/**
 * For an `afterEach(async function () { await captureOnFailure(this, opened); })` hook:
 * when the current test failed, saves a screenshot and the logs under test-results/e2e/.
 */
export async function captureOnFailure(context: Mocha.Context, opened: OpenedWorkbench | undefined): Promise<void> {
  const test = context.currentTest;
  if (!opened || !test || test.state !== 'failed') return;
  const dir = await saveArtifacts(opened.workbench, test.fullTitle());
  process.stdout.write(`      [e2e] screenshot and logs saved in ${path.relative(process.cwd(), dir) || dir}\n`);
}

// ---- window --------------------------------------------------------------------------------------

/**
 * Lines of the extension's "Gateway Images" log that match, from every extension host of the run
 * (a window reload starts a new one), oldest first.
 */
export function extensionLogLines(opened: OpenedWorkbench, match: RegExp): string[] {
  const files = findFiles(path.join(opened.workbench.userDataDir, 'logs'), (n) => n === 'Gateway Images.log').sort();
  return files.flatMap((file) => fs.readFileSync(file, 'utf8').split('\n')).filter((line) => match.test(line));
}

/**
 * Developer: Reload Window, as a person runs it, and waits for the new window: the workbench, and
 * the extension's status bar item (the extension was activated again).
 */
export async function reloadWindow(opened: OpenedWorkbench, timeoutMs = 60_000): Promise<void> {
  const { page } = opened;
  const loaded = page.waitForEvent('load', { timeout: timeoutMs });
  await runCommand(page, 'Developer: Reload Window');
  await loaded;
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: timeoutMs });
  await waitFor(async () => (await readStatusBar(page, STATUS_ITEM)).length > 0, timeoutMs, "the extension's status bar item after the reload");
}
