// End-to-end helpers: a real VS Code workbench (code-server + headless Chromium) with the
// extension under development loaded and the gateway emulator running, driven like a person.
// Use from plain mocha suites (test/e2e/**/*.e2e.test.ts, `npm run test:e2e`).
import * as fs from 'fs';
import * as path from 'path';
import type { Frame, Page } from 'playwright-core';
import type { EmulatorHandle } from '../harness/emulator';
import { launchWorkbench, type LaunchOptions, type Workbench } from '../harness/launch';
import { readManifest, RESULTS_DIR } from '../harness/paths';

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
}

export interface OpenedWorkbench {
  page: Page;
  emulator: EmulatorHandle;
  /** The opened folder (a throwaway copy unless options.workspace was given). */
  workspace: string;
  /** The underlying launch (temp dir, port, logs). */
  workbench: Workbench;
  close(): Promise<void>;
}

/** `<publisher>.<name>` from package.json. */
export function extensionId(): string {
  const m = readManifest();
  return `${m.publisher}.${m.name}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** Opens the workbench and waits until it is ready (workbench, status bar, extension activated). */
export async function openWorkbench(options: OpenWorkbenchOptions = {}): Promise<OpenedWorkbench> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const wb = await launchWorkbench({
    workspace: options.workspace,
    noFolder: options.noFolder,
    // Hovers show at once: on a loaded machine they show after the default delay anyway, and a
    // hover laid over what a test clicks should fail every run here, not some runs in CI.
    settings: { 'workbench.hover.delay': 0, ...options.settings },
    env: options.env,
    verbose: options.verbose,
    viewport: options.viewport,
    workspaceTrust: options.workspaceTrust,
    locale: options.locale,
    extensions: options.extensions,
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
    return { page, emulator: wb.emulator, workspace: wb.workspace, workbench: wb, close: () => wb.close() };
  } catch (err) {
    await saveArtifacts(wb, 'openWorkbench-failed').catch(() => undefined);
    await wb.close();
    throw err;
  }
}

// ---- quick input (command palette, quick picks, input boxes) --------------------------------

const QUICK_INPUT = '.quick-input-widget';
const QUICK_INPUT_BOX = '.quick-input-widget .quick-input-box input';
const QUICK_ROWS = '.quick-input-widget .quick-input-list .monaco-list-row';

/** Minimal DOM shape used inside page functions (the project compiles without the DOM lib). */
interface El {
  id: string;
  innerText: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): El | null;
  getBoundingClientRect(): { width: number; height: number };
}

export interface QuickItem {
  label: string;
  description: string;
  ariaLabel: string;
  index: number;
  setSize: number;
  /** The active row: the one Enter accepts. */
  focused: boolean;
  /** The row has a checkbox (a quick pick with canPickMany). */
  checkable: boolean;
}

/** The rendered rows of the open quick input (virtualised: only those scrolled into view). */
export async function visibleQuickItems(page: Page): Promise<QuickItem[]> {
  return page.locator(QUICK_ROWS).evaluateAll((rows: El[]) =>
    rows.map((row) => ({
      label: (row.querySelector('.label-name')?.textContent ?? '').trim(),
      description: (row.querySelector('.label-description')?.textContent ?? '').trim(),
      ariaLabel: row.getAttribute('aria-label') ?? '',
      index: Number(row.getAttribute('data-index') ?? row.getAttribute('aria-posinset') ?? -1),
      setSize: Number(row.getAttribute('aria-setsize') ?? 0),
      focused: (row.getAttribute('class') ?? '').split(' ').includes('focused'),
      checkable: row.querySelector('input[type="checkbox"], .quick-input-list-checkbox, .monaco-checkbox') !== null,
    })),
  );
}

/** All items of the open quick input: walks the list with the arrow keys to render every row. */
export async function readQuickItems(page: Page, maxItems = 200): Promise<QuickItem[]> {
  const seen = new Map<string, QuickItem>();
  let stale = 0;
  for (let step = 0; step < maxItems && stale < 3; step++) {
    const rows = await visibleQuickItems(page);
    const before = seen.size;
    for (const r of rows) seen.set(`${r.index}:${r.label}`, r);
    const total = rows[0]?.setSize ?? 0;
    if (total > 0 && seen.size >= total) break;
    stale = seen.size === before ? stale + 1 : 0;
    for (let i = 0; i < Math.max(1, rows.length - 1); i++) await page.keyboard.press('ArrowDown');
  }
  return [...seen.values()].sort((a, b) => a.index - b.index);
}

/** Opens the command palette (F1) and waits for its input. */
export async function openCommandPalette(page: Page): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.keyboard.press('F1');
    try {
      await page.locator(QUICK_INPUT_BOX).waitFor({ state: 'visible', timeout: 5000 });
      return;
    } catch {
      await page
        .locator('.monaco-workbench')
        .click({ position: { x: 5, y: 5 } })
        .catch(() => undefined);
    }
  }
  throw new Error('The command palette did not open');
}

/** Types into the open quick input (replacing its text) and optionally presses Enter. */
export async function typeInQuickInput(page: Page, text: string, options: { submit?: boolean } = {}): Promise<void> {
  const input = page.locator(QUICK_INPUT_BOX);
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(text);
  if (options.submit) await input.press('Enter');
}

/**
 * Chooses the quick pick row whose label equals `label` (or, failing that, contains it): with the
 * arrow keys and Enter, as a keyboard user does. A click can land on a hover instead: VS Code 1.139
 * lays a row's hover over the row when the pointer rests there past the hover delay, as it does
 * when a new list draws its row where the last click left the pointer on a loaded machine.
 * Rows with a checkbox (canPickMany) are toggled by a click, which Enter would not do.
 */
export async function pickQuickItem(page: Page, label: string | RegExp, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  const matches = (text: string, exact: boolean) => (typeof label === 'string' ? (exact ? text === label : text.includes(label)) : label.test(text));
  const find = (items: QuickItem[]) => items.find((r) => matches(r.label, true)) ?? items.find((r) => matches(r.label, false) || matches(r.ariaLabel, false));
  for (;;) {
    const items = await visibleQuickItems(page);
    const target = find(items);
    if (target?.checkable) {
      await page.mouse.move(0, 0);
      await page.locator(QUICK_ROWS).nth(items.indexOf(target)).click();
      return;
    }
    if (target?.focused) {
      await page.locator(QUICK_INPUT_BOX).press('Enter');
      return;
    }
    if (Date.now() > until) {
      const shown = items.map((r) => JSON.stringify(r.label) + (r.focused ? ' (active)' : '')).join(', ') || '(none)';
      throw new Error(`${target ? 'Could not make active' : 'No'} quick pick item ${String(label)}; visible: ${shown}`);
    }
    if (target) {
      const active = items.find((r) => r.focused);
      await page.locator(QUICK_INPUT_BOX).press(active && active.index > target.index ? 'ArrowUp' : 'ArrowDown');
    } else {
      await sleep(150);
    }
  }
}

/** Runs a command from the palette by its title as shown there ("Gateway Images: Generate Image"). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await openCommandPalette(page);
  await typeInQuickInput(page, `>${title}`);
  await pickQuickItem(page, title);
  // The palette closes, or turns into the command's own quick input.
}

/** Waits until the rendered quick input rows satisfy `test` (e.g. the list has been filtered). */
export async function waitForQuickItems(page: Page, test: (items: QuickItem[]) => boolean, what: string, timeoutMs = 10_000): Promise<QuickItem[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const items = await visibleQuickItems(page);
    if (test(items)) return items;
    if (Date.now() > until) throw new Error(`Quick input: ${what} not reached; rows: ${items.map((r) => JSON.stringify(r.label)).join(', ') || '(none)'}`);
    await sleep(100);
  }
}

/** Waits until every rendered row mentions `text` (the quick pick has applied the typed filter). */
export function waitForFilteredQuickItems(page: Page, text: string, timeoutMs = 10_000): Promise<QuickItem[]> {
  return waitForQuickItems(
    page,
    (items) => items.length > 0 && items.every((r) => `${r.label} ${r.description} ${r.ariaLabel}`.includes(text)),
    `filtered by ${JSON.stringify(text)}`,
    timeoutMs,
  );
}

/** Closes any open quick input. */
export async function dismissQuickInput(page: Page): Promise<void> {
  if (await page.locator(QUICK_INPUT).isVisible()) await page.keyboard.press('Escape');
}

// ---- notifications, status bar ---------------------------------------------------------------

/** Texts of the visible notification toasts (message, then source/buttons are left out). */
export async function readNotifications(page: Page): Promise<string[]> {
  return page
    .locator('.notifications-toasts .notification-toast .notification-list-item-message')
    .evaluateAll((els: El[]) => els.map((e) => (e.textContent ?? '').trim()).filter((t) => t.length > 0));
}

/** Waits for a toast whose text contains `text` and returns all visible toast texts. */
export async function waitForNotification(page: Page, text: string | RegExp, timeoutMs = 15_000): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const texts = await readNotifications(page);
    if (texts.some((t) => (typeof text === 'string' ? t.includes(text) : text.test(t)))) return texts;
    if (Date.now() > until) throw new Error(`No notification ${String(text)}; visible: ${JSON.stringify(texts)}`);
    await sleep(150);
  }
}

/** Waits until the toast containing `text` shows its action buttons (fully rendered, e.g. for a screenshot). */
export async function waitForToastButtons(page: Page, text: string | RegExp, timeoutMs = 15_000): Promise<void> {
  await page
    .locator('.notifications-toasts .notification-toast', { hasText: text })
    .locator('.monaco-button')
    .first()
    .waitFor({ state: 'visible', timeout: timeoutMs });
}

export interface StatusBarEntry {
  /** e.g. `gateway-images.gateway-images.gateway-images.status` (`<extensionId>.<itemId>`). */
  id: string;
  text: string;
  ariaLabel: string;
}

/**
 * The status bar items. With `idOrText`, only those whose id ends with / contains it, or whose
 * text or aria-label contains it (e.g. `gateway-images.status` or `₽`).
 */
export async function readStatusBar(page: Page, idOrText?: string): Promise<StatusBarEntry[]> {
  const all = await page.locator('#workbench\\.parts\\.statusbar .statusbar-item').evaluateAll((els: El[]) =>
    els.map((e) => {
      const anchor = e.querySelector('a');
      return {
        id: e.id,
        text: (e.innerText ?? e.textContent ?? '').replace(/\s+/g, ' ').trim(),
        ariaLabel: e.getAttribute('aria-label') ?? anchor?.getAttribute('aria-label') ?? '',
      };
    }),
  );
  if (idOrText === undefined) return all;
  return all.filter((e) => e.id.includes(idOrText) || e.text.includes(idOrText) || e.ariaLabel.includes(idOrText));
}

// ---- webviews --------------------------------------------------------------------------------

/**
 * The INNER frame of a visible webview (outer `iframe.webview` > `#active-frame`), where the
 * extension's HTML lives. With `title`, the one whose document title contains it, or the visible
 * one when the active editor tab's label contains it.
 */
export async function webviewFrame(page: Page, title?: string, timeoutMs = 20_000): Promise<Frame> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const candidates: Frame[] = [];
    for (const outer of await page.locator('iframe.webview').elementHandles()) {
      if (!(await outer.isVisible().catch(() => false))) continue;
      const outerFrame = await outer.contentFrame();
      const active = await outerFrame?.$('#active-frame').catch(() => null);
      const inner = await active?.contentFrame();
      if (inner) candidates.push(inner);
    }
    if (candidates[0] && title === undefined) return candidates[0];
    if (title !== undefined) {
      for (const frame of candidates) {
        if ((await frame.title().catch(() => '')).includes(title)) return frame;
      }
      const activeTab =
        (await page
          .locator('.tabs-container .tab.active .label-name')
          .first()
          .textContent()
          .catch(() => '')) ?? '';
      if (candidates.length === 1 && candidates[0] && activeTab.includes(title)) return candidates[0];
    }
    if (Date.now() > until) {
      throw new Error(`No visible webview${title ? ` titled ${JSON.stringify(title)}` : ''} within ${Math.round(timeoutMs / 1000)} s`);
    }
    await sleep(200);
  }
}

/**
 * Waits until every visible webview has been given the workbench's theme (VS Code sets the
 * vscode-light / vscode-dark class on the webview's body together with its theme variables).
 */
export async function waitForWebviewTheme(page: Page, light: boolean, timeoutMs = 15_000): Promise<void> {
  const want = light ? 'vscode-light' : 'vscode-dark';
  const until = Date.now() + timeoutMs;
  for (;;) {
    const classes: string[] = [];
    for (const outer of await page.locator('iframe.webview').elementHandles()) {
      if (!(await outer.isVisible().catch(() => false))) continue;
      const inner = await (await (await outer.contentFrame())?.$('#active-frame').catch(() => null))?.contentFrame();
      if (inner)
        classes.push(
          (await inner
            .locator('body')
            .getAttribute('class')
            .catch(() => '')) ?? '',
        );
    }
    if (classes.every((c) => c.split(/\s+/).includes(want))) return;
    if (Date.now() > until) throw new Error(`A webview did not take the ${want} theme: ${JSON.stringify(classes)}`);
    await sleep(100);
  }
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
