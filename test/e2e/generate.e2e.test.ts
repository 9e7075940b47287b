// Generation and editing as a person does it, in the real workbench: the palette's quick picks,
// the status bar, Cancel on the progress notification, a rejected key, and the explorer's
// right-click on an image.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { REPO_ROOT, RESULTS_DIR } from '../harness/paths';
import { assembleApng } from './apng';
import {
  captureOnFailure,
  openWorkbench,
  type OpenedWorkbench,
  pickQuickItem,
  readStatusBar,
  runCommand,
  screenshot,
  typeInQuickInput,
  waitForNotification,
  waitForFilteredQuickItems,
  waitForToastButtons,
} from './workbench';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function images(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((n) => /\.(png|jpe?g|webp)$/i.test(n))
        .sort()
    : [];
}

async function statusText(page: Page): Promise<string> {
  const [item] = await readStatusBar(page, 'gateway-images.status');
  assert.ok(item, 'the status bar item is not shown');
  return item.text;
}

async function waitForStatus(page: Page, test: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = await statusText(page).catch(() => '');
    if (test(text)) return text;
    if (Date.now() > until) throw new Error(`status bar did not change as expected; shows ${JSON.stringify(text)}`);
    await sleep(200);
  }
}

/** Waits until the open input box is the one with this placeholder (the previous step has closed). */
async function waitForInputBox(page: Page, placeholder: string): Promise<void> {
  await page.locator(`.quick-input-widget .quick-input-box input[placeholder*="${placeholder}"]`).waitFor({ state: 'visible', timeout: 15_000 });
}

async function setKey(page: Page, key: string): Promise<void> {
  await runCommand(page, 'Gateway Images: Set API Key');
  await waitForInputBox(page, 'Paste your API key');
  await typeInQuickInput(page, key, { submit: true });
}

/** The palette flow: model, prompt, then the first item of the review list sends. */
async function generateFromPalette(page: Page, model: string, prompt: string, capture: () => Promise<void> = async () => undefined): Promise<void> {
  await runCommand(page, 'Gateway Images: Generate Image');
  // How long until the model list shows (from the cache after the first time). Reported, not asserted.
  const started = Date.now();
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: model }).first().waitFor({ timeout: 30_000 });
  console.log(`      model quick pick shown ${Date.now() - started} ms after the command was picked`);
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

/** Frames of the palette flow for the README's animated capture (docs/ only when asked to update). */
class Capture {
  readonly frames: Buffer[] = [];
  constructor(private readonly page: Page) {}
  readonly take = async () => {
    this.frames.push(await this.page.screenshot());
  };
  save(name: string): void {
    if (this.frames.length < 2) return;
    const apng = assembleApng(
      this.frames,
      this.frames.map((_, i) => (i === this.frames.length - 1 ? 3000 : 1400)),
    );
    const targets = [path.join(RESULTS_DIR, 'e2e', name)];
    if (process.env.GATEWAY_IMAGES_UPDATE_DOCS === '1') targets.push(path.join(REPO_ROOT, 'docs', name));
    for (const target of targets) {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, apng);
    }
  }
}

describe('Generate and edit from the UI (e2e)', () => {
  let opened: OpenedWorkbench | undefined;

  before(async () => {
    opened = await openWorkbench({ settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 } });
  });

  after(async () => {
    await opened?.close();
  });

  afterEach(async function () {
    await captureOnFailure(this, opened);
  });

  it('asks for a key in the status bar, then shows the balance once the key is set', async () => {
    const { page, emulator } = opened!;
    await waitForStatus(page, (t) => t.includes('Set API key'));
    await setKey(page, emulator.keys.budget);
    await waitForNotification(page, 'API key saved', 20_000);
    // The figures follow VS Code's display language (English here).
    const text = await waitForStatus(page, (t) => /₽ 5.?000[.,]00 · budget 975[.,]09/.test(t));
    assert.match(text, /budget/);
  });

  it('generates through the quick picks; the file lands in the workspace and the status bar changes', async () => {
    const { page, workspace } = opened!;
    const before = await statusText(page);
    const capture = new Capture(page);
    await generateFromPalette(page, 'aurora-1', 'A lighthouse at dawn', capture.take);
    await waitForNotification(page, /Saved 1 image to generated-images/, 30_000);
    await waitForToastButtons(page, /Saved 1 image to generated-images/);
    await capture.take();
    capture.save('generate-flow.png');
    const files = images(path.join(workspace, 'generated-images'));
    assert.strictEqual(files.length, 1, `files: ${files.join(', ')}`);
    assert.match(files[0]!, /a-lighthouse-at-dawn-aurora-1-1\.png$/);
    const after = await waitForStatus(page, (t) => t !== before && t.startsWith('₽'));
    assert.notStrictEqual(after, before);
    await screenshot(page, 'generate-saved');
  });

  it('Cancel on the progress notification leaves no file and charges nothing', async () => {
    const { page, workspace, emulator } = opened!;
    const dir = path.join(workspace, 'generated-images');
    const filesBefore = images(dir);
    const balanceBefore = emulator.state.balanceRub;
    emulator.state.armFault({ fault: 'latency', latencyMs: 20_000 });
    await generateFromPalette(page, 'aurora-1', 'Cancel me');
    const cancel = page
      .locator('.notifications-toasts .notification-toast')
      .filter({ hasText: 'Generating with aurora-1' })
      .getByRole('button', { name: 'Cancel' });
    await cancel.click({ timeout: 15_000 });
    await waitForNotification(page, /may have been charged.*nothing was charged/, 20_000);
    assert.deepStrictEqual(images(dir), filesBefore);
    assert.strictEqual(emulator.state.balanceRub, balanceBefore);
    assert.strictEqual(emulator.state.requests.filter((r) => r.paid).at(-1)?.chargedRub ?? 0, 0);
  });

  it('an expired key gives a clear error with the Set API Key action', async () => {
    const { page, emulator } = opened!;
    await setKey(page, emulator.keys.expired);
    await waitForNotification(page, /expired/i, 20_000);
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: /expired/i });
    await toast.getByRole('button', { name: 'Set API Key' }).waitFor({ state: 'visible', timeout: 10_000 });
    await screenshot(page, 'expired-key');
    await page.keyboard.press('Escape');
  });

  it('right-click on an image in the explorer edits it; the result is saved next to it', async () => {
    const { page, workspace, emulator } = opened!;
    await setKey(page, emulator.keys.unlimited);
    // The unlimited key has no budget: the status bar shows the balance alone once it is in use.
    await waitForStatus(page, (t) => /^₽ [\d.,\s]+$/.test(t));
    const original = fs.readFileSync(path.join(workspace, 'images', 'sample.png'));
    await runCommand(page, 'View: Show Explorer');
    const tree = page.locator('.explorer-folders-view');
    await tree.getByText('images', { exact: true }).click();
    const sample = tree.getByText('sample.png', { exact: true });
    await sample.waitFor({ state: 'visible', timeout: 10_000 });
    await sample.click({ button: 'right' });
    const item = page.locator('.context-view .action-label', { hasText: 'Edit Image with AI…' });
    await item.hover({ timeout: 10_000 });
    await sleep(300); // the menu ignores clicks while it is still opening
    await item.click();
    if (await item.isVisible().catch(() => false)) await page.keyboard.press('Enter');
    await typeInQuickInput(page, 'aurora-1');
    await pickQuickItem(page, 'aurora-1', 30_000);
    await waitForInputBox(page, 'What should change');
    await typeInQuickInput(page, 'Make the sky stormy', { submit: true });
    await pickQuickItem(page, /Send \(reserve/);
    await waitForNotification(page, /Saved 1 image to images/, 30_000);
    assert.ok(fs.existsSync(path.join(workspace, 'images', 'sample.edit-1.png')));
    assert.ok(fs.readFileSync(path.join(workspace, 'images', 'sample.png')).equals(original), 'the original changed');
    await screenshot(page, 'explorer-edit');
  });
});

describe('Generate with no folder open (e2e)', () => {
  let opened: OpenedWorkbench | undefined;

  before(async () => {
    opened = await openWorkbench({ noFolder: true, settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 } });
  });

  after(async () => {
    await opened?.close();
  });

  afterEach(async function () {
    await captureOnFailure(this, opened);
  });

  it('asks where to save and saves there', async () => {
    const { page, workspace, emulator } = opened!;
    const target = path.join(workspace, 'chosen');
    fs.mkdirSync(target, { recursive: true });
    await setKey(page, emulator.keys.unlimited);
    await waitForNotification(page, 'API key saved', 20_000);
    await generateFromPalette(page, 'sketch-mini', 'No folder open');
    // code-server's folder dialog is a quick input with a path box.
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'where should the images be saved' }).waitFor({ timeout: 15_000 });
    const box = page.locator('.quick-input-widget .quick-input-box input');
    // The dialog fills in its starting folder asynchronously; type only after it has.
    const settle = Date.now() + 10_000;
    while (!(await box.inputValue()).includes('/') && Date.now() < settle) await sleep(100);
    await sleep(300);
    await box.fill(`${target}/`);
    await sleep(500);
    await page.locator('.quick-input-widget .monaco-button', { hasText: 'Save Images Here' }).click();
    const until = Date.now() + 30_000;
    while (images(target).length === 0) {
      assert.ok(Date.now() < until, 'no image was saved in the chosen folder');
      await sleep(200);
    }
    assert.match(images(target)[0]!, /no-folder-open-sketch-mini-1\.png$/);
  });
});
