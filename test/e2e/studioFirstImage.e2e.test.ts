// The studio's gallery shows each image as soon as it is saved: with a pause between the images of
// one answer (the emulator's imageGapMs), the first card appears while the request is still running.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { captureOnFailure, openWorkbench, type OpenedWorkbench, runCommand, typeInQuickInput, waitForNotification, webviewFrame } from './workbench';

const GAP_MS = 2500;

async function emulatorState(url: string, body: unknown): Promise<void> {
  const response = await fetch(new URL('/__emulator/state', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.strictEqual(response.status, 200, await response.text());
}

describe('Image Studio: images appear as they are saved (e2e)', () => {
  let opened: OpenedWorkbench | undefined;

  before(async () => {
    opened = await openWorkbench({ settings: { 'gatewayImages.openAfterGenerate': false } });
  });
  after(async () => {
    await opened?.close();
  });
  afterEach(async function () {
    await captureOnFailure(this, opened);
  });

  it('the first card is in the gallery before the job ends', async () => {
    const { page, emulator, workspace } = opened!;
    const key = (emulator.keys as Record<string, unknown> | null)?.unlimited;
    await runCommand(page, 'Gateway Images: Set API Key');
    await typeInQuickInput(page, typeof key === 'string' ? key : 'gw-demo-unlimited', { submit: true });
    await waitForNotification(page, 'API key saved', 20_000);

    await runCommand(page, 'Gateway Images: Open Image Studio');
    const frame = await webviewFrame(page, 'Image Studio', 30_000);
    await frame.locator('#model option[value="aurora-1"]').waitFor({ state: 'attached', timeout: 30_000 });
    await frame.locator('#model').selectOption('aurora-1');
    await frame.locator('#n').selectOption('3');
    await frame.locator('#prompt').fill('Three kites over a beach, one after another');
    await emulatorState(emulator.url, { imageGapMs: GAP_MS });
    try {
      await frame.locator('#generate:not([disabled])').waitFor({ state: 'visible', timeout: 20_000 });
      await frame.locator('#generate').click();

      // The first card: the job is still running (Cancel enabled) and the other two are not there yet.
      await frame.locator('#gallery li.card').first().waitFor({ state: 'attached', timeout: 60_000 });
      const firstAt = Date.now();
      assert.strictEqual(await frame.locator('#cancel').isEnabled(), true, 'the job had already ended when the first card appeared');
      assert.strictEqual(await frame.locator('#gallery li.card').count(), 1);
      const dir = path.join(workspace, 'generated-images');
      assert.strictEqual(fs.readdirSync(dir).filter((n) => n.endsWith('.png')).length, 1, 'the card shows a file that is saved');

      // Then the rest, and the job ends.
      await frame.locator('#gallery li.card').nth(2).waitFor({ state: 'attached', timeout: 60_000 });
      await frame.locator('#generate:not([disabled])').waitFor({ state: 'visible', timeout: 30_000 });
      assert.ok(Date.now() - firstAt >= GAP_MS, `the last card came ${Date.now() - firstAt} ms after the first`);
      assert.strictEqual(await frame.locator('#gallery li.card').count(), 3, 'one card per image, no duplicates');
      assert.match((await frame.locator('#status').textContent()) ?? '', /3/);
    } finally {
      await emulatorState(emulator.url, { imageGapMs: 0 });
    }
  });
});
