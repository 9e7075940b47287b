// Alerts before the money runs out (issue 42), as a person meets them in the real workbench against
// the emulator: a paid image takes the key's budget past 90 %, a warning says so once (more refreshes
// of the same figures tell nothing new), with Show Account and Don't Warn Again for This Key.
import * as assert from 'assert';
import { setTimeout as sleep } from 'timers/promises';
import type { Page } from 'playwright-core';
import type { El } from './dom';
import { pictureTargets } from './pictures';
import { clickNotificationButton, prepareTest, readNotificationCentre, setColorTheme, waitForNotification, webviewFrame } from './workbench';
import { useWorkbench } from './useWorkbench';

/** A key of this suite only: 1,000 ₽ monthly budget, like the emulator's `budget` key. */
const KEY = 'gw-e2e-money-alerts';
const NINETY = /The key has used 9\d % of its budget/;

/** The button labels of the notification whose text matches, read in the Notifications centre. */
async function buttonsOf(page: Page, command: (id: string) => Promise<unknown>, text: RegExp): Promise<string[]> {
  await command('notifications.showList');
  try {
    const item = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
    await item.waitFor({ state: 'visible', timeout: 30_000 });
    return await item.locator('.monaco-button').evaluateAll((els: El[]) => els.map((e) => (e.textContent ?? '').trim()));
  } finally {
    await command('notifications.hideList');
  }
}

describe('Money alerts (e2e)', () => {
  // The shared window. The test windows start with the alerts off (test/harness/launch.ts): this test turns the budget's on.
  const opened = useWorkbench('shared');
  const ALERT_SETTINGS = { 'gatewayImages.alerts.budgetThresholds': [50, 75, 90], 'gatewayImages.alerts.runwayDays': 0 };

  it('an alert is shown once when the key budget crosses 90 %, with Show Account and a mute for the key', async function () {
    this.timeout(180_000);
    const { page, emulator } = opened();
    const command = (id: string, ...args: unknown[]) => opened().command(id, ...args);
    emulator.state.addKey(KEY, 'budget');
    // 899 of 1,000 ₽ spent: past 75 %, under 90 %.
    emulator.state.setKeyBudget(KEY, 101);
    await prepareTest(opened(), { key: null, settings: ALERT_SETTINGS });
    await command('gatewayImages.setApiKey', KEY);
    // The key's first figures are past 75 %: that crossing is told at once; then the slate is cleared.
    await waitForNotification(opened(), /The key has used 89 % of its budget/, 30_000);
    await command('notifications.clearAll');

    // A paid image (2.50–4 ₽) takes the budget past 90 %: the account is read again after it, and told.
    await command('gatewayImages.generate', { model: 'aurora-1', prompt: 'Past ninety percent', size: '64x64' });
    assert.ok(emulator.state.keyBudgetRub(KEY)! < 100, `the budget left is ${emulator.state.keyBudgetRub(KEY)} ₽`);
    await waitForNotification(opened(), NINETY, 30_000);
    assert.deepEqual(await buttonsOf(page, command, NINETY), ['Show Account', "Don't Warn Again for This Key"]);

    // The same figures read again (a refresh, the timer, another look) tell nothing new.
    for (let i = 0; i < 2; i++) {
      await command('gatewayImages.refreshAccount');
      // Past the alerts' settle time (1 s) and their claim's (0.4 s).
      await sleep(3_000);
    }
    const centre = await readNotificationCentre(opened());
    assert.deepEqual(centre.filter((text) => /of its budget/.test(text)).length, 1, `told more than once, or not at all: ${JSON.stringify(centre)}`);

    // The README's pictures of the alert, in the Notifications centre, in both themes (docs/ when asked).
    for (const [theme, name] of [
      ['Dark Modern', 'money-alert-dark.png'],
      ['Light Modern', 'money-alert-light.png'],
    ] as const) {
      await setColorTheme(opened(), theme);
      await command('notifications.showList');
      const list = page.locator('.notifications-center');
      await list.locator('.notification-list-item', { hasText: NINETY }).first().waitFor({ state: 'visible', timeout: 30_000 });
      for (const target of pictureTargets(name)) await list.screenshot({ path: target });
      await command('notifications.hideList');
    }

    // Show Account opens the Account and Usage page with the key's budget.
    await clickNotificationButton(opened(), NINETY, 'Show Account', 30_000);
    const frame = await webviewFrame(page, 'Account', 30_000);
    await frame.getByText('Budget remaining / initial').first().waitFor({ state: 'visible', timeout: 20_000 });
  });
});
