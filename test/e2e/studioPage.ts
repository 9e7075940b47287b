// The Image Studio as an e2e test drives it: opened from the palette, a generation from its form,
// and its gallery's cards.
import type { Frame, Page } from 'playwright-core';
import { runCommand, webviewFrame } from './workbench';

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

export const cardCount = (frame: Frame) => frame.locator('#gallery li.card').count();

export async function generateFrom(frame: Frame, prompt: string): Promise<void> {
  await frame.locator('#prompt').fill(prompt);
  // Each edit is checked again by the host; its answer redraws the estimate and the issues above the
  // button. Generate is pressed once that answer is in (nothing moves it any more), and with the
  // keyboard: a click aimed while the form redrew could land beside the button and be lost.
  // Locators, not string predicates: the page's CSP (rightly) forbids eval.
  await frame.locator('dl.estimate[aria-busy="false"]').waitFor({ state: 'attached', timeout: 20_000 });
  await frame.locator('#generate:not([disabled])').waitFor({ state: 'visible', timeout: 20_000 });
  await frame.locator('#generate').press('Enter');
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

export async function waitForCards(frame: Frame, count: number, timeoutMs = 60_000): Promise<void> {
  await frame
    .locator('#gallery li.card')
    .nth(count - 1)
    .waitFor({ state: 'attached', timeout: timeoutMs });
}

/** Generates `prompt` with aurora-1 from the studio's form and waits for its card. */
export async function generateCard(frame: Frame, prompt: string): Promise<void> {
  const before = await cardCount(frame);
  await frame.locator('#model').selectOption('aurora-1');
  await generateFrom(frame, prompt);
  await waitForCards(frame, before + 1);
}
