// The Getting Started walkthrough clicked through as a person: it is opened from the palette, and
// each step is completed by really doing it — the key through the step's own Set API Key button,
// an image through its Generate Image button, an edit from the explorer's context menu, the account
// menu from a click on the status bar item. After each action the walkthrough's checkbox for that
// step (and only that one) shows checked in the DOM.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Locator, Page } from 'playwright-core';
import { readManifest, REPO_ROOT } from '../harness/paths';
import {
  captureOnFailure,
  extensionId,
  openWorkbench,
  type OpenedWorkbench,
  pickQuickItem,
  runCommand,
  screenshot,
  typeInQuickInput,
  waitForNotification,
} from './workbench';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nls = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.nls.json'), 'utf8')) as Record<string, string>;

interface WalkthroughStep {
  id: string;
  completionEvents?: string[];
}
const walkthrough =
  (readManifest() as unknown as { contributes: { walkthroughs: { id: string; steps: WalkthroughStep[] }[] } }).contributes.walkthroughs[0] ??
  assert.fail('package.json contributes no walkthrough');
const STEPS = ['connect', 'generate', 'edit', 'statusBar'] as const;
type Step = (typeof STEPS)[number];
type States = Record<Step, boolean>;

/** VS Code's id of a walkthrough step: `<extension id>#<walkthrough id>#<step id>`. */
const fullStepId = (step: Step) => `${extensionId()}#${walkthrough.id}#${step}`;
const stepTitle = (step: Step) => nls[`walkthrough.gettingStarted.${step}.title`];

function images(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((n) => /\.(png|jpe?g|webp)$/i.test(n))
        .sort()
    : [];
}

/** The step's button in the open walkthrough (it expands the step when clicked). */
function stepButton(page: Page, step: Step): Locator {
  return page.locator(`.gettingStartedContainer .getting-started-step[data-step-id="${fullStepId(step)}"]`);
}

/** Each step's checkbox as the walkthrough renders it: `aria-checked` of `[data-done-step-id]`. */
async function stepStates(page: Page): Promise<States> {
  const states = {} as States;
  for (const step of STEPS) {
    const box = page.locator(`.gettingStartedContainer [data-done-step-id="${fullStepId(step)}"]`).first();
    states[step] = (await box.getAttribute('aria-checked', { timeout: 5000 })) === 'true';
  }
  return states;
}

async function waitForStates(page: Page, expected: States, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const states = await stepStates(page);
    if (JSON.stringify(states) === JSON.stringify(expected)) return;
    if (Date.now() > until) throw new Error(`walkthrough shows ${JSON.stringify(states)}, expected ${JSON.stringify(expected)}`);
    await sleep(200);
  }
}

/** Brings the walkthrough's editor back to the front (it stays open in its tab). */
async function showWalkthrough(page: Page): Promise<void> {
  const container = page.locator('.gettingStartedContainer');
  if (!(await container.isVisible())) {
    await page
      .locator('.tabs-container .tab', { has: page.locator('.label-name', { hasText: /Welcome|Walkthrough|Gateway Images/ }) })
      .first()
      .click();
  }
  await stepButton(page, 'connect').waitFor({ state: 'visible', timeout: 15_000 });
}

/** Expands a step and clicks the command button in its description. */
async function clickStepButton(page: Page, step: Step, label: string): Promise<void> {
  await showWalkthrough(page);
  const button = stepButton(page, step);
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
  await page
    .locator('.gettingStartedContainer .getting-started-step.expanded')
    .getByRole('button', { name: label, exact: true })
    .first()
    .click({ timeout: 10_000 });
}

/** Waits until the quick input with this placeholder is open, then types into it. */
async function answerInputBox(page: Page, placeholder: string, text: string): Promise<void> {
  const input = page.locator(`.quick-input-widget .quick-input-box input[placeholder*="${placeholder}"]`);
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(text);
  await input.press('Enter');
}

describe('Getting Started walkthrough, clicked through (e2e)', () => {
  let opened: OpenedWorkbench | undefined;
  const none: States = { connect: false, generate: false, edit: false, statusBar: false };

  before(async () => {
    opened = await openWorkbench({ settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 } });
  });

  after(async () => {
    await opened?.close();
  });

  afterEach(async function () {
    await captureOnFailure(this, opened);
  });

  it('completes each step only through the real action (package.json completionEvents)', () => {
    // The steps must not complete on a click of their own button (onCommand) or on opening them
    // (onStepSelected): each waits for a context key the extension sets after the real thing.
    assert.deepStrictEqual(
      walkthrough.steps.map((s) => [s.id, s.completionEvents]),
      [
        ['connect', ['onContext:gatewayImages.hasKey']],
        ['generate', ['onContext:gatewayImages.generatedOnce']],
        ['edit', ['onContext:gatewayImages.editedOnce']],
        ['statusBar', ['onContext:gatewayImages.statusBarSeen']],
      ],
    );
  });

  it('opens from the palette with no step completed', async () => {
    const { page } = opened!;
    await runCommand(page, 'Welcome: Open Walkthrough...');
    const title = nls['walkthrough.gettingStarted.title'] ?? assert.fail('package.nls.json has no walkthrough.gettingStarted.title');
    await typeInQuickInput(page, title);
    await pickQuickItem(page, title, 15_000);
    await showWalkthrough(page);
    for (const step of STEPS) assert.ok(await stepButton(page, step).isVisible(), `step ${stepTitle(step)} is not shown`);
    await waitForStates(page, none);
  });

  it("connect: the step's Set API Key button, then the key", async () => {
    const { page, emulator } = opened!;
    await clickStepButton(page, 'connect', 'Set API Key');
    await answerInputBox(page, 'Paste your API key', emulator.keys.unlimited);
    await waitForNotification(page, 'API key saved', 20_000);
    await showWalkthrough(page);
    await waitForStates(page, { ...none, connect: true });
  });

  it("generate: the step's Generate Image button, model, prompt, send", async () => {
    const { page, workspace } = opened!;
    await clickStepButton(page, 'generate', 'Generate Image');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'sketch-mini' }).first().waitFor({ timeout: 30_000 });
    await typeInQuickInput(page, 'sketch-mini');
    await pickQuickItem(page, 'sketch-mini', 30_000);
    await answerInputBox(page, 'A lighthouse on a cliff', 'A first image');
    await pickQuickItem(page, /Send \(reserve/, 15_000);
    await waitForNotification(page, /Saved 1 image to generated-images/, 30_000);
    assert.strictEqual(images(path.join(workspace, 'generated-images')).length, 1);
    await showWalkthrough(page);
    await waitForStates(page, { ...none, connect: true, generate: true });
  });

  it('edit: right-click an image in the explorer, Edit Image with AI…', async () => {
    const { page, workspace } = opened!;
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
    await answerInputBox(page, 'What should change', 'Make the sky stormy');
    await pickQuickItem(page, /Send \(reserve/);
    await waitForNotification(page, /Saved 1 image to images/, 30_000);
    assert.ok(fs.existsSync(path.join(workspace, 'images', 'sample.edit-1.png')));
    await showWalkthrough(page);
    await waitForStates(page, { connect: true, generate: true, edit: true, statusBar: false });
  });

  it('status bar: a click on the balance opens the account menu', async () => {
    const { page } = opened!;
    await page.locator(`#workbench\\.parts\\.statusbar .statusbar-item[id$="${readManifest().name}.status"] a`).first().click();
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Refresh Balance' }).first().waitFor({ state: 'visible', timeout: 15_000 });
    await page.keyboard.press('Escape');
    await showWalkthrough(page);
    await waitForStates(page, { connect: true, generate: true, edit: true, statusBar: true });
    await screenshot(page, 'walkthrough-completed');
  });

  it("the steps' own buttons keep their pickers open (the walkthrough focuses its step after the command)", async () => {
    const { page } = opened!;
    const stays = async (what: string, row: string) => {
      const list = page.locator('.quick-input-widget .monaco-list-row', { hasText: row }).first();
      await list.waitFor({ state: 'visible', timeout: 15_000 });
      await sleep(1500);
      assert.ok(await list.isVisible(), `${what}: the picker closed by itself`);
      await page.keyboard.press('Escape');
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 });
    };
    await clickStepButton(page, 'statusBar', 'Open the Account Menu');
    await stays('Open the Account Menu', 'Refresh Balance');
    await clickStepButton(page, 'generate', 'Generate Image');
    await stays('Generate Image', 'sketch-mini');
  });
});
