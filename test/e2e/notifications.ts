// Notifications as a user meets them: toasts, and the Notifications centre that keeps them.
import type { Page } from 'playwright-core';
import { setTimeout as sleep } from 'timers/promises';
import type { El } from './dom';
import type { OpenedWorkbench } from './openedWorkbench';

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

/** How long the centre may take to open or close beside a loaded CI run (10 s was not enough once, just after a reload). */
const CENTRE_WAIT_MS = 30_000;

/**
 * How long one request to open the centre is given before it is asked again: the command shows it (a
 * second ask does nothing more), the bell toggles it (asked again only once the first click had time).
 */
const CENTRE_ASK_EVERY_MS = { command: 5_000, click: 10_000 };

/**
 * Opens the Notifications centre (the toasts showing move there) and waits until it shows. Asked again
 * while it does not show: it can close by itself right after it opened (a new toast closes it), and
 * a slowed run once waited 30 s on a centre that had opened and closed before the first look.
 */
async function openCentre(win: NotificationWindow): Promise<void> {
  const shown = win.page.locator(`${CENTRE}.visible`);
  const showsWithin = (ms: number) =>
    shown.waitFor({ state: 'visible', timeout: Math.max(ms, 1) }).then(
      () => true,
      () => false,
    );
  for (const until = Date.now() + CENTRE_WAIT_MS; ;) {
    if (win.command) await win.command('notifications.showList');
    else await win.page.locator('#workbench\\.parts\\.statusbar [id="status.notifications"] a').first().click();
    if (await showsWithin(Math.min(CENTRE_ASK_EVERY_MS[win.command ? 'command' : 'click'], until - Date.now()))) return;
    if (Date.now() >= until) throw new Error(`The Notifications centre did not show within ${CENTRE_WAIT_MS / 1000} s`);
  }
}

async function closeCentre(win: NotificationWindow): Promise<void> {
  if (win.command) await win.command('notifications.hideList');
  // Its Hide button, not Escape: Escape goes where the focus is, and after a generation that is often
  // the image's preview (a webview's frame), where it does not reach the centre (seen in the demo's test).
  else {
    // The centre may close by itself meanwhile (a new progress toast closes it: seen in a slowed run), and
    // a closed centre has no Hide button to wait for: closed is what this asks.
    const centre = win.page.locator(`${CENTRE}.visible`);
    const hide = centre.locator('.notifications-center-header .codicon-notifications-hide').first();
    for (const until = Date.now() + CENTRE_WAIT_MS; (await centre.count()) > 0 && Date.now() < until;) {
      await hide.click({ timeout: 2_000 }).catch(() => undefined);
    }
  }
  await win.page.locator(`${CENTRE}.visible`).waitFor({ state: 'hidden', timeout: CENTRE_WAIT_MS });
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
