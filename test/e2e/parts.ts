// Parts of the workbench a test reads or uses: the explorer's context menu, the status bar, webviews
// and the colour theme.
import * as path from 'path';
import type { Frame, Page } from 'playwright-core';
import { setTimeout as sleep } from 'timers/promises';
import type { El } from './dom';
import { waitFor } from './wait';
import type { OpenedWorkbench } from './openedWorkbench';

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

/**
 * Switches the colour theme for the rest of the test (the next prepareTest switches it back): through
 * the settings, since the theme picker is not what is tested; then waits until the workbench and
 * every visible webview wear it.
 */
export async function setColorTheme(opened: OpenedWorkbench, label: 'Dark Modern' | 'Light Modern'): Promise<void> {
  const light = label.startsWith('Light');
  await opened.settings({ 'workbench.colorTheme': `Default ${label}` }); // the theme's id; the picker shows its label
  opened.testSettings.add('workbench.colorTheme');
  const isLight = () => opened.page.locator('.monaco-workbench').evaluate((e: { classList: { contains(c: string): boolean } }) => e.classList.contains('vs'));
  await waitFor(async () => (await isLight()) === light, 15_000, `the workbench to switch to ${label}`);
  await waitForWebviewTheme(opened.page, light);
}

/** Waits until the active editor tab shows `name` (a file opened from a card, a search, a link). */
export async function waitForActiveTab(page: Page, name: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => ((await page.locator('.tabs-container .tab.active .label-name').first().textContent()) ?? '').includes(name) || undefined,
    timeoutMs,
    `${name} to open in the editor`,
  );
}
