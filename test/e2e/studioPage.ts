// The Image Studio as an e2e test drives it: opened from the palette, a generation from its form,
// and its gallery's cards.
import type { Frame, Page } from 'playwright-core';
import { runCommand, waitFor, webviewFrame } from './workbench';

export const STUDIO_TITLE = 'Image Studio';

/** Opens the studio from the palette and waits until its form can generate with aurora-1. */
export async function openStudio(page: Page): Promise<Frame> {
  await runCommand(page, 'Gateway Images: Open Image Studio');
  const frame = await webviewFrame(page, STUDIO_TITLE, 30_000);
  await frame.locator('#generate').waitFor({ state: 'attached', timeout: 20_000 });
  await frame.locator('#model option[value="aurora-1"]').waitFor({ state: 'attached', timeout: 30_000 });
  await waitForGallery(frame);
  return frame;
}

/**
 * Waits until the gallery has drawn its first page (it does so on the next animation frame after
 * the page's data): counting cards before that counts none, and "one more card" is then any card.
 */
export async function waitForGallery(frame: Frame, timeoutMs = 30_000): Promise<void> {
  await frame.locator('body[data-gallery-first-page-ms]').waitFor({ state: 'attached', timeout: timeoutMs });
}

/**
 * How many results the gallery holds (its data-total), not how many cards it has drawn: it draws
 * only the cards near the screen, on the animation frame after each change, so a count of drawn
 * cards can be short of the results or caught between a change and its drawing.
 */
export async function resultCount(frame: Frame): Promise<number> {
  await waitForGallery(frame);
  return Number(await frame.locator('#gallery').getAttribute('data-total'));
}

/** The newest result's card: the first in the gallery's order (the top of an unscrolled gallery). */
export const newestCard = (frame: Frame) => frame.locator('#gallery li.card[aria-posinset="1"]');

/** The prompt of the newest result. */
export const newestPrompt = (frame: Frame) => newestCard(frame).locator('.prompt').textContent({ timeout: 10_000 });

/** A card's action by its accessible name: an icon button ('Open', 'Edit a Region…', 'Use as Reference', 'Insert Markdown Link', 'More actions'). */
export const cardButton = (frame: Frame, name: string) => newestCard(frame).getByRole('button', { name, exact: true });

/** Clicks an action of the newest card's More actions menu ('Reveal in Explorer', 'Copy Path', 'Regenerate…', 'Delete…'). */
export async function clickCardMenuItem(frame: Frame, name: string): Promise<void> {
  await cardButton(frame, 'More actions').click();
  await newestCard(frame).getByRole('menuitem', { name, exact: true }).click();
}

export async function generateFrom(frame: Frame, prompt: string): Promise<void> {
  await frame.locator('#prompt').fill(prompt);
  // Each edit is checked again by the host; its answer redraws the estimate and the issues above the
  // button. Generate is pressed once that answer is in, with the button's own click event: a mouse
  // click aimed while the form redrew could land beside the button, and a key press goes wherever
  // the workbench has put the keyboard focus by then.
  // Locators, not string predicates: the page's CSP (rightly) forbids eval.
  await frame.locator('dl.estimate[aria-busy="false"]').waitFor({ state: 'attached', timeout: 20_000 });
  await frame.locator('#generate:not([disabled])').waitFor({ state: 'visible', timeout: 20_000 });
  await frame.locator('#generate').dispatchEvent('click');
}

/** What the form says (its status line and issues), for a failure message. */
export async function formState(frame: Frame): Promise<string> {
  const status = await frame
    .locator('#status')
    .textContent()
    .catch(() => '?');
  const issues = await frame
    .locator('#issues li')
    .allTextContents()
    .catch(() => []);
  return `status ${JSON.stringify(status)}, issues ${JSON.stringify(issues)}`;
}

/** Waits until the gallery holds exactly `count` results; a failure says what it holds and what the form shows. */
export async function waitForResults(frame: Frame, count: number, timeoutMs = 60_000): Promise<void> {
  const total = () => frame.locator('#gallery').getAttribute('data-total', { timeout: 5_000 });
  await waitFor(
    async () => (await total()) === String(count),
    timeoutMs,
    async () => `${count} results in the gallery; it holds ${await total().catch(() => '?')}, the form shows ${await formState(frame)}`,
  );
}

/** Generates `prompt` with aurora-1 from the studio's form and waits for its card, first in the gallery. */
export async function generateCard(frame: Frame, prompt: string): Promise<void> {
  const before = await resultCount(frame);
  await frame.locator('#model').selectOption('aurora-1');
  await generateFrom(frame, prompt);
  await waitForResults(frame, before + 1);
  const newest = await newestPrompt(frame);
  if (newest !== prompt) throw new Error(`The newest card is ${JSON.stringify(newest)}, not the result of ${JSON.stringify(prompt)}`);
}
