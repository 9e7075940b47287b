// Finding one result among 5,000 and seeing where the money went, in the real workbench: a journal of
// 5,000 results (one generated from the studio, 4,999 appended beside it: manyResultsWorkbench.ts, the
// window the studio-at-scale suite shares) is searched by prompt words and model from the palette's
// "Find Image Results…" and from the gallery's filter; the match opens as the gallery's card opens it,
// and the filter survives a window reload (cleared at the end for the next suite). Then, in a window of its
// own with spend from commands, the studio and another machine on the same key, Account and Usage
// with "Where the money went" is photographed in the dark and light themes (docs/ when asked).
import * as assert from 'assert';
import { cardButton, generateCard, newestPrompt, openStudio, waitForResults } from './studioPage';
import {
  prepareTest,
  readNotificationCentre,
  readToasts,
  reloadWindow,
  runCommand,
  typeInQuickInput,
  waitFor,
  waitForActiveTab,
  waitForQuickItems,
  webviewFrame,
} from './workbench';
import { useWorkbench } from './useWorkbench';
import { shootInBothThemes } from './pictures';
import { MANY_RESULTS, MATCH } from './manyResultsWorkbench';

const QUERY = 'lighthouse fog model:prism';
/** The screenshots' height: the gateway's figures and the chart by who made it. */
const SECTION_HEIGHT = 330;

describe('Find results and where the money went (e2e)', () => {
  const opened = useWorkbench('many-results', { timeoutMs: 240_000 });

  /** Waits until the active editor tab is the file. */
  const opensTab = (name: string) => waitForActiveTab(opened().page, name);

  it('searches 5,000 results by prompt words and model from the palette and the gallery, opens the match, and keeps the filter across a reload', async function () {
    this.timeout(240_000);
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();

    await runCommand(page, 'Gateway Images: Find Image Results…');
    await typeInQuickInput(page, QUERY);
    const [only] = await waitForQuickItems(page, (items) => items.length === 1 && items[0]!.label === 'A lighthouse in fog', `one match for ${QUERY}`, 20_000);
    assert.match(only!.description, /prism-2/);
    await page.keyboard.press('Enter');
    await opensTab(`result-${MATCH}.png`);
    await opened().command('workbench.action.closeAllEditors');

    let frame = await openStudio(page);
    await frame.locator('#gallery-filter').fill(QUERY);
    await waitForResults(frame, 1, 20_000);
    assert.strictEqual(await newestPrompt(frame), 'A lighthouse in fog');
    await cardButton(frame, 'Open').click();
    await opensTab(`result-${MATCH}.png`);

    // The filter is the workspace's, not the panel's: a studio opened anew after the reload shows it.
    await opened().command('workbench.action.closeAllEditors');
    await reloadWindow(opened());
    frame = await openStudio(page);
    await waitForResults(frame, 1, 20_000);
    assert.strictEqual(await frame.locator('#gallery-filter').inputValue(), QUERY);
    await frame.locator('#gallery-filter').fill('');
    await waitForResults(frame, MANY_RESULTS, 20_000);
  });
});

describe('Account and Usage: where the money went (e2e screenshots)', () => {
  const opened = useWorkbench({ settings: { 'gatewayImages.openAfterGenerate': false } });

  it('saves screenshots of Account and Usage (where the money went) in the dark and light themes', async function () {
    this.timeout(180_000);
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, emulator } = opened();
    // Spend from three places: commands, the studio, and another machine with the same key.
    await opened().command('gatewayImages.generate', { model: 'sketch-mini', prompt: 'A small boat at sea', size: '64x64' });
    await opened().command('gatewayImages.generate', { model: 'aurora-1', prompt: 'A lighthouse at dawn', size: '64x64', n: 2 });
    await generateCard(await openStudio(page), 'A harbour in fog, watercolour');
    // The three results' messages are shown before the page is photographed (then cleared).
    await waitFor(
      async () => (await readNotificationCentre(opened())).filter((t) => t.startsWith('Saved')).length >= 3 || undefined,
      20_000,
      'the three results saved',
    );
    const outside = await fetch(`${emulator.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emulator.keys.unlimited}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'prism-2', prompt: 'sent from another machine', size: '64x64' }),
    });
    assert.ok(outside.ok, `the outside request answered ${outside.status}`);
    await outside.arrayBuffer();
    await opened().command('workbench.action.closeAllEditors');
    await runCommand(page, 'Gateway Images: Show Account and Usage');
    // The page opens once the account is read, and takes the focus then: a palette opened before
    // that closes under the test's typing. The page is waited for first.
    await (await webviewFrame(page, 'Account')).getByText('Palette or command').first().waitFor({ state: 'visible', timeout: 20_000 });
    await shootInBothThemes(opened(), 'account-usage', async (file) => {
      await waitFor(async () => (await readToasts(page)).length === 0 || undefined, 10_000, 'no notification over the page');
      const frame = await webviewFrame(page, 'Account');
      await frame.getByText('Palette or command').first().waitFor({ state: 'visible', timeout: 20_000 });
      await frame.getByText('Image Studio').first().waitFor({ state: 'visible', timeout: 20_000 });
      // The section alone, from its heading down (the .vsix carries the README's pictures: kept small).
      const heading = frame.locator('h2', { hasText: 'Where the money went' });
      await heading.scrollIntoViewIfNeeded();
      const top = (await heading.boundingBox())!;
      const editor = (await page.locator('.part.editor').boundingBox())!;
      const height = Math.min(SECTION_HEIGHT, editor.y + editor.height - (top.y - 8));
      await page.screenshot({ path: file, clip: { x: editor.x, y: top.y - 8, width: editor.width, height } });
    });
  });
});
