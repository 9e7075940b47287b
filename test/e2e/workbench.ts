// End-to-end helpers: a real VS Code workbench (code-server + headless Chromium) with the
// extension under development loaded and the gateway emulator running, driven like a person.
// Use from plain mocha suites (test/e2e/**/*.e2e.test.ts, `npm run test:e2e`).
import * as fs from 'fs';
import * as path from 'path';
import type { Frame, Page } from 'playwright-core';
import type { EmulatorHandle } from '../harness/emulator';
import { setTimeout as sleep } from 'timers/promises';
import { freePort, launchWorkbench, type LaunchOptions, type Workbench } from '../harness/launch';
import { readManifest, REPO_ROOT, RESULTS_DIR } from '../harness/paths';

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
}

export interface OpenedWorkbench {
  page: Page;
  emulator: EmulatorHandle;
  /** The opened folder (a throwaway copy unless options.workspace was given). */
  workspace: string;
  /** The underlying launch (temp dir, port, logs). */
  workbench: Workbench;
  /** Runs a VS Code command in the window (through the e2e-control fixture): for setting up state only. */
  command<T = unknown>(id: string, ...args: unknown[]): Promise<T>;
  /** Writes user settings (null removes one). */
  settings(values: Record<string, unknown>): Promise<void>;
  /** The extension host's process id (the crash tests kill it). */
  extensionHostPid(): Promise<number>;
  /** Waits until an extension host other than `previous` answers (after a crash or a reload) and returns its pid. */
  waitForNewExtensionHost(previous: number, timeoutMs?: number): Promise<number>;
  /** Settings that prepareTest wrote for the current test (undone by the next prepareTest). */
  readonly testSettings: Set<string>;
  close(): Promise<void>;
}

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

/**
 * Polls `probe` until it returns a value other than undefined or false, and returns that value:
 * a wait on a state the test can read (a file, the emulator's log, the DOM), never on time alone.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string | (() => string | Promise<string>),
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`Waited ${Math.round(timeoutMs / 1000)} s for ${typeof what === 'string' ? what : await what()}`);
    await sleep(100);
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
  const wanted = state.settings ?? {};
  const settings: Record<string, unknown> = { ...wanted };
  for (const name of opened.testSettings) if (!(name in wanted)) settings[name] = null;
  if (Object.keys(settings).length) await opened.settings(settings);
  opened.testSettings.clear();
  for (const name of Object.keys(wanted)) opened.testSettings.add(name);
  if (state.key === null) await opened.command('gatewayImages.clearApiKey');
  else await opened.command('gatewayImages.setApiKey', emulator.keys[state.key]);
  if (!state.keepEditors) await opened.command('workbench.action.closeAllEditors');
  await opened.command('notifications.clearAll');
  // A progress notification outlives clearAll (VS Code shows one for at least 800 ms): the test starts
  // once it has gone, so no toast of the set-up closes under the test's own (and shifts them down).
  await waitFor(
    async () => (await readToasts(page)).length === 0,
    10_000,
    async () => `the set-up's toasts to close: ${JSON.stringify(await readToasts(page))}`,
  );
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

// ---- explorer ------------------------------------------------------------------------------------

/**
 * Opens the explorer's context menu on a file and chooses an item, as a person does: the file is
 * revealed and selected first (set-up), then right-clicked; the item is focused by the pointer and
 * chosen with Enter once it shows as focused (a menu ignores a click that comes while it opens).
 */
export async function chooseFromExplorerMenu(opened: OpenedWorkbench, file: string, item: string): Promise<void> {
  const { page } = opened;
  await opened.command('revealInExplorer', { $uri: file });
  const row = page.locator('.explorer-folders-view .monaco-list-row.selected', { hasText: path.basename(file) });
  await row.waitFor({ state: 'visible', timeout: 10_000 });
  await row.click({ button: 'right' });
  const entry = page.locator('.context-view .action-item', { has: page.locator('.action-label', { hasText: item }) });
  await entry.hover({ timeout: 10_000 });
  await page.locator('.context-view .action-item.focused', { hasText: item }).waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.press('Enter');
  await page.locator('.context-view .monaco-menu').waitFor({ state: 'hidden', timeout: 10_000 });
}

// ---- notifications ---------------------------------------------------------------------------
// A notification is a toast only for a while, and not always: VS Code shows at most three toasts,
// drops the toast of a notification added while more than three were added in 800 ms (its spam
// protection; a test that sets a key and generates at once does that), hides an info toast after
// 15 s, and shows none while the Notifications centre is open. The centre keeps every notification
// until it is cleared. So a test looks for the toast, and for the notification in the centre when
// there is no such toast: the fact that stays.

const TOASTS = '.notifications-toasts .notification-toast';
const CENTRE = '.notifications-center';
const CENTRE_ITEMS = '.notifications-center .notification-list-item';
/** How long a notification may be missing from the toasts before the centre is read again. */
const CENTRE_EVERY_MS = 1500;

export type TextMatch = string | RegExp;
const matchesText = (text: string, match: TextMatch) => (typeof match === 'string' ? text.includes(match) : match.test(text));

/** A window whose notifications a test reads: an e2e window, or any page of a workbench (the demo's). */
export type NotificationWindow = Pick<OpenedWorkbench, 'page'> & Partial<Pick<OpenedWorkbench, 'command'>>;

/** Texts of the notification toasts shown now. */
export async function readToasts(page: Page): Promise<string[]> {
  return page
    .locator(`${TOASTS} .notification-list-item-message`)
    .evaluateAll((els: El[]) => els.map((e) => (e.textContent ?? '').trim()).filter((t) => t.length > 0));
}

/** Opens the Notifications centre (the toasts showing move there) and waits until it shows. */
async function openCentre(win: NotificationWindow): Promise<void> {
  if (win.command) await win.command('notifications.showList');
  else await win.page.locator('#workbench\\.parts\\.statusbar [id="status.notifications"] a').first().click();
  await win.page.locator(`${CENTRE}.visible`).waitFor({ state: 'visible', timeout: 10_000 });
}

async function closeCentre(win: NotificationWindow): Promise<void> {
  if (win.command) await win.command('notifications.hideList');
  else await win.page.keyboard.press('Escape');
  await win.page.locator(`${CENTRE}.visible`).waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The messages in the Notifications centre, newest first: opens it, reads it and closes it. */
export async function readNotificationCentre(win: NotificationWindow): Promise<string[]> {
  await openCentre(win);
  try {
    return await win.page
      .locator(`${CENTRE_ITEMS} .notification-list-item-message`)
      .evaluateAll((els: El[]) => els.map((e) => (e.textContent ?? '').trim()).filter((t) => t.length > 0));
  } finally {
    await closeCentre(win);
  }
}

/**
 * Waits until the user has been shown a notification whose text matches: as a toast, or in the
 * Notifications centre when VS Code did not toast it or has hidden it. Returns the texts where it
 * was found (toasts or centre).
 */
export async function waitForNotification(win: NotificationWindow, text: TextMatch, timeoutMs = 15_000): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  let centreAt = Date.now() + CENTRE_EVERY_MS;
  let centre: string[] = [];
  for (;;) {
    const toasts = await readToasts(win.page);
    if (toasts.some((t) => matchesText(t, text))) return toasts;
    if (Date.now() >= centreAt || Date.now() > until) {
      centre = await readNotificationCentre(win);
      if (centre.some((t) => matchesText(t, text))) return centre;
      centreAt = Date.now() + CENTRE_EVERY_MS;
    }
    if (Date.now() > until) throw new Error(`No notification ${String(text)}; toasts: ${JSON.stringify(toasts)}; centre: ${JSON.stringify(centre)}`);
    await sleep(150);
  }
}

/**
 * Clicks a button of the notification whose text matches, as a person does: on its toast once the
 * toast has settled (faded in), or in the Notifications centre when there is no such toast.
 * The caller checks the click's effect (e.g. the emulator saw the connection drop).
 */
export async function clickNotificationButton(win: NotificationWindow, text: TextMatch, button: string, timeoutMs = 15_000): Promise<'toast' | 'centre'> {
  const until = Date.now() + timeoutMs;
  let centreAt = Date.now() + CENTRE_EVERY_MS;
  for (;;) {
    const toast = win.page.locator(TOASTS, { hasText: text }).first();
    if (await toast.isVisible()) {
      const settled = win.page.locator(`${TOASTS}.notification-fade-in-done`, { hasText: text }).first();
      await settled.waitFor({ state: 'visible', timeout: 5000 });
      await settled.getByRole('button', { name: button, exact: true }).click({ timeout: 5000 });
      return 'toast';
    }
    if (Date.now() >= centreAt || Date.now() > until) {
      await openCentre(win);
      const item = win.page.locator(CENTRE_ITEMS, { hasText: text }).first();
      if (await item.isVisible()) {
        await item.getByRole('button', { name: button, exact: true }).click({ timeout: 5000 });
        if (await win.page.locator(`${CENTRE}.visible`).isVisible()) await closeCentre(win);
        return 'centre';
      }
      await closeCentre(win);
      centreAt = Date.now() + CENTRE_EVERY_MS;
    }
    if (Date.now() > until) throw new Error(`No notification ${String(text)} with a ${button} button, as a toast or in the centre`);
    await sleep(150);
  }
}

/** Waits until the toast containing `text` shows its action buttons (fully rendered, e.g. for a screenshot). */
export async function waitForToastButtons(page: Page, text: string | RegExp, timeoutMs = 15_000): Promise<void> {
  await page.locator(TOASTS, { hasText: text }).locator('.monaco-button').first().waitFor({ state: 'visible', timeout: timeoutMs });
}

// ---- status bar --------------------------------------------------------------------------------

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
