// The quick input as a person uses it: the command palette, quick picks, input boxes.
import type { Page } from 'playwright-core';
import { setTimeout as sleep } from 'timers/promises';
import type { El } from './dom';

const QUICK_INPUT = '.quick-input-widget';
const QUICK_INPUT_BOX = '.quick-input-widget .quick-input-box input';
const QUICK_ROWS = '.quick-input-widget .quick-input-list .monaco-list-row';

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
    // Down a page at most, and never past the last row: ArrowDown there wraps to the first, and the
    // rows passed on the way are rendered and dropped again between two reads (a list one row longer
    // than the view lost its last row).
    const focused = rows.find((r) => r.focused)?.index ?? rows[0]?.index ?? 0;
    const presses = total > 0 ? Math.min(rows.length - 1, total - 1 - focused) : rows.length - 1;
    for (let i = 0; i < Math.max(1, presses); i++) await page.keyboard.press('ArrowDown');
  }
  return [...seen.values()].sort((a, b) => a.index - b.index);
}

/** Opens the command palette (F1) and waits for its input. */
export async function openCommandPalette(page: Page): Promise<void> {
  // One F1, and time for a busy workbench to show the palette: a second F1 while the first one's
  // palette is still opening acts on that palette (it navigates in it, and it can close) instead of
  // opening one. A second attempt, after a click that gives the workbench the focus, is for a first
  // key that went nowhere.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (attempt === 0 || !(await page.locator(QUICK_INPUT_BOX).isVisible())) await page.keyboard.press('F1');
    try {
      await page.locator(QUICK_INPUT_BOX).waitFor({ state: 'visible', timeout: 15_000 });
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

/**
 * Chooses the quick pick row whose label contains `label` with the pointer. A key goes wherever the
 * keyboard focus is when it arrives, and the first picker of a command run from the walkthrough can
 * lose the focus to the walkthrough's step while it opens (it stays open: ignoreFocusOut), which
 * lost an Enter; a click goes to the row. The pointer comes from a corner, so no hover of a row
 * rests where the click lands.
 */
export async function clickQuickItem(page: Page, label: string | RegExp, timeoutMs = 10_000): Promise<void> {
  const row = page
    .locator(QUICK_ROWS)
    .filter({ has: page.locator('.label-name', { hasText: label }) })
    .first();
  await row.waitFor({ state: 'visible', timeout: timeoutMs });
  await page.mouse.move(0, 0);
  await row.click({ timeout: timeoutMs });
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
