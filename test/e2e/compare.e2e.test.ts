// Compare Models end to end, in the real workbench: from the studio's "Compare Models…" button,
// pick three models in the quick pick, see the comparison grid fill in (model, image, cost, time),
// make the winner the default, and save screenshots of the grid in the dark and light themes.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Frame, Page } from 'playwright-core';
import { pickQuickItem, prepareTest, runCommand, waitFor, waitForNotification, webviewFrame } from './workbench';
import { useWorkbench } from './useWorkbench';
import { shootInBothThemes } from './pictures';

const TITLE = 'Image Studio';
const MODELS = ['aurora-1', 'sketch-mini', 'prism-2'];

async function imagesLoaded(frame: Frame, selector: string, count: number): Promise<void> {
  let loaded = 0;
  await waitFor(
    async () => {
      loaded = await frame
        .locator(selector)
        .evaluateAll((imgs: { complete: boolean; naturalWidth: number }[]) => imgs.filter((i) => i.complete && i.naturalWidth > 0).length);
      return loaded >= count;
    },
    20_000,
    () => `${count} images to load (${loaded} did)`,
  );
}

/** From the studio's Compare Models… button: the three models picked, until every card is done. */
async function compareThree(page: Page, prompt: string): Promise<Frame> {
  await runCommand(page, 'Gateway Images: Open Image Studio');
  const frame = await webviewFrame(page, TITLE, 30_000);
  await frame.locator('#compare-models').waitFor({ state: 'visible', timeout: 20_000 });
  await frame.locator('#model option[value="aurora-1"]').waitFor({ state: 'attached', timeout: 30_000 });
  await frame.locator('#prompt').fill(prompt);
  await frame.locator('#compare-models').click();
  for (const model of MODELS) await pickQuickItem(page, model, 20_000);
  await page.keyboard.press('Enter');
  // The grid of an earlier comparison may still show: wait for this one's (its prompt heads the grid).
  await waitFor(
    async () => ((await frame.locator('#compare-summary').textContent()) ?? '').startsWith(`${prompt} — `),
    60_000,
    `the grid of the comparison of "${prompt}"`,
  );
  await frame.locator('#compare-grid li.compare-card.status-done').nth(2).waitFor({ state: 'attached', timeout: 60_000 });
  return frame;
}

describe('Compare Models in the studio (e2e)', () => {
  const opened = useWorkbench('shared');

  it('compares three models from the studio and shows them side by side', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, workspace } = opened();
    const dir = path.join(workspace, 'generated-images');
    const pngs = () => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.png')) : []);
    const before = pngs();
    const frame = await compareThree(page, 'A lighthouse on a cliff at dawn, watercolour');
    const cards = frame.locator('#compare-grid li.compare-card');
    // The quick pick gives its selection in catalog order, not in the order of the clicks.
    const shown = await cards.evaluateAll((els: { getAttribute(n: string): string | null }[]) => els.map((e) => e.getAttribute('data-model')));
    assert.deepStrictEqual([...shown].sort(), [...MODELS].sort());
    await imagesLoaded(frame, '#compare-grid img', 3);
    for (let i = 0; i < 3; i++) assert.match((await cards.nth(i).textContent()) ?? '', /₽|RUB/);
    const saved = pngs().filter((n) => !before.includes(n));
    for (const model of MODELS)
      assert.ok(
        saved.some((n) => n.startsWith(`${model}-`)),
        `${model}: ${saved.join(', ')}`,
      );

    await frame.locator('#compare-grid li.compare-card[data-model="sketch-mini"] button.use-model').click();
    assert.strictEqual(await frame.locator('#model').inputValue(), 'sketch-mini');
    await waitForNotification(opened(), /sketch-mini/, 10_000);
  });

  it('saves screenshots of the grid in the dark and light themes', async () => {
    // The studio is left open when the test before left it (alone, the test opens it): a webview made
    // right after closing one whose grid was still loading its images waits up to 30 s for VS Code's
    // webview service worker (the grid's images, unlike the rest of the studio, are fetched through it).
    await prepareTest(opened(), { key: 'unlimited', keepEditors: true });
    const { page } = opened();
    await compareThree(page, 'A lighthouse on a cliff at dusk, watercolour');
    await shootInBothThemes(opened(), 'compare', async (file) => {
      const frame = await webviewFrame(page, TITLE);
      await frame.locator('#compare-heading').scrollIntoViewIfNeeded();
      await imagesLoaded(frame, '#compare-grid img', 3);
      await page.locator('.part.editor').screenshot({ path: file });
    });
  });
});
