// The studio's region editor in the real workbench (issue 41): a region painted with the mouse, or a
// rectangle drawn with the keyboard alone, sent to the emulator through the cost confirmation that
// names the crop; the saved result's pixels outside the region and its feather are the original's,
// byte for byte. Undo and redo, Edit Again chaining two edits (the journal names each parent), Keep
// and Discard, the three ways in (explorer, Edit Image with AI…, a card), axe-core on the editor,
// and its pictures in both themes.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Frame, Page } from 'playwright-core';
import { decodeImage, encodePng } from '../../src/core/images/codecs';
import { featherMask, maskFromImage } from '../../src/core/images/regionMask';
import type { HistoryEntry } from '../../src/jobs/results/resultsIndex';
import { noise } from '../support/regionImages';
import { seriousAxeFindings } from './axe';
import { chooseFromExplorerMenu, webviewFrame } from './parts';
import { shootInBothThemes } from './pictures';
import { pickQuickItem, typeInQuickInput } from './quickInput';
import { cardButton, generateCard, newestCard, openStudio, STUDIO_TITLE } from './studioPage';
import { useWorkbench } from './useWorkbench';
import { type OpenedWorkbench, prepareTest, waitFor } from './workbench';

const WIDTH = 240;
const HEIGHT = 160;
const FEATHER = 4;

/** A photo-like original: noise over a gradient, so a changed pixel cannot pass for an unchanged one. */
function writeOriginal(file: string): Buffer {
  const image = noise(WIDTH, HEIGHT, 41, true);
  for (let i = 0; i < image.data.length; i += 4) image.data[i] = Math.round(((i / 4) % WIDTH) * (255 / WIDTH));
  const png = encodePng(image);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, png);
  return png;
}

/** The editor's section once it shows `view` ('editor' or 'result'). */
async function editorIn(frame: Frame, view: 'editor' | 'result', timeoutMs = 30_000): Promise<void> {
  await frame.locator(`section.region-editor[data-view="${view}"]:not([hidden])`).waitFor({ state: 'visible', timeout: timeoutMs });
}

/** The studio's frame once its region editor shows an image named `name`. */
async function openedEditor(page: Page, name: string): Promise<Frame> {
  const frame = await webviewFrame(page, STUDIO_TITLE, 30_000);
  await editorIn(frame, 'editor');
  await waitFor(async () => (await frame.locator('#region-heading').textContent())?.includes(name) || undefined, 20_000, `the editor on ${name}`);
  return frame;
}

const operations = async (frame: Frame) => Number(await frame.locator('section.region-editor').getAttribute('data-operations'));

/**
 * Fills the form (aurora-1, the prompt, the feather) and presses Edit Region…; with `confirm` (the
 * window confirms every cost) answers the cost confirmation and gives its text, which names the crop.
 */
async function sendRegion(opened: OpenedWorkbench, frame: Frame, prompt: string, confirm: boolean): Promise<string> {
  const { page } = opened;
  await frame.locator('#region-model').selectOption('aurora-1');
  await frame.locator('#region-prompt').fill(prompt);
  await frame.locator('#region-feather').fill(String(FEATHER));
  await frame.locator('.region-submit').click();
  if (!confirm) return '';
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: 30_000 });
  const text = (await dialog.textContent()) ?? '';
  await dialog.getByRole('button', { name: /Send \(reserve/ }).click();
  return text;
}

/** Every pixel where the saved mask, feathered as sent, is 0 equals the original's; some pixel inside differs. */
async function assertOutsideExact(original: Buffer, result: string, maskFile: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const before = await decodeImage(original);
  const after = await decodeImage(fs.readFileSync(result));
  assert.deepStrictEqual([after.width, after.height], [before.width, before.height], 'the result has the original size');
  const mask = maskFromImage(await decodeImage(fs.readFileSync(maskFile)));
  assert.ok(mask.box, 'the saved mask marks a region');
  const feathered = featherMask(mask, FEATHER);
  let changedInside = 0;
  for (let p = 0; p < WIDTH * HEIGHT; p++) {
    const same = [0, 1, 2, 3].every((c) => after.data[p * 4 + c] === before.data[p * 4 + c]);
    if (feathered.alpha[p] === 0) assert.ok(same, `pixel ${p % WIDTH},${Math.floor(p / WIDTH)} outside the region changed`);
    else if (mask.alpha[p] === 255 && !same) changedInside++;
  }
  assert.ok(changedInside > 0, 'nothing inside the region changed');
  return mask.box;
}

/** The results journal's entries of the window's workspace, newest state of each. */
function journalEntries(opened: OpenedWorkbench): HistoryEntry[] {
  const storage = path.join(opened.workbench.userDataDir, 'User', 'workspaceStorage');
  const entries = new Map<string, HistoryEntry>();
  for (const folder of fs.existsSync(storage) ? fs.readdirSync(storage) : []) {
    const journal = path.join(storage, folder, 'gateway-images.gateway-images', 'results.jsonl');
    if (!fs.existsSync(journal)) continue;
    for (const line of fs.readFileSync(journal, 'utf8').split('\n').filter(Boolean)) {
      const tab = line.indexOf('\t');
      const head = JSON.parse(tab < 0 ? line : line.slice(0, tab)) as { put?: HistoryEntry };
      if (!head.put) continue;
      const detail = tab < 0 ? {} : (JSON.parse(line.slice(tab + 1)) as Partial<HistoryEntry>);
      entries.set(head.put.id, { ...head.put, ...detail });
    }
  }
  return [...entries.values()];
}

const entryOf = (opened: OpenedWorkbench, file: string) =>
  waitFor(
    () => journalEntries(opened).find((e) => e.files.includes(file) && e.region?.mask.endsWith('.mask.png')),
    20_000,
    `the journal entry of ${path.basename(file)}`,
  );

describe('Studio region editor (e2e)', () => {
  const opened = useWorkbench('shared');
  const paid = () => opened().emulator.state.requests.filter((r) => r.paid).length;

  it('paints with the mouse, confirms the crop, and saves a result whose pixels outside the region are the original’s', async () => {
    await prepareTest(opened(), { key: 'unlimited', settings: { 'gatewayImages.confirmCostAbove': 0 } });
    const { page, workspace } = opened();
    const file = path.join(workspace, 'region', 'mouse.png');
    const original = writeOriginal(file);
    await chooseFromExplorerMenu(opened(), file, 'Change Only a Region…');
    const frame = await openedEditor(page, 'mouse.png');
    assert.strictEqual(await frame.locator('section.region-editor').getAttribute('data-mask-coverage'), 'empty');

    // Nothing painted: the page says so next to the mask and sends nothing.
    const paidBefore = paid();
    await frame.locator('#region-model').selectOption('aurora-1');
    await frame.locator('#region-prompt').fill('A red balloon');
    await frame.locator('.region-submit').click();
    await frame.locator('#region-mask-error:not(:empty)').waitFor({ state: 'visible', timeout: 10_000 });

    // A brush stroke across the upper left quarter, with the mouse.
    await frame.locator('#region-tool-brush').check();
    const box = (await frame.locator('canvas.region-mask').boundingBox())!;
    const at = (fx: number, fy: number) => [box.x + box.width * fx, box.y + box.height * fy] as const;
    await page.mouse.move(...at(0.15, 0.25));
    await page.mouse.down();
    for (let step = 1; step <= 10; step++) await page.mouse.move(...at(0.15 + step * 0.025, 0.25));
    await page.mouse.up();
    await waitFor(async () => (await operations(frame)) === 1 || undefined, 10_000, 'the stroke to be one operation');
    assert.strictEqual(await frame.locator('#region-mask-error').textContent(), '', 'the mask error went with the painting');

    const confirmation = await sendRegion(opened(), frame, 'A red balloon', true);
    assert.match(confirmation, /Region edit: region \d+×\d+ of 240×160, sent as \d+:\d+; the rest of the image stays as it is\./);
    await editorIn(frame, 'result', 60_000);
    assert.strictEqual(paid(), paidBefore + 1, 'one paid request');
    assert.match((await frame.locator('.region-result-description').textContent()) ?? '', /region \d+×\d+ of 240×160, sent as/);

    const result = path.join(workspace, 'region', 'mouse.region-1.png');
    const mask = path.join(workspace, 'region', 'mouse.region-1.mask.png');
    assert.ok(fs.readFileSync(file).equals(original), 'the original is untouched');
    const region = await assertOutsideExact(original, result, mask);
    // The stroke ran from 15 % to 40 % of the width at a quarter of the height.
    assert.ok(region.x < WIDTH * 0.2 && region.x + region.width > WIDTH * 0.35, `the region spans the stroke: ${JSON.stringify(region)}`);
    assert.ok(region.y < HEIGHT * 0.25 && region.y + region.height > HEIGHT * 0.25 && region.y + region.height < HEIGHT * 0.6, JSON.stringify(region));
    const entry = await entryOf(opened(), result);
    assert.strictEqual(entry.region!.original, file, 'the journal names the original');
    assert.strictEqual(entry.region!.mask, mask, 'the journal names the mask beside the result');
    assert.strictEqual(entry.region!.feather, FEATHER);

    // The result against the original: the slider and the toggle.
    await frame.locator('#region-result-slider').fill('20');
    const toggle = frame.locator('.region-show-original');
    await toggle.click();
    assert.strictEqual(await toggle.getAttribute('aria-pressed'), 'true');
    await toggle.click();

    // Keep: the editor closes, the file stays.
    await frame.locator('.region-keep').click();
    await frame.locator('section.region-editor').waitFor({ state: 'hidden', timeout: 10_000 });
    assert.ok(fs.existsSync(result), 'Keep kept the result');
  });

  it('draws a rectangle with the keyboard alone, undoes and redoes it, and chains two edits with Edit Again', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, workspace } = opened();
    const file = path.join(workspace, 'region', 'keys.png');
    const original = writeOriginal(file);
    // Edit Image with AI…: "Change only a region…" on its model step.
    await chooseFromExplorerMenu(opened(), file, 'Edit Image with AI…');
    await typeInQuickInput(page, 'region');
    await pickQuickItem(page, /Change only a region/, 30_000);
    const frame = await openedEditor(page, 'keys.png');

    const canvas = frame.locator('canvas.region-mask');
    await canvas.focus();
    // The cursor starts at the middle: to 30 %, 30 %; Enter; to 60 %, 50 %; Enter.
    for (const key of ['Shift+ArrowLeft', 'Shift+ArrowLeft', 'Shift+ArrowUp', 'Shift+ArrowUp', 'Enter']) await canvas.press(key);
    for (const key of ['Shift+ArrowRight', 'Shift+ArrowRight', 'Shift+ArrowRight', 'Shift+ArrowDown', 'Shift+ArrowDown']) await canvas.press(key);
    assert.match((await frame.locator('.region-status').textContent()) ?? '', /30.*60.*30.*50/, 'the live region says the rectangle');
    await canvas.press('Enter');
    await waitFor(async () => (await operations(frame)) === 1 || undefined, 10_000, 'the rectangle to be added');
    assert.strictEqual(await frame.locator('section.region-editor').getAttribute('data-mask-coverage'), 'some');

    await canvas.press('Control+z');
    await waitFor(async () => (await operations(frame)) === 0 || undefined, 10_000, 'undo');
    assert.ok(await frame.locator('.region-redo').isEnabled(), 'Redo is offered');
    assert.ok(await frame.locator('.region-undo').isDisabled(), 'nothing left to undo');
    await frame.locator('.region-redo').click();
    await waitFor(async () => (await operations(frame)) === 1 || undefined, 10_000, 'redo');

    // The shared window confirms costs above ₽1000 only: no dialog comes.
    await sendRegion(opened(), frame, 'Snow on the roof', false);
    await editorIn(frame, 'result', 60_000);
    const first = path.join(workspace, 'region', 'keys.region-1.png');
    const box = await assertOutsideExact(original, first, path.join(workspace, 'region', 'keys.region-1.mask.png'));
    assert.deepStrictEqual(box, { x: 72, y: 48, width: 72, height: 32 }, 'the rectangle from 30 %, 30 % to 60 %, 50 % of 240×160');

    // Edit Again: the result is the next original, with the same painting.
    await frame.locator('.region-edit-again').click();
    await openedEditor(page, 'keys.region-1.png');
    assert.strictEqual(await operations(frame), 1, 'the painting is kept');
    await frame.locator('#region-prompt').fill('And a chimney');
    await frame.locator('.region-submit').click();
    await editorIn(frame, 'result', 60_000);
    const second = path.join(workspace, 'region', 'keys.region-1.region-1.png');
    await assertOutsideExact(fs.readFileSync(first), second, path.join(workspace, 'region', 'keys.region-1.region-1.mask.png'));
    assert.strictEqual((await entryOf(opened(), second)).region!.original, first, 'the second names the first as its parent');
    assert.strictEqual((await entryOf(opened(), first)).region!.original, file, 'the first names the original');

    // Discard: the second result and its mask go to the trash; the editor is back on its original.
    // code-server's file system has no trash: the person is asked before the paid image goes for good.
    await frame.locator('.region-discard').click();
    const dialog = page.locator('.monaco-dialog-box');
    const asked = await waitFor(
      async () =>
        (await dialog.isVisible()) ? 'asked' : (await frame.locator('section.region-editor').getAttribute('data-view')) === 'editor' ? 'trashed' : undefined,
      20_000,
      'Discard to trash the result or ask',
    );
    if (asked === 'asked') {
      assert.match((await dialog.textContent()) ?? '', /keys\.region-1\.region-1\.png cannot be moved to the trash\. Delete it permanently\?/);
      await dialog.getByRole('button', { name: 'Delete Permanently' }).click();
    }
    await openedEditor(page, 'keys.region-1.png');
    await waitFor(() => !fs.existsSync(second) || undefined, 10_000, 'the discarded result to leave the folder');
    assert.ok(!fs.existsSync(path.join(workspace, 'region', 'keys.region-1.region-1.mask.png')), 'its mask left too');
    assert.ok(fs.existsSync(first), 'the first result stays');
  });

  it('keeps the painting, the prompt and the image when VS Code hides the studio and shows it again (the page is discarded)', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, workspace } = opened();
    const file = path.join(workspace, 'region', 'hidden.png');
    writeOriginal(file);
    await chooseFromExplorerMenu(opened(), file, 'Change Only a Region…');
    let frame = await openedEditor(page, 'hidden.png');
    const canvas = frame.locator('canvas.region-mask');
    await canvas.focus();
    for (const key of ['Shift+ArrowLeft', 'Enter', 'Shift+ArrowRight', 'Shift+ArrowDown', 'Enter']) await canvas.press(key);
    await waitFor(async () => (await operations(frame)) === 1 || undefined, 10_000, 'the rectangle');
    await frame.locator('#region-prompt').fill('A kite in the sky');

    // Another editor in the studio's place: VS Code discards the hidden page.
    await opened().command('workbench.action.files.newUntitledFile');
    await waitFor(
      async () => (await webviewFrame(page, STUDIO_TITLE, 1000).catch(() => undefined)) === undefined || undefined,
      20_000,
      'the studio page to be discarded',
    );
    await opened().command('gatewayImages.openStudio');
    frame = await openedEditor(page, 'hidden.png');
    await waitFor(async () => (await operations(frame)) === 1 || undefined, 10_000, 'the painting back');
    assert.strictEqual(await frame.locator('#region-prompt').inputValue(), 'A kite in the sky');
    assert.strictEqual(await frame.locator('section.region-editor').getAttribute('data-mask-coverage'), 'some');

    // Back to the Studio closes it for good: shown again, the studio opens as usual.
    await frame.locator('.region-back').click();
    await frame.locator('section.region-editor').waitFor({ state: 'hidden', timeout: 10_000 });
  });

  it("opens from a generated card's Edit a Region… button; axe finds nothing serious in the editor or the result; pictures in both themes", async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    let frame = await openStudio(page);
    await generateCard(frame, 'A harbour at dusk with boats and a lighthouse');
    const generated = path.basename((await newestCard(frame).getAttribute('data-file')) ?? '');
    await cardButton(frame, 'Edit a Region…').click();
    frame = await openedEditor(page, generated);
    assert.deepStrictEqual(await seriousAxeFindings(frame), [], 'axe on the editor');

    // An ellipse by mouse over the right half, then the picture from the top of the page.
    await frame.locator('#region-tool-ellipse').check();
    const box = (await frame.locator('canvas.region-mask').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height * 0.35);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.85, box.y + box.height * 0.8, { steps: 6 });
    await page.mouse.up();
    await waitFor(async () => (await operations(frame)) === 1 || undefined, 10_000, 'the ellipse');
    await frame.locator('#region-model').selectOption('aurora-1');
    await frame.locator('#region-prompt').fill('A red sailing boat');
    await shootInBothThemes(opened(), 'region-editor', async (target) => {
      frame = await openedEditor(page, generated);
      await frame.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
      await page.locator('.part.editor').screenshot({ path: target });
    });

    await frame.locator('.region-submit').click();
    await editorIn(frame, 'result', 60_000);
    assert.deepStrictEqual(await seriousAxeFindings(frame), [], 'axe on the result against the original');
    await frame.locator('#region-result-slider').fill('75');
    await shootInBothThemes(opened(), 'region-result', async (target) => {
      frame = await webviewFrame(page, STUDIO_TITLE, 30_000);
      await editorIn(frame, 'result');
      await page.locator('.part.editor').screenshot({ path: target });
    });
    await frame.locator('.region-keep').click();
    await frame.locator('section.region-editor').waitFor({ state: 'hidden', timeout: 10_000 });
    const stem = generated.slice(0, -path.extname(generated).length);
    await waitFor(async () => (await newestCard(frame).getAttribute('data-file'))?.endsWith(`${stem}.region-1.png`) || undefined, 30_000, 'the result card');
  });
});
