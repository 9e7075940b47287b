// The whole extension in Russian, in the real workbench (VS Code switched to ru by the harness's
// language pack): palette titles, the model picker with ru prices, the review step, the result
// message, the status bar and its tooltip, the studio. Any English string of ours on screen fails.
// Pictures: docs/generate-ru.png and docs/studio-ru.png (docs/ only with GATEWAY_IMAGES_UPDATE_DOCS=1).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { ensureRussianLanguagePack } from '../harness/languagePack';
import { REPO_ROOT, selectedVscodeTarget } from '../harness/paths';
import { generateFrom, resultCount } from './studioPage';
import {
  openCommandPalette,
  pickQuickItem,
  prepareTest,
  readQuickItems,
  readStatusBar,
  readToasts,
  typeInQuickInput,
  waitFor,
  waitForNotification,
  webviewFrame,
  waitForFilteredQuickItems,
  waitForQuickItems,
  waitForToastButtons,
} from './workbench';
import { useWorkbench } from './useWorkbench';
import { pictureTargets, saveAnimation } from './pictures';
const json = (file: string) => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')) as Record<string, string>;
const ru = json('l10n/bundle.l10n.ru.json');
const nlsEn = json('package.nls.json');
const nlsRu = json('package.nls.ru.json');
/** The Russian of an English bundle string, with {n} filled in. */
const t = (english: string, ...args: unknown[]) =>
  (ru[english] ?? assert.fail(`no Russian for ${english}`)).replace(/\{(\d+)\}/g, (_m, i: string) => String(args[Number(i)]));

/**
 * Fragments of our English strings that differ in Russian: the text between placeholders, at
 * least two words long (single words such as "Model" could be names). Finding one on screen means
 * an untranslated string.
 */
function englishFragments(): string[] {
  const pairs: [string, string][] = [
    ...Object.entries(ru).map(([en, r]) => [en, r] as [string, string]),
    ...Object.entries(nlsEn).map(([key, en]) => [en, nlsRu[key] ?? ''] as [string, string]),
  ];
  const fragments = new Set<string>();
  for (const [en, r] of pairs) {
    if (en === r) continue;
    for (const part of en.split(/\{\d+\}|[\n*`]/)) {
      const text = part.trim().replace(/[.:,…]+$/, '');
      if (/[A-Za-z]{2,}\s+[A-Za-z]{2,}/.test(text) && !r.includes(text)) fragments.add(text);
    }
  }
  return [...fragments];
}
const ENGLISH = englishFragments();

function assertNoEnglish(where: string, texts: string[]): void {
  const joined = texts.join('\n');
  const found = ENGLISH.filter((fragment) => joined.includes(fragment));
  assert.deepStrictEqual(found, [], `untranslated English in ${where}:\n${joined}`);
}

async function quickTexts(page: Page): Promise<string[]> {
  // Label and description are ours; the detail line (in the aria label) is the gateway's own text.
  return (await readQuickItems(page)).map((i) => `${i.label} ${i.description}`);
}

describe('Russian UI (e2e)', () => {
  const frames: Buffer[] = [];
  const category = nlsRu['command.category'];
  const title = (key: string) => `${category}: ${nlsRu[key]}`;
  const opened = useWorkbench(() => ({
    locale: 'ru',
    extensions: [ensureRussianLanguagePack(selectedVscodeTarget())],
    settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 },
  }));

  it('the palette lists our commands with their Russian titles', async () => {
    await prepareTest(opened(), { key: null });
    const { page } = opened();
    await openCommandPalette(page);
    await typeInQuickInput(page, `>${category}`);
    // The palette fills in asynchronously: wait for our rows.
    await waitForQuickItems(page, (rows) => rows.some((r) => r.label.startsWith(`${category}:`)), `rows of ${category}`, 15_000);
    const labels = (await readQuickItems(page)).map((i) => i.label);
    for (const key of ['command.generate.title', 'command.openStudio.title', 'command.setApiKey.title', 'command.showAccount.title']) {
      assert.ok(labels.includes(title(key)), `${title(key)} not in ${JSON.stringify(labels)}`);
    }
    assertNoEnglish('the command palette', labels);
    await page.keyboard.press('Escape');
  });

  it('sets the key; the status bar text and tooltip are Russian', async () => {
    // This test reads a hover: hovers show here (after VS Code's usual delay), in no other test.
    await prepareTest(opened(), { key: null, settings: { 'workbench.hover.delay': 500 } });
    const { page, emulator } = opened();
    await openCommandPalette(page);
    await typeInQuickInput(page, `>${title('command.setApiKey.title')}`);
    await pickQuickItem(page, title('command.setApiKey.title'));
    await page.locator(`.quick-input-widget .quick-input-box input[placeholder*="${t('Paste your API key')}"]`).waitFor({ timeout: 15_000 });
    await typeInQuickInput(page, emulator.keys.budget, { submit: true });
    const saved = t('API key saved. Signed in as {0}.', '').split(' ')[0]!;
    assertNoEnglish('the notifications', await waitForNotification(opened(), saved, 20_000));
    // ru money: a space (no-break) between thousands and a comma before the kopecks.
    let status = '';
    await waitFor(
      async () => {
        status = (await readStatusBar(page, 'gateway-images.status'))[0]?.text ?? '';
        return /₽\s5\s000,00/.test(status);
      },
      20_000,
      () => `the status bar to show the balance in ru; it shows ${JSON.stringify(status)}`,
    );
    assertNoEnglish('the status bar', [status]);
    await page.locator('#workbench\\.parts\\.statusbar .statusbar-item[id$="gateway-images.status"]').hover();
    const hover = page.locator('.monaco-hover:visible, .workbench-hover:visible').first();
    await hover.waitFor({ state: 'visible', timeout: 15_000 });
    const tooltip = (await hover.innerText()).trim();
    assert.match(tooltip, /[а-яё]{4}/i, tooltip);
    assertNoEnglish('the status bar tooltip', [tooltip]);
    await page.mouse.move(700, 400);
    await page.keyboard.press('Escape');
  });

  it('generates through the Russian model picker (ru prices), review step and result message', async () => {
    await prepareTest(opened(), { key: 'budget' });
    const { page, workspace } = opened();
    const dir = path.join(workspace, 'generated-images');
    const filesBefore = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    const take = async () => void frames.push(await page.screenshot());
    await openCommandPalette(page);
    await typeInQuickInput(page, `>${title('command.generate.title')}`);
    await pickQuickItem(page, title('command.generate.title'));
    // No Style step while the workspace has no styles file (issue 42): the model picker comes first.
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'aurora-1' }).first().waitFor({ timeout: 30_000 });
    const models = await quickTexts(page);
    assert.ok(!models.some((m) => m.includes(t('No style'))), `a Style step: ${JSON.stringify(models)}`);
    assert.ok(
      models.some((m) => /\d,\d\d\s₽|₽\s?\d[\d\s]*,\d\d/.test(m)),
      `no ru price in ${JSON.stringify(models)}`,
    );
    assert.ok(!models.some((m) => /\d\.\d\d\s?₽|₽\s?\d+\.\d\d/.test(m)), `an English-formatted price in ${JSON.stringify(models)}`);
    assertNoEnglish('the model picker', models);
    await typeInQuickInput(page, 'aurora-1');
    await waitForFilteredQuickItems(page, 'aurora-1');
    await take();
    await pickQuickItem(page, 'aurora-1', 30_000);
    await page
      .locator(`.quick-input-widget .quick-input-box input[placeholder*="${t('A lighthouse on a cliff at dawn, watercolour').slice(0, 10)}"]`)
      .waitFor({ timeout: 15_000 });
    await page.locator('.quick-input-widget .quick-input-box input').fill('Маяк на рассвете');
    await take();
    await page.keyboard.press('Enter');
    const send = (t('Send (reserve {0})', '').split('(')[0] ?? '').trim();
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: send }).first().waitFor({ timeout: 15_000 });
    await take();
    const review = await quickTexts(page);
    assertNoEnglish('the review step', review);
    // The style is a row of the review, in Russian, set to "No style".
    assert.ok(
      review.some((text) => text.includes(t('Style')) && text.includes(t('No style'))),
      JSON.stringify(review),
    );
    await pickQuickItem(page, new RegExp(`^${send}`));
    const saved = t('Saved {0} image to {1}. Cost {2}, balance {3}.', 1, 'generated-images', '', '').split(',')[0]!;
    await waitFor(() => fs.existsSync(dir) && fs.readdirSync(dir).length > filesBefore.length, 30_000, 'the generated file');
    const texts = await waitForNotification(opened(), saved, 30_000);
    assertNoEnglish('the result message', texts);
    if ((await readToasts(page)).some((text) => text.includes(saved))) {
      await waitForToastButtons(page, saved);
      await take();
    }
    saveAnimation('generate-ru.png', frames);
    assert.strictEqual(fs.readdirSync(dir).length, filesBefore.length + 1);
  });

  it('the whole studio is Russian', async () => {
    await prepareTest(opened(), { key: 'budget' });
    const { page } = opened();
    await openCommandPalette(page);
    await typeInQuickInput(page, `>${title('command.openStudio.title')}`);
    await pickQuickItem(page, title('command.openStudio.title'));
    const frame = await webviewFrame(page, ru['Image Studio'], 30_000);
    await frame.locator('#model option[value="aurora-1"]').waitFor({ state: 'attached', timeout: 30_000 });
    if ((await resultCount(frame)) === 0) {
      // A result in the gallery, made here: the picture shows the studio as people use it.
      await frame.locator('#model').selectOption('aurora-1');
      await generateFrom(frame, 'Маяк на рассвете');
    }
    await frame.locator('#gallery li.card').first().waitFor({ state: 'attached', timeout: 30_000 });
    // Rendered and evaluated: the page is no longer busy and its status line has the evaluation's text.
    await frame.locator('#app:not([aria-busy])').waitFor({ state: 'attached', timeout: 15_000 });
    await frame.waitForFunction(
      () =>
        (
          (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById('status')
            ?.textContent ?? ''
        ).trim().length > 0,
      undefined,
      { timeout: 15_000 },
    );
    const body = await frame.locator('body').innerText();
    const attributes = await frame
      .locator('[title], [placeholder], [aria-label]')
      .evaluateAll((els: { getAttribute(n: string): string | null }[]) =>
        els.flatMap((e) => ['title', 'placeholder', 'aria-label'].map((n) => e.getAttribute(n) ?? '')),
      );
    assert.match(body, /[а-яё]{4}/i);
    assertNoEnglish('the studio', [body, ...attributes]);
    await page.keyboard.press('Escape');
    for (const target of pictureTargets('studio-ru.png')) await page.locator('.part.editor').screenshot({ path: target });
  });
});
