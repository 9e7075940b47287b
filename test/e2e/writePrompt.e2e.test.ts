// A prompt written by the editor's language model, as a person sees it: a paragraph of the README
// selected in a Markdown editor, Generate Image for Selection from the palette (no Style step: the
// workspace has no styles file), the model, "Write the prompt with Test Writer", and the review step with the proposed prompt
// and the reservation, then the image. The language model is the fixture test/fixtures/lm-provider
// (its answer is set by the test: no real model is reachable here), loaded by the shared window with
// no model offered: the suite with the model offers it while it runs (lmProvider.ts). The provider
// API is stable from VS Code 1.104: on 1.100.3 that suite is skipped. The studio's fallback without a
// model (the selection, with the line that says why) runs in the shared window on every VS Code.
// Pictures: docs/write-prompt-review.png and docs/write-prompt-image.png (docs/ only with
// GATEWAY_IMAGES_UPDATE_DOCS=1), else test-results/e2e/.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from '../harness/paths';
import { hasProviderApi, vscodeVersion } from './lmProvider';
import { openStudio } from './studioPage';
import { type OpenedWorkbench, pickQuickItem, prepareTest, readToasts, runCommand, waitFor, waitForNotification } from './workbench';
import { useWorkbench } from './useWorkbench';
import { savePicture } from './pictures';

/** The README's first paragraph, as the article whose cover is made. */
const PARAGRAPH = fs
  .readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')
  .split(/\n\s*\n/)[1]!
  .replace(/\s+/g, ' ')
  .trim();
/** What the fixture answers, the way a model does (a label and quotes the extension removes). */
const ANSWER =
  'Prompt: "A calm editor window on a wooden desk, a glowing picture frame rising out of it, a small ruble coin and a price tag beside it, soft morning light, flat editorial illustration, no text"';
const CLEANED = ANSWER.slice('Prompt: "'.length, -1);

/** The paragraph in a Markdown editor (beside the active one, or in its place), all of it selected. */
async function openParagraph(opened: OpenedWorkbench, name: string, beside = false): Promise<void> {
  const file = path.join(opened.workspace, 'docs', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${PARAGRAPH}\n`);
  await opened.command('vscode.open', { $uri: file }, ...(beside ? [-2] : []));
  await opened.command('editor.action.selectAll');
}

describe('Prompt written by a language model (e2e)', () => {
  // Before the window's hook: without the API, no window is opened for tests that cannot run.
  before(function () {
    const version = vscodeVersion();
    if (hasProviderApi(version)) return;
    console.log(`      skipped: VS Code ${version} has no vscode.lm.registerLanguageModelChatProvider (stable from 1.104)`);
    this.skip();
  });
  // The shared window, which loads the fixture without a model offered: offered while this suite runs,
  // at the size of its pictures, then taken back (the suites after it expect no model).
  let viewport: { width: number; height: number } | null = null;
  after(async () => {
    if (!viewport) return; // skipped (no provider API), or the window never opened
    await opened().command('gatewayImagesTest.setLanguageModelAvailable', false);
    await opened().page.setViewportSize(viewport);
  });
  const opened = useWorkbench('shared', {
    onOpened: async (openedWindow) => {
      await openedWindow.command('gatewayImagesTest.setLanguageModelAnswer', ANSWER, 'answer');
      await openedWindow.command('gatewayImagesTest.setLanguageModelAvailable', true);
      viewport = openedWindow.page.viewportSize() ?? { width: 1400, height: 900 };
      await openedWindow.page.setViewportSize({ width: 1280, height: 800 });
    },
  });

  it('Generate Image for Selection: the review shows the prompt the model wrote and the reservation; the gateway gets it', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    // The chat view 1.139 opens beside the editor is not part of this picture.
    await opened()
      .command('workbench.action.closeAuxiliaryBar')
      .catch(() => undefined);
    await openParagraph(opened(), 'about.md');
    await runCommand(page, 'Gateway Images: Generate Image for Selection');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'aurora-1' }).first().waitFor({ timeout: 30_000 });
    await pickQuickItem(page, 'aurora-1', 30_000);
    await pickQuickItem(page, /Write the prompt with Test Writer/, 30_000);
    const review = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Send (reserve' }).first();
    await review.waitFor({ timeout: 30_000 });
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'written by Test Writer' }).first().waitFor({ timeout: 10_000 });
    // The "Writing the prompt…" progress has closed: the picture shows the review alone.
    await waitFor(async () => (await readToasts(page)).length === 0, 10_000, 'the progress notification to close');
    savePicture('write-prompt-review.png', await page.screenshot());
    await pickQuickItem(page, /Send \(reserve/);
    await waitForNotification(opened(), /Saved 1 image/, 60_000);
    const sent = opened().emulator.state.requests.filter((r) => r.paid);
    assert.strictEqual(sent.at(-1)?.prompt, CLEANED);
    const dir = path.join(opened().workspace, 'generated-images');
    const image = await waitFor(() => (fs.existsSync(dir) ? fs.readdirSync(dir).find((n) => n.endsWith('.png')) : undefined), 30_000, 'the image');
    savePicture('write-prompt-image.png', fs.readFileSync(path.join(dir, image)));
    // The link goes in after the image is saved (the notification may come first); saved to be read.
    const link = `![${CLEANED.replace(/[\\`*_[\]<>&]/g, (c) => `\\${c}`)}](../generated-images/${image})`;
    await waitFor(
      async () => {
        await opened().command('workbench.action.files.saveAll');
        return fs.readFileSync(path.join(opened().workspace, 'docs', 'about.md'), 'utf8').includes(link);
      },
      15_000,
      () => `the link in about.md: ${fs.readFileSync(path.join(opened().workspace, 'docs', 'about.md'), 'utf8')}`,
    );
  });

  it("the studio's Write a prompt from the active document… fills the prompt with the model's answer", async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const frame = await openStudio(opened().page);
    await frame.locator('#model').selectOption('aurora-1');
    await openParagraph(opened(), 'studio.md', true);
    await frame.locator('#write-prompt').click();
    await pickQuickItem(opened().page, /Write the prompt with Test Writer/, 30_000);
    await waitFor(async () => (await frame.locator('#prompt').inputValue()) === CLEANED, 30_000, 'the prompt in the form');
    assert.match((await frame.locator('#prompt-note').textContent()) ?? '', /Written by Test Writer/);
    await frame.locator('.estimate', { hasText: /\d/ }).first().waitFor({ timeout: 20_000 });
  });
});

describe('Prompt written by a language model (e2e), with no model in the window', () => {
  const opened = useWorkbench('shared');

  it("the studio's Write a prompt from the active document… takes the selection and says why", async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const frame = await openStudio(opened().page);
    await frame.locator('#model').selectOption('aurora-1');
    await openParagraph(opened(), 'studio-no-model.md', true);
    await frame.locator('#write-prompt').click();
    await waitFor(async () => (await frame.locator('#prompt').inputValue()) === PARAGRAPH, 30_000, 'the prompt in the form');
    assert.match((await frame.locator('#prompt-note').textContent()) ?? '', /No language model is available/);
    await frame.locator('.estimate', { hasText: /\d/ }).first().waitFor({ timeout: 20_000 });
  });
});
