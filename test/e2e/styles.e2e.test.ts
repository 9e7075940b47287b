// Project styles in the studio, end to end in the real workbench: a styles file in the workspace,
// the style picked in the studio's form (its values fill the fields and are marked), an image
// generated with it and shown in the gallery, and screenshots of the studio with a style applied in
// the dark and light themes (docs/, rewritten with GATEWAY_IMAGES_UPDATE_DOCS=1). In the window the
// sharing suites share.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Frame } from 'playwright-core';
import { generateFrom, newestPrompt, openStudio, resultCount, STUDIO_TITLE, waitForResults } from './studioPage';
import { prepareTest, waitFor, webviewFrame } from './workbench';
import { useWorkbench } from './useWorkbench';
import { shootInBothThemes } from './pictures';

const STYLES = {
  styles: {
    docs: {
      description: 'Flat illustrations for the documentation',
      model: 'aurora-1',
      promptPrefix: 'Flat vector illustration:',
      promptSuffix: ', soft pastel colours, plain background',
      options: { aspect_ratio: '16:9', quality: 'high', seed: 42 },
      outputFolder: 'docs/images',
      fileNamePattern: '{slug}-{index}',
    },
    sketch: { description: 'Quick pencil sketches', model: 'sketch-mini', promptSuffix: ', pencil sketch' },
  },
};
const PROMPT = 'A lighthouse on a cliff at dawn';
const SENT = 'Flat vector illustration: A lighthouse on a cliff at dawn, soft pastel colours, plain background';

describe('Project styles in the studio (e2e)', () => {
  // In the shared window: the styles file its tests write goes with the suite, as a teammate's revert would take it.
  let workspace: string | undefined;
  const opened = useWorkbench('shared', { onOpened: (openedWindow) => void (workspace = openedWindow.workspace) });
  after(() => workspace && fs.rmSync(path.join(workspace, '.gateway-images', 'styles.json'), { force: true }));

  /** The workspace's styles file (written as a teammate's commit would bring it), then the studio with the style picked and the prompt typed. */
  async function studioWithStyle(): Promise<Frame> {
    const { page, workspace } = opened();
    fs.mkdirSync(path.join(workspace, '.gateway-images'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.gateway-images', 'styles.json'), JSON.stringify(STYLES, null, 2));
    const frame = await openStudio(page);
    await frame.locator('#style option[value="docs"]').waitFor({ state: 'attached', timeout: 20_000 });
    await frame.locator('#style').selectOption('docs');
    await frame.locator('#prompt').fill(PROMPT);
    await frame.locator('#prompt-sent', { hasText: SENT }).waitFor({ timeout: 20_000 });
    return frame;
  }

  it('picks a style in the studio: its values fill the form, the prompt shows as sent; the image is generated with it and shown in the gallery', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { workspace, emulator } = opened();
    const frame = await studioWithStyle();
    // The style's values, marked as the style's.
    assert.strictEqual(await frame.locator('#model').inputValue(), 'aurora-1');
    assert.strictEqual(await frame.locator('#aspect_ratio').inputValue(), '16:9');
    assert.strictEqual(await frame.locator('#seed').inputValue(), '42');
    assert.strictEqual(await frame.locator('.field.from-style:has(#aspect_ratio) .style-badge').isVisible(), true);
    assert.match((await frame.locator('#style-summary').textContent()) ?? '', /Flat illustrations for the documentation/);
    // A field the person changes is theirs: the badge goes.
    await frame.locator('#aspect_ratio').selectOption('1:1');
    await waitFor(
      async () => !(await frame.locator('.field:has(#aspect_ratio)').getAttribute('class'))?.includes('from-style'),
      5_000,
      "the ratio to be the person's",
    );

    const results = await resultCount(frame);
    await generateFrom(frame, PROMPT);
    await waitForResults(frame, results + 1);
    assert.strictEqual(await newestPrompt(frame), SENT);
    const sent = emulator.state.requests.filter((r) => r.paid && r.prompt === SENT);
    assert.strictEqual(sent.length, 1, 'the request with the style was not sent once');
    // The style's folder and file name pattern ({slug}-{index}).
    const folder = path.join(workspace, 'docs', 'images');
    await waitFor(
      () => fs.existsSync(folder) && fs.readdirSync(folder).some((n) => /^flat-vector-illustration-a-lighthouse[\w-]*-1\.png$/.test(n)),
      10_000,
      "the image in the style's folder",
    );
  });

  it('saves screenshots of the studio with a style applied, in the dark and light themes', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    await studioWithStyle();
    await shootInBothThemes(opened(), 'studio-style', async (file) => {
      const frame = await webviewFrame(page, STUDIO_TITLE);
      await frame.locator('#prompt-sent', { hasText: SENT }).waitFor({ timeout: 20_000 });
      await page.locator('.part.editor').screenshot({ path: file });
    });
  });
});
