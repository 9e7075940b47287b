// Generation and editing as a person does it, in the real workbench: the palette's quick picks,
// the status bar, Cancel on the progress notification, a rejected key, and the explorer's
// right-click on an image. Each test sets up its own key and state (prepareTest).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from 'playwright-core';
import {
  chooseFromExplorerMenu,
  clickNotificationButton,
  type OpenedWorkbench,
  pickQuickItem,
  prepareTest,
  readStatusBar,
  readToasts,
  runCommand,
  screenshot,
  readQuickItems,
  typeInQuickInput,
  waitFor,
  waitForFilteredQuickItems,
  waitForNotification,
  waitForQuickItems,
  waitForToastButtons,
} from './workbench';
import { useWorkbench } from './useWorkbench';
import { saveAnimation } from './pictures';
import { imagesIn } from './workspaceFiles';

async function statusText(page: Page): Promise<string> {
  const [item] = await readStatusBar(page, 'gateway-images.status');
  return item?.text ?? '';
}

function waitForStatus(page: Page, test: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  return waitFor(
    async () => {
      const text = await statusText(page);
      return test(text) ? text : undefined;
    },
    timeoutMs,
    async () => `the status bar to change as expected; it shows ${JSON.stringify(await statusText(page))}`,
  );
}

/** Waits until the open input box is the one with this placeholder (the previous step has closed). */
async function waitForInputBox(page: Page, placeholder: string): Promise<void> {
  await page.locator(`.quick-input-widget .quick-input-box input[placeholder*="${placeholder}"]`).waitFor({ state: 'visible', timeout: 15_000 });
}

async function setKeyFromPalette(page: Page, key: string): Promise<void> {
  await runCommand(page, 'Gateway Images: Set API Key');
  await waitForInputBox(page, 'Paste your API key');
  await typeInQuickInput(page, key, { submit: true });
}

/** The palette flow in a project without styles: model, prompt, then the first item of the review list sends. */
async function generateFromPalette(page: Page, model: string, prompt: string, capture: () => Promise<void> = async () => undefined): Promise<void> {
  await runCommand(page, 'Gateway Images: Generate Image');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: model }).first().waitFor({ timeout: 30_000 });
  await typeInQuickInput(page, model);
  await waitForFilteredQuickItems(page, model);
  await capture();
  await pickQuickItem(page, model, 30_000);
  await waitForInputBox(page, 'A lighthouse on a cliff');
  await page.locator('.quick-input-widget .quick-input-box input').fill(prompt);
  await capture();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Send (reserve' }).first().waitFor({ timeout: 15_000 });
  await capture();
  await pickQuickItem(page, /Send \(reserve/);
}

/** The paid requests the emulator has seen with this prompt. */
function paidWithPrompt(opened: OpenedWorkbench, prompt: string) {
  return opened.emulator.state.requests.filter((r) => r.paid && r.prompt === prompt);
}

/** Frames of the palette flow for the README's animated capture (docs/ only when asked to update). */
class Capture {
  readonly frames: Buffer[] = [];
  constructor(private readonly page: Page) {}
  readonly take = async () => {
    this.frames.push(await this.page.screenshot());
  };
  save(name: string): void {
    if (this.frames.length >= 2) saveAnimation(name, this.frames);
  }
}

describe('Generate and edit from the UI (e2e)', () => {
  const opened = useWorkbench('shared');

  it('asks for a key in the status bar, then shows the balance once the key is set', async () => {
    await prepareTest(opened(), { key: null });
    const { page, emulator } = opened();
    await waitForStatus(page, (t) => t.includes('Set API key'));
    await setKeyFromPalette(page, emulator.keys.budget);
    await waitForNotification(opened(), 'API key saved', 20_000);
    // The figures follow VS Code's display language (English here).
    await waitForStatus(page, (t) => /₽ 5.?000[.,]00 · budget 975[.,]09/.test(t));
  });

  it('generates through the quick picks; the file lands in the workspace and the status bar changes', async () => {
    await prepareTest(opened(), { key: 'budget' });
    const { page, workspace } = opened();
    const dir = path.join(workspace, 'generated-images');
    const before = await waitForStatus(page, (t) => /^₽ .* · budget /.test(t));
    const filesBefore = imagesIn(dir);
    const prompt = 'A lighthouse at dawn';
    const capture = new Capture(page);
    await generateFromPalette(page, 'aurora-1', prompt, capture.take);
    // What stays: the file on disk, then the message (a toast, or in the Notifications centre).
    const added = await waitFor(
      () => {
        const now = imagesIn(dir).filter((f) => !filesBefore.includes(f));
        return now.length ? now : undefined;
      },
      30_000,
      'the generated file',
    );
    assert.deepStrictEqual(added.length, 1, `new files: ${added.join(', ')}`);
    assert.match(added[0]!, /a-lighthouse-at-dawn-aurora-1(-\d+)?\.png$/);
    await waitForNotification(opened(), /Saved 1 image to generated-images/, 30_000);
    if ((await readToasts(page)).some((t) => t.startsWith('Saved 1 image'))) {
      await waitForToastButtons(page, /Saved 1 image to generated-images/);
      await capture.take();
    }
    capture.save('generate-flow.png');
    assert.strictEqual(paidWithPrompt(opened(), prompt).length, 1, 'one paid request');
    await waitForStatus(page, (t) => t !== before && t.startsWith('₽'));
    await screenshot(page, 'generate-saved');
  });

  it('a first generation in a project without styles takes 3 steps: Model, Prompt, Review (the style a row of the review)', async () => {
    await prepareTest(opened(), { key: 'budget' });
    const { page, workspace } = opened();
    // A project without a styles file: the built-in styles are on offer, but in the review only.
    fs.rmSync(path.join(workspace, '.gateway-images', 'styles.json'), { force: true });
    const dir = path.join(workspace, 'generated-images');
    const filesBefore = imagesIn(dir);
    const prompt = 'Three steps to a lighthouse';
    const steps: string[] = [];
    await runCommand(page, 'Gateway Images: Generate Image');

    // Step 1, the first picker the command shows: the model, not a Style step.
    await page.locator('.quick-input-widget .quick-input-box input[placeholder*="Choose a model"]').waitFor({ state: 'visible', timeout: 30_000 });
    const first = await waitForQuickItems(page, (items) => items.some((i) => i.label === 'aurora-1'), 'the models', 30_000);
    assert.ok(
      !first.some((i) => /No style|built-in/.test(`${i.label} ${i.description}`)),
      `a Style step came first: ${JSON.stringify(first.map((i) => i.label))}`,
    );
    steps.push('Model');
    await typeInQuickInput(page, 'aurora-1');
    await waitForFilteredQuickItems(page, 'aurora-1');
    await pickQuickItem(page, 'aurora-1', 30_000);

    // Step 2: the prompt.
    await waitForInputBox(page, 'A lighthouse on a cliff');
    steps.push('Prompt');
    await page.locator('.quick-input-widget .quick-input-box input').fill(prompt);
    await page.keyboard.press('Enter');

    // Step 3: the review, with the style as one of its rows, set to "No style".
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Send (reserve' }).first().waitFor({ timeout: 15_000 });
    const review = await readQuickItems(page);
    const styleRow = review.find((i) => i.label === 'Style');
    assert.ok(styleRow, `no Style row in the review: ${JSON.stringify(review.map((i) => i.label))}`);
    assert.match(styleRow.description, /^No style/);
    for (const row of ['Number of images', 'Resolution'])
      assert.ok(
        review.some((i) => i.label === row),
        `no ${row} row`,
      );
    steps.push('Review');
    await pickQuickItem(page, /Send \(reserve/);

    // Sent after the third step: no fourth picker, one paid request with the prompt as typed.
    await waitFor(() => imagesIn(dir).length > filesBefore.length, 30_000, 'the generated file');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
    assert.deepStrictEqual(steps, ['Model', 'Prompt', 'Review']);
    const sent = paidWithPrompt(opened(), prompt);
    assert.strictEqual(sent.length, 1, 'one paid request, with no style words around the prompt');
  });

  it('Cancel on the progress notification leaves no file and charges nothing; the message claims no more than is known', async () => {
    await prepareTest(opened(), { key: 'budget' });
    const { page, workspace, emulator } = opened();
    const dir = path.join(workspace, 'generated-images');
    const filesBefore = imagesIn(dir);
    const balanceBefore = emulator.state.balanceRub;
    const prompt = 'Cancel me';
    emulator.state.armFault({ fault: 'latency', latencyMs: 60_000 });
    await generateFromPalette(page, 'aurora-1', prompt);
    // The request is at the gateway (held by the latency fault) before Cancel is pressed.
    const [request] = await waitFor(() => (paidWithPrompt(opened(), prompt).length ? paidWithPrompt(opened(), prompt) : undefined), 20_000, 'the paid request');
    await clickNotificationButton(opened(), 'Generating with aurora-1', 'Cancel');
    // The click's effect: the extension hung up.
    await waitFor(() => request!.clientAborted, 10_000, 'the emulator to see the connection drop');
    // The body had left: only "may have been charged" is known, with the balance change as information.
    const texts = await waitForNotification(opened(), /may have been charged/, 20_000);
    const message = texts.find((t) => /may have been charged/.test(t))!;
    assert.match(message, /this does not tell whether it was charged/);
    assert.doesNotMatch(message, /nothing was charged/, `no more than is known: ${message}`);
    assert.deepStrictEqual(imagesIn(dir), filesBefore);
    assert.strictEqual(emulator.state.balanceRub, balanceBefore);
    assert.strictEqual(request!.chargedRub, 0);
    assert.strictEqual(paidWithPrompt(opened(), prompt).length, 1, 'nothing was resent');
  });

  it('an expired key gives a clear error with the Set API Key action', async () => {
    await prepareTest(opened(), { key: null });
    const { page, emulator } = opened();
    await setKeyFromPalette(page, emulator.keys.expired);
    await waitForNotification(opened(), /expired/i, 20_000);
    await screenshot(page, 'expired-key');
    // The action does what it says: it asks for a new key.
    await clickNotificationButton(opened(), /expired/i, 'Set API Key');
    await waitForInputBox(page, 'Paste your API key');
    await page.keyboard.press('Escape');
  });

  it('right-click on an image in the explorer edits it; the result is saved next to it', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, workspace } = opened();
    // The unlimited key has no budget: the status bar shows the balance alone once it is in use.
    await waitForStatus(page, (t) => /^₽ [\d.,\s]+$/.test(t));
    const sample = path.join(workspace, 'images', 'sample.png');
    const original = fs.readFileSync(sample);
    const before = imagesIn(path.join(workspace, 'images'));
    await chooseFromExplorerMenu(opened(), sample, 'Edit Image with AI…');
    await typeInQuickInput(page, 'aurora-1');
    await pickQuickItem(page, 'aurora-1', 30_000);
    await waitForInputBox(page, 'What should change');
    await typeInQuickInput(page, 'Make the sky stormy', { submit: true });
    await pickQuickItem(page, /Send \(reserve/);
    const added = await waitFor(
      () => {
        const now = imagesIn(path.join(workspace, 'images')).filter((f) => !before.includes(f));
        return now.length ? now : undefined;
      },
      30_000,
      'the edited file',
    );
    assert.match(added.join(), /^sample\.edit-\d+\.png$/);
    await waitForNotification(opened(), /Saved 1 image to images/, 30_000);
    assert.ok(fs.readFileSync(sample).equals(original), 'the original changed');
    await screenshot(page, 'explorer-edit');
  });
});

describe('Generate with no folder open (e2e)', () => {
  const opened = useWorkbench({ noFolder: true, settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 } });

  it('asks where to save and saves there', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, workspace } = opened();
    const target = path.join(workspace, 'chosen');
    fs.mkdirSync(target, { recursive: true });
    await generateFromPalette(page, 'sketch-mini', 'No folder open');
    // code-server's folder dialog is a quick input with a path box.
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'where should the images be saved' }).waitFor({ timeout: 15_000 });
    const box = page.locator('.quick-input-widget .quick-input-box input');
    const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
    const typed = `${target}/`;
    // The dialog lists its starting folder asynchronously and then writes that folder into the box,
    // over anything typed before (a fill that came first was lost). So type again until the dialog
    // lists the typed folder: empty, it shows only the ".." row.
    await waitFor(
      async () => {
        if ((await box.inputValue()) !== typed) {
          await box.fill(typed);
          return false;
        }
        const labels = (await rows.allInnerTexts()).map((text) => text.trim());
        return labels.length === 1 && labels[0] === '..';
      },
      20_000,
      'the dialog to list the typed folder',
    );
    await page.locator('.quick-input-widget .monaco-button', { hasText: 'Save Images Here' }).click();
    const [saved] = await waitFor(() => (imagesIn(target).length ? imagesIn(target) : undefined), 30_000, 'an image in the chosen folder');
    assert.match(saved!, /no-folder-open-sketch-mini-1\.png$/);
  });
});
