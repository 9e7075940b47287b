// The studio's gallery shows each image as soon as it is saved: with a pause between the images of
// one answer (the emulator's imageGapMs), the first card appears while the request is still running.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { generateFrom, newestPrompt, resultCount, waitForResults } from './studioPage';
import { prepareTest, runCommand, webviewFrame } from './workbench';
import { useWorkbench } from './useWorkbench';

const GAP_MS = 2500;

describe('Image Studio: images appear as they are saved (e2e)', () => {
  // The shared window: the counts below are of what this test adds.
  const opened = useWorkbench('shared');

  it('the first card is in the gallery before the job ends', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, emulator, workspace } = opened();

    await runCommand(page, 'Gateway Images: Open Image Studio');
    const frame = await webviewFrame(page, 'Image Studio', 30_000);
    await frame.locator('#model option[value="aurora-1"]').waitFor({ state: 'attached', timeout: 30_000 });
    const before = await resultCount(frame);
    const dir = path.join(workspace, 'generated-images');
    const pngs = () => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.png')).length : 0);
    const filesBefore = pngs();
    await frame.locator('#model').selectOption('aurora-1');
    await frame.locator('#n').selectOption('3');
    emulator.state.imageGapMs = GAP_MS; // prepareTest sets it back to 0
    {
      await generateFrom(frame, 'Three kites over a beach, one after another');

      // The first card: the job is still running (Cancel enabled) and the other two are not there yet.
      await waitForResults(frame, before + 1);
      const firstAt = Date.now();
      assert.strictEqual(await frame.locator('#cancel').isEnabled(), true, 'the job had already ended when the first card appeared');
      assert.strictEqual(await newestPrompt(frame), 'Three kites over a beach, one after another');
      assert.strictEqual(pngs(), filesBefore + 1, 'the card shows a file that is saved');

      // Then the rest, and the job ends.
      await waitForResults(frame, before + 3);
      await frame.locator('#generate:not([disabled])').waitFor({ state: 'visible', timeout: 30_000 });
      assert.ok(Date.now() - firstAt >= GAP_MS, `the last card came ${Date.now() - firstAt} ms after the first`);
      assert.strictEqual(await resultCount(frame), before + 3, 'one card per image, no duplicates');
      assert.match((await frame.locator('#status').textContent()) ?? '', /3/);
    }
  });
});
