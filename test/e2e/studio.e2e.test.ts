// Image Studio end to end, in the real workbench: open it from the palette, generate against the
// emulator, see the result in the gallery and on disk, survive a window reload, show markup in a
// prompt as text, and save screenshots of the panel in the dark and light themes (docs/). In the
// window the sharing suites share.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Dialog, Page } from 'playwright-core';
import { cardButton, formState, generateCard, generateFrom, newestPrompt, openStudio, resultCount, STUDIO_TITLE as TITLE, waitForResults } from './studioPage';
import { prepareTest, runCommand, waitFor, webviewFrame } from './workbench';
import { useWorkbench } from './useWorkbench';
import { shootInBothThemes } from './pictures';
import { imagesIn } from './workspaceFiles';
import { appendResults, generatedResult } from './resultsJournal';

const XSS = '<img src=x onerror=alert(1)>';

describe('Image Studio (e2e)', () => {
  // In the shared window: the tests count what they add to the gallery. A page dialog (one a prompt's
  // markup could open) is recorded while this suite runs, and the listener goes with the suite.
  const dialogs: string[] = [];
  const onDialog = (dialog: Dialog): void => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  };
  let listening: Page | undefined;
  const opened = useWorkbench('shared', {
    onOpened: (openedWindow) => void (listening = openedWindow.page).on('dialog', onDialog),
  });
  after(() => void listening?.off('dialog', onDialog));

  it('generates from the studio; the gallery shows the image and the file is in the workspace', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, workspace } = opened();
    const frame = await openStudio(page);
    const resultsBefore = await resultCount(frame);
    const filesBefore = imagesIn(path.join(workspace, 'generated-images'));
    // A blank form: a neutral hint, no errors; Generate shows them (and sends nothing).
    await frame.locator('#status', { hasText: 'Choose a model and write a prompt' }).waitFor({ timeout: 10_000 });
    assert.strictEqual(await frame.locator('#issues li').count(), 0, 'errors on an untouched form');
    const paidBefore = opened().emulator.state.requests.filter((r) => r.paid).length;
    await frame.locator('dl.estimate[aria-busy="false"]').waitFor({ state: 'attached', timeout: 10_000 });
    await frame.locator('#generate:not([disabled])').press('Enter', { timeout: 10_000 });
    await frame.locator('#issues li').nth(1).waitFor({ state: 'attached', timeout: 10_000 });
    assert.strictEqual(opened().emulator.state.requests.filter((r) => r.paid).length, paidBefore, 'Generate on a blank form sent a request');
    await frame.locator('#model').selectOption('aurora-1');
    assert.match((await frame.locator('#model-summary').textContent()) ?? '', /northlight/);
    await generateFrom(frame, 'A lighthouse on a cliff at dawn, watercolour');
    await waitForResults(frame, resultsBefore + 1);

    const card = frame.locator('#gallery li.card[aria-posinset="1"]');
    assert.strictEqual(await card.locator('.prompt').textContent(), 'A lighthouse on a cliff at dawn, watercolour');
    assert.match((await card.locator('.description').textContent()) ?? '', /aurora-1/);
    const thumb = card.locator('img');
    await waitFor(
      () => thumb.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0),
      20_000,
      'the thumbnail (sent as data) to load',
    );
    const files = imagesIn(path.join(workspace, 'generated-images')).filter((f) => !filesBefore.includes(f));
    assert.strictEqual(files.length, 1, `new files in generated-images: ${files.join(', ')}`);
    assert.match((await frame.locator('#status').textContent()) ?? '', /1/);
  });

  it('saves screenshots of the panel in the dark and light themes', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    const studio = await openStudio(page);
    if ((await resultCount(studio)) === 0) await generateCard(studio, 'A lighthouse on a cliff at dawn, watercolour');
    await shootInBothThemes(opened(), 'studio', async (file) => {
      const frame = await webviewFrame(page, TITLE);
      await frame.locator('#gallery li.card').first().waitFor({ state: 'attached', timeout: 30_000 });
      await page.locator('.part.editor').screenshot({ path: file });
    });
  });

  it('shows markup in a prompt as text: no element is created from it and no dialog opens', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    const frame = await openStudio(page);
    await generateCard(frame, XSS);
    assert.strictEqual(await newestPrompt(frame), XSS);
    assert.strictEqual(await frame.locator('img[src="x"]').count(), 0, 'an <img> was created from the prompt');
    assert.strictEqual(await frame.locator('#gallery li.card .prompt img').count(), 0);
    assert.strictEqual(await frame.locator('#prompt').inputValue(), XSS);
    // No wait needed: a script or handler from the prompt would have needed an element made from it
    // (checked above: there is none), and the card is rendered.
    assert.deepStrictEqual(dialogs, []);
  });

  it('cancels a running request from the panel', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, emulator } = opened();
    const frame = await openStudio(page);
    const resultsBefore = await resultCount(frame);
    emulator.state.armFault({ fault: 'latency', latencyMs: 60_000 });
    await frame.locator('#model').selectOption('aurora-1');
    const prompt = 'Cancel me from the studio';
    await generateFrom(frame, prompt);
    const request = await waitFor(
      () => emulator.state.requests.find((r) => r.paid && r.prompt === prompt),
      20_000,
      async () => `the paid request; the form shows ${await formState(frame)}`,
    );
    await frame.locator('#cancel:not([disabled])').waitFor({ state: 'visible', timeout: 10_000 });
    await frame.locator('#cancel').click();
    // Ended by the cancel, not by the answer's 60 s latency: the status says so well before it (a wait,
    // not a clock bound: a busy machine must not fail it), and the emulator sees the connection drop.
    await frame.locator('#status.error').waitFor({ state: 'visible', timeout: 30_000 });
    assert.match((await frame.locator('#status').textContent()) ?? '', /cancel/i);
    await waitFor(() => request.clientAborted, 10_000, 'the emulator to see the connection drop');
    await frame.locator('#generate:not([disabled])').waitFor({ state: 'visible', timeout: 10_000 });
    assert.strictEqual(await resultCount(frame), resultsBefore, 'a cancelled request added a result');
    assert.strictEqual(request.chargedRub, 0);
  });

  it('comes back after Developer: Reload Window, with its form and gallery', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    const studio = await openStudio(page);
    if ((await resultCount(studio)) === 0) await generateCard(studio, 'A card to come back');
    const results = await resultCount(studio);
    await studio.locator('#model').selectOption('aurora-1');
    await studio.locator('#prompt').fill(XSS);
    await runCommand(page, 'Developer: Reload Window');
    await page.waitForEvent('load', { timeout: 60_000 }).catch(() => undefined);
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    const frame = await webviewFrame(page, TITLE, 60_000);
    await waitForResults(frame, results, 30_000);
    assert.strictEqual(await frame.locator('#prompt').inputValue(), XSS, 'the form was not restored from the page state');
    assert.strictEqual(await frame.locator('#model').inputValue(), 'aurora-1');
    assert.strictEqual(await frame.locator('img[src="x"]').count(), 0);
    assert.deepStrictEqual(dialogs, []);
  });
  it('a card keeps the keyboard focus while another window rewrites the results journal', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    const frame = await openStudio(page);
    await generateCard(frame, 'A card that keeps the focus');
    const { journal, result } = await generatedResult(opened());
    const results = await resultCount(frame);
    await cardButton(frame, 'Use as Reference').focus();
    const focused = () =>
      frame.evaluate(() => {
        type Element = { tagName: string; dataset: Record<string, string | undefined>; closest(selector: string): Element | null };
        const active = (globalThis as unknown as { document: { activeElement: Element | null } }).document.activeElement;
        return `${active?.closest('li')?.dataset.file ?? '(no card)'} ${active?.dataset.action ?? active?.tagName}`;
      });
    const before = await focused();
    assert.match(before, / useAsReference$/);
    // Another window compacts: it writes the journal anew, with one result of its own, and renames
    // it over this one. This window reads the replaced file whole, and its gallery starts over.
    const replacement = `${journal}.other-window`;
    fs.copyFileSync(journal, replacement);
    appendResults(replacement, result, 2, () => ({ id: 'e2e-other-window', prompt: 'Made in another window' }));
    fs.renameSync(replacement, journal);
    await waitForResults(frame, results + 1, 30_000);
    assert.strictEqual(await newestPrompt(frame), 'Made in another window');
    assert.strictEqual(await focused(), before, 'the focused card lost the focus when the gallery started over');
  });
});
