// A gallery card's actions in the real workbench, by mouse and by keyboard: three icon buttons
// named for screen readers and with tooltips, a More actions menu (the menu button pattern), and
// the image opened by a double click or by Enter on the card. The gallery's names and roles are
// checked by hand, and the whole studio (form, gallery, open menu) by axe-core.
import * as assert from 'assert';
import * as path from 'path';
import type { Frame } from 'playwright-core';
import { seriousAxeFindings } from './axe';
import { cardButton, clickCardMenuItem, generateCard, newestCard, openStudio } from './studioPage';
import { prepareTest, setColorTheme, waitFor, waitForActiveTab } from './workbench';
import { useWorkbench } from './useWorkbench';

const ICON_BUTTONS = ['Open', 'Edit a Region…', 'Use as Reference', 'Insert Markdown Link', 'More actions'];
const MENU_ITEMS = ['Reveal in Explorer', 'Copy Path', 'Regenerate…', 'Delete…'];

/** What has the keyboard focus in the studio: a card ("card 1"), or a control by its name. */
function focused(frame: Frame): Promise<string> {
  return frame.evaluate(() => {
    type Element = { tagName: string; textContent: string | null; getAttribute(name: string): string | null };
    const active = (globalThis as unknown as { document: { activeElement: Element | null } }).document.activeElement;
    if (!active) return '(nothing)';
    if (active.tagName === 'LI') return `card ${active.getAttribute('aria-posinset')}`;
    return active.getAttribute('aria-label') ?? active.textContent?.trim() ?? active.tagName;
  });
}

/** Regenerate… has filled the form: the result's prompt is back (the status line may already say something newer). */
const promptFilled = (frame: Frame, prompt: string) =>
  waitFor(async () => (await frame.locator('#prompt').inputValue()) === prompt || undefined, 20_000, `the form filled with ${prompt}`);

describe('Studio gallery card actions (e2e)', () => {
  // The shared window: each test acts on the card it has just made (the newest).
  const opened = useWorkbench('shared');

  /** Waits until the active editor tab is the file. */
  const opensTab = (name: string) => waitForActiveTab(opened().page, name);

  /** The newest card's image file name. */
  const newestFile = async (frame: Frame) => path.basename((await newestCard(frame).getAttribute('data-file')) ?? '');

  const waitForFocus = (frame: Frame, name: string) =>
    waitFor(
      async () => (await focused(frame)) === name || undefined,
      10_000,
      async () => `the focus on ${name}; it is on ${await focused(frame)}`,
    );

  it('by mouse: icon buttons with tooltips, the More actions menu, and a double click opens the image', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    let frame = await openStudio(page);
    const prompt = 'A gallery card used by mouse';
    await generateCard(frame, prompt);
    const file = await newestFile(frame);

    for (const name of ICON_BUTTONS) {
      assert.strictEqual(await cardButton(frame, name).getAttribute('title'), name, `the tooltip of ${name}`);
    }
    const more = cardButton(frame, 'More actions');
    assert.strictEqual(await more.getAttribute('aria-haspopup'), 'menu');
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'false');

    // Use as Reference: the image becomes the form's only reference.
    const references = frame.locator('ul.references li');
    for (let left = await references.count(); left > 0; left--) {
      await frame.locator('ul.references button.remove').first().click();
      await waitFor(async () => (await references.count()) < left || undefined, 10_000, 'a reference to be removed');
    }
    await cardButton(frame, 'Use as Reference').click();
    await waitFor(async () => (await references.count()) === 1 || undefined, 20_000, 'the card to become a reference');
    assert.strictEqual((await references.first().locator('.name').textContent())?.trim(), file);

    // The menu holds the other actions; Regenerate… fills the form and closes it.
    // (The prompt is emptied first: focus leaving an open menu closes it, as in VS Code's menus.)
    await frame.locator('#prompt').fill('');
    await more.click();
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'true');
    const menu = newestCard(frame).getByRole('menu', { name: 'More actions' });
    assert.deepStrictEqual(await menu.getByRole('menuitem').allTextContents(), MENU_ITEMS);
    await menu.getByRole('menuitem', { name: 'Regenerate…', exact: true }).click();
    await promptFilled(frame, prompt);
    assert.strictEqual(await menu.count(), 0, 'the menu stayed open after its action');
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'false');

    // A click elsewhere closes the menu; a click on its button again too.
    await more.click();
    await menu.waitFor({ state: 'visible', timeout: 5_000 });
    await frame.locator('#gallery-heading').click();
    await menu.waitFor({ state: 'detached', timeout: 5_000 });
    await more.click();
    await menu.waitFor({ state: 'visible', timeout: 5_000 });
    await more.click();
    await menu.waitFor({ state: 'detached', timeout: 5_000 });

    // Reveal in Explorer, from the menu: the Explorer shows the file selected.
    await clickCardMenuItem(frame, 'Reveal in Explorer');
    await page.locator('.explorer-folders-view .monaco-list-row.selected', { hasText: file }).waitFor({ state: 'visible', timeout: 20_000 });

    // Open, then a double click on the image: each opens the image in an editor.
    await cardButton(frame, 'Open').click();
    await opensTab(file);
    await opened().command('workbench.action.closeAllEditors');
    frame = await openStudio(page);
    await newestCard(frame).locator('.thumb').dblclick();
    await opensTab(file);
  });

  it('by keyboard: Tab to the card and Enter opens it; the icon buttons in order; the More actions menu with arrows, Enter, Space, Escape and Tab', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    let frame = await openStudio(page);
    const prompt = 'A gallery card used by keyboard';
    await generateCard(frame, prompt);
    const file = await newestFile(frame);

    // From the filter, Tab reaches the newest card, then its buttons one by one.
    await frame.locator('#gallery-filter').press('Tab');
    await waitForFocus(frame, 'card 1');
    for (const name of ICON_BUTTONS) {
      await page.keyboard.press('Tab');
      await waitForFocus(frame, name);
    }
    const more = cardButton(frame, 'More actions');
    const menu = newestCard(frame).getByRole('menu', { name: 'More actions' });

    // Enter opens the menu on its first item; the arrows wrap, Home and End jump; Escape gives the focus back.
    await page.keyboard.press('Enter');
    await waitForFocus(frame, MENU_ITEMS[0]!);
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'true');
    for (const [key, expected] of [
      ['ArrowDown', MENU_ITEMS[1]],
      ['ArrowUp', MENU_ITEMS[0]],
      ['ArrowUp', MENU_ITEMS[3]],
      ['ArrowDown', MENU_ITEMS[0]],
      ['End', MENU_ITEMS[3]],
      ['Home', MENU_ITEMS[0]],
    ] as const) {
      await page.keyboard.press(key);
      await waitForFocus(frame, expected!);
    }
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached', timeout: 5_000 });
    await waitForFocus(frame, 'More actions');
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'false');

    // ArrowUp on the button opens on the last item; Tab closes the menu and moves on.
    await page.keyboard.press('ArrowUp');
    await waitForFocus(frame, MENU_ITEMS[3]!);
    await page.keyboard.press('Tab');
    await menu.waitFor({ state: 'detached', timeout: 5_000 });
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'false');

    // Space opens it; Enter on Regenerate… carries it out: the prompt comes back, and the focus goes to it (to edit it before Generate).
    await frame.locator('#prompt').fill('');
    await more.focus();
    await page.keyboard.press('Space');
    await waitForFocus(frame, MENU_ITEMS[0]!);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await waitForFocus(frame, 'Regenerate…');
    await page.keyboard.press('Enter');
    await promptFilled(frame, prompt);
    await frame.locator('#prompt:focus').waitFor({ state: 'attached', timeout: 10_000 });
    assert.strictEqual(await menu.count(), 0);
    assert.strictEqual(await more.getAttribute('aria-expanded'), 'false');

    // Enter on a focused icon button carries it out: Open.
    await cardButton(frame, 'Open').press('Enter');
    await opensTab(file);
    await opened().command('workbench.action.closeAllEditors');

    // Enter on the card itself opens the image.
    frame = await openStudio(page);
    await frame.locator('#gallery-filter').press('Tab');
    await waitForFocus(frame, 'card 1');
    await page.keyboard.press('Enter');
    await opensTab(file);
  });

  it('names every gallery control for screen readers', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    const frame = await openStudio(page);
    if ((await frame.locator('#gallery li.card').count()) === 0) await generateCard(frame, 'A card to name');
    await cardButton(frame, 'More actions').click();
    const problems = await frame.evaluate(() => {
      type Element = {
        tagName: string;
        textContent: string | null;
        getAttribute(name: string): string | null;
        querySelectorAll(selector: string): ArrayLike<Element>;
        closest(selector: string): Element | null;
      };
      const document = (globalThis as unknown as { document: Element }).document;
      const found: string[] = [];
      const name = (e: Element) => (e.getAttribute('aria-label') ?? e.textContent ?? '').trim();
      for (const control of Array.from(document.querySelectorAll('#gallery button, #gallery [role="menuitem"]'))) {
        if (!name(control)) found.push(`a ${control.tagName} without a name`);
      }
      for (const svg of Array.from(document.querySelectorAll('#gallery svg'))) {
        if (svg.getAttribute('aria-hidden') !== 'true') found.push('an icon not hidden from screen readers');
      }
      for (const item of Array.from(document.querySelectorAll('#gallery [role="menuitem"]'))) {
        if (!item.closest('[role="menu"]')) found.push(`menu item ${name(item)} outside a menu`);
      }
      for (const group of Array.from(document.querySelectorAll('#gallery .card-actions'))) {
        if (!group.getAttribute('aria-label')) found.push('an action group without a name');
      }
      for (const card of Array.from(document.querySelectorAll('#gallery li.card'))) {
        if (card.getAttribute('tabindex') !== '0' || !card.getAttribute('title')) found.push('a card that is not focusable or not named');
      }
      return found;
    });
    assert.deepStrictEqual(problems, []);
    await page.keyboard.press('Escape');
  });

  it('axe-core finds nothing serious or critical in the studio, in the dark and light themes: the form, the gallery, an open More actions menu', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    let frame = await openStudio(page);
    if ((await frame.locator('#gallery li.card').count()) === 0) await generateCard(frame, 'A card for axe');
    for (const theme of ['Dark Modern', 'Light Modern'] as const) {
      await setColorTheme(opened(), theme);
      frame = await openStudio(page);
      assert.deepStrictEqual(await seriousAxeFindings(frame), [], `the studio with its gallery (${theme})`);
      await cardButton(frame, 'More actions').click();
      await newestCard(frame).getByRole('menu', { name: 'More actions' }).waitFor({ state: 'visible', timeout: 5_000 });
      assert.deepStrictEqual(await seriousAxeFindings(frame), [], `the studio with a card’s menu open (${theme})`);
      await page.keyboard.press('Escape');
    }
  });
});
