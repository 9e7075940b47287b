// The Getting Started walkthrough clicked through as a person: it is opened from the palette, and
// each step is completed by really doing it — the key through the step's own Set API Key button,
// an image through its Generate Image button, an edit from the explorer's context menu, the account
// menu from a click on the status bar item. After each action the walkthrough's checkbox for that
// step (and only that one) turns checked in the DOM. Each test opens the walkthrough itself and
// judges its step against the states it found, so any test runs alone.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { setTimeout as sleep } from 'timers/promises';
import type { Locator, Page } from 'playwright-core';
import { readManifest, REPO_ROOT } from '../harness/paths';
import {
  clickQuickItem,
  chooseFromExplorerMenu,
  extensionId,
  pickQuickItem,
  prepareTest,
  runCommand,
  screenshot,
  type TestState,
  typeInQuickInput,
  waitFor,
  waitForNotification,
  waitForQuickItems,
} from './workbench';
import { useWorkbench } from './useWorkbench';
import { imagesIn } from './workspaceFiles';
const nls = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.nls.json'), 'utf8')) as Record<string, string>;

interface WalkthroughStep {
  id: string;
  completionEvents?: string[];
}
const walkthrough =
  (readManifest() as unknown as { contributes: { walkthroughs: { id: string; steps: WalkthroughStep[] }[] } }).contributes.walkthroughs[0] ??
  assert.fail('package.json contributes no walkthrough');
const STEPS = ['connect', 'generate', 'edit', 'statusBar', 'styles'] as const;
type Step = (typeof STEPS)[number];
type States = Record<Step, boolean>;

/** VS Code's id of a walkthrough step: `<extension id>#<walkthrough id>#<step id>`. */
const fullStepId = (step: Step) => `${extensionId()}#${walkthrough.id}#${step}`;
const stepTitle = (step: Step) => nls[`walkthrough.gettingStarted.${step}.title`];

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
  let last: States | undefined;
  await waitFor(
    async () => {
      last = await stepStates(page);
      return JSON.stringify(last) === JSON.stringify(expected);
    },
    timeoutMs,
    () => `the walkthrough to show ${JSON.stringify(expected)}; it shows ${JSON.stringify(last)}`,
  );
}

/** Opens our walkthrough from the palette, or brings its editor to the front when it is open. */
async function showWalkthrough(page: Page): Promise<void> {
  if (await stepButton(page, 'connect').isVisible()) return;
  const tab = page.locator('.tabs-container .tab', { has: page.locator('.label-name', { hasText: /Walkthrough: Gateway Images/ }) }).first();
  if (await tab.isVisible()) await tab.click();
  else {
    await runCommand(page, 'Welcome: Open Walkthrough...');
    const title = nls['walkthrough.gettingStarted.title'] ?? assert.fail('package.nls.json has no walkthrough.gettingStarted.title');
    await typeInQuickInput(page, title);
    await pickQuickItem(page, title, 15_000);
  }
  await stepButton(page, 'connect').waitFor({ state: 'visible', timeout: 15_000 });
  // Opening ends with the walkthrough focusing its selected step (on a timer of its own): until then
  // that focus can come at any moment and close whatever the test opens meanwhile (a context menu).
  await waitFor(() => focusWithin(page, '.gettingStartedContainer .getting-started-step.expanded'), 15_000, 'the walkthrough to focus its selected step');
}

interface FocusDocument {
  document: { activeElement: { closest(selector: string): unknown } | null };
}

/** Whether the page's focused element is inside an element that matches `selector`. */
function focusWithin(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((inside) => !!(globalThis as unknown as FocusDocument).document.activeElement?.closest(inside), selector);
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
  // The walkthrough focuses its step on a timer of its own; on a loaded machine that can come after
  // the box opened, and the Enter then goes to the step while the box (ignoreFocusOut) stays open with
  // the text (seen in CI). Then, as a person would, Enter again, in the box only: once the box has
  // stayed open with the text and the focus in the step for a second (a box that took its Enter closes),
  // and only while the box itself has the focus, so that no Enter reaches the step's own buttons.
  const until = Date.now() + 30_000;
  let lostSince: number | undefined;
  for (;;) {
    if (!(await input.isVisible())) return;
    if (Date.now() >= until) throw new Error(`the input box "${placeholder}" did not take its Enter in 30 s`);
    const lost = (await input.inputValue().catch(() => '')) === text && (await focusWithin(page, '.gettingStartedContainer .getting-started-step'));
    if (!lost) lostSince = undefined;
    else if (lostSince === undefined) lostSince = Date.now();
    else if (Date.now() - lostSince >= 1_000) {
      lostSince = undefined;
      await input.focus({ timeout: 2_000 }).catch(() => undefined);
      if (await input.evaluate((el) => el === el.ownerDocument.activeElement).catch(() => false)) await page.keyboard.press('Enter');
    }
    await sleep(200);
  }
}

describe('Getting Started walkthrough, clicked through (e2e)', () => {
  const opened = useWorkbench({ settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 } });
  const none: States = { connect: false, generate: false, edit: false, statusBar: false, styles: false };

  /** The test's state, with the walkthrough open (its editor stays between tests), and the steps' states then. */
  async function prepare(state: TestState): Promise<States> {
    await prepareTest(opened(), { ...state, keepEditors: true });
    await showWalkthrough(opened().page);
    // A key completes the connect step (a context key set after the key is saved): the test starts
    // once that has happened, so the states it is judged against do not change under it.
    if (state.key !== null) await waitFor(async () => (await stepStates(opened().page)).connect, 20_000, 'the key to complete the connect step');
    return stepStates(opened().page);
  }

  /** Runs a step's real action and checks that this step, and only it, turns checked. */
  async function completes(step: Step, before: States, action: () => Promise<void>, alsoDone: Step[] = []): Promise<void> {
    assert.strictEqual(before[step], false, `the ${step} step was done before the test did it`);
    await action();
    await showWalkthrough(opened().page);
    await waitForStates(opened().page, { ...before, [step]: true, ...Object.fromEntries(alsoDone.map((s) => [s, true])) });
  }

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
        ['styles', ['onContext:gatewayImages.styledOnce']],
      ],
    );
  });

  // Mocha runs a file's tests in the order written, whatever --grep keeps: the window is new here.
  it('opens from the palette in a new window with no step completed', async () => {
    const before = await prepare({ key: null });
    for (const step of STEPS) assert.ok(await stepButton(opened().page, step).isVisible(), `step ${stepTitle(step)} is not shown`);
    assert.deepStrictEqual(before, none);
  });

  it("connect: the step's Set API Key button, then the key", async () => {
    const before = await prepare({ key: null });
    const { page, emulator } = opened();
    await completes('connect', before, async () => {
      await clickStepButton(page, 'connect', 'Set API Key');
      await answerInputBox(page, 'Paste your API key', emulator.keys.unlimited);
      await waitForNotification(opened(), 'API key saved', 20_000);
    });
  });

  it("generate: the step's Generate Image button, model, prompt, send", async () => {
    const before = await prepare({ key: 'unlimited' });
    const { page, workspace } = opened();
    const dir = path.join(workspace, 'generated-images');
    const filesBefore = imagesIn(dir);
    await completes('generate', before, async () => {
      await clickStepButton(page, 'generate', 'Generate Image');
      // No styles file: the model is the first step (issue 42). The first picker of a command run
      // from the walkthrough can lose the focus to the step while it opens: a click reaches the row.
      await clickQuickItem(page, 'sketch-mini', 30_000);
      await answerInputBox(page, 'A lighthouse on a cliff', 'A first image');
      // Clicked too: the step can take the focus later on a loaded machine (an Enter went to it, seen
      // in a run with three lanes: the review stayed open with Send active).
      await clickQuickItem(page, /Send \(reserve/, 15_000);
      await waitFor(() => imagesIn(dir).length === filesBefore.length + 1, 30_000, 'the generated file');
      await waitForNotification(opened(), /Saved 1 image to generated-images/, 30_000);
    });
  });

  it('edit: right-click an image in the explorer, Edit Image with AI…', async () => {
    const before = await prepare({ key: 'unlimited' });
    const { page, workspace } = opened();
    const folder = path.join(workspace, 'images');
    const filesBefore = imagesIn(folder);
    await completes('edit', before, async () => {
      await chooseFromExplorerMenu(opened(), path.join(folder, 'sample.png'), 'Edit Image with AI…');
      await typeInQuickInput(page, 'aurora-1');
      await clickQuickItem(page, 'aurora-1', 30_000);
      await answerInputBox(page, 'What should change', 'Make the sky stormy');
      await clickQuickItem(page, /Send \(reserve/, 15_000);
      await waitFor(() => imagesIn(folder).length === filesBefore.length + 1, 30_000, 'the edited file');
      await waitForNotification(opened(), /Saved 1 image to images/, 30_000);
    });
  });

  it('status bar: a click on the balance opens the account menu', async () => {
    const before = await prepare({ key: 'unlimited' });
    const { page } = opened();
    await completes('statusBar', before, async () => {
      await page.locator(`#workbench\\.parts\\.statusbar .statusbar-item[id$="${readManifest().name}.status"] a`).first().click();
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Refresh Balance' }).first().waitFor({ state: 'visible', timeout: 15_000 });
      await page.keyboard.press('Escape');
    });
    await screenshot(page, 'walkthrough-completed');
  });

  it("styles: a styles file in the workspace, the step's Generate with a Style button, the style, model, prompt, send", async () => {
    const before = await prepare({ key: 'unlimited' });
    const { page, workspace } = opened();
    const styles = path.join(workspace, '.gateway-images', 'styles.json');
    fs.mkdirSync(path.dirname(styles), { recursive: true });
    fs.writeFileSync(styles, JSON.stringify({ styles: { walkthrough: { model: 'sketch-mini', promptSuffix: ', pencil sketch', outputFolder: 'styled' } } }));
    const dir = path.join(workspace, 'styled');
    try {
      // A styled image is also a generated one: that step completes too when it was still open.
      await completes(
        'styles',
        before,
        async () => {
          await clickStepButton(page, 'styles', 'Generate with a Style');
          await clickQuickItem(page, 'walkthrough', 30_000);
          // The model step by its own rows: the style's row names sketch-mini too, and an Enter that
          // reached the closing style step (or the model step before its catalog) would be lost.
          await waitForQuickItems(page, (items) => items.some((i) => i.label === 'sketch-mini'), 'the model step', 30_000);
          await clickQuickItem(page, 'sketch-mini', 30_000);
          await answerInputBox(page, 'A lighthouse on a cliff', 'A styled image');
          await clickQuickItem(page, /Send \(reserve/, 15_000);
          await waitFor(() => imagesIn(dir).length === 1, 30_000, "the file in the style's folder");
          await waitForNotification(opened(), /Saved 1 image to styled/, 30_000);
        },
        ['generate'],
      );
    } finally {
      // The other steps' pickers must not meet a Style step.
      fs.rmSync(path.dirname(styles), { recursive: true, force: true });
    }
  });

  it("the steps' own buttons keep their pickers open (the walkthrough focuses its step after the command)", async () => {
    await prepare({ key: 'unlimited' });
    const { page } = opened();
    const stays = async (what: string, row: string) => {
      const list = page.locator('.quick-input-widget .monaco-list-row', { hasText: row }).first();
      await list.waitFor({ state: 'visible', timeout: 15_000 });
      // The walkthrough takes the focus back to its step's button as the command starts; on a busy
      // machine the picker opens only after that and keeps the focus. The picker must survive losing
      // the focus (ignoreFocusOut) either way, so the test gives the focus to the step's button itself.
      await page.locator('.gettingStartedContainer .getting-started-step.expanded').getByRole('button', { name: what, exact: true }).first().focus();
      await waitFor(async () => !(await focusWithin(page, '.quick-input-widget')), 15_000, `${what}: the focus to leave the picker`);
      // The quick input hides in a task after the blur (its focus tracker): two tasks later it has, or never will.
      for (let i = 0; i < 2; i++) await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
      assert.ok(await list.isVisible(), `${what}: the picker closed when it lost the focus`);
      await opened().command('workbench.action.closeQuickOpen');
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 });
    };
    await clickStepButton(page, 'statusBar', 'Open the Account Menu');
    await stays('Open the Account Menu', 'Refresh Balance');
    await clickStepButton(page, 'generate', 'Generate Image');
    // Its first picker is the model's: no Style step without a styles file (issue 42).
    await stays('Generate Image', 'sketch-mini');
  });
});
