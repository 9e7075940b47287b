// Two windows of one workspace in the real workbench: two extension hosts on one account, one prompt
// file and one results journal. The first window runs the file; the second starts it from its palette
// meanwhile and is refused at once, naming the run; once the run ended, the second window finds every
// line done in the journal the first one wrote, and sends nothing.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { type OpenedWorkbench, prepareTest, runCommand, waitFor, waitForNotification } from './workbench';
import { useWorkbench } from './useWorkbench';
import { RESULTS_DIR } from '../harness/paths';

/** A second window of the same workbench: the same folder, its own extension host. */
async function openSecondWindow(opened: OpenedWorkbench): Promise<Page> {
  const page = await opened.workbench.context.newPage();
  await page.goto(opened.page.url(), { waitUntil: 'domcontentloaded', timeout: 60_000 });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
  // Its extension host has activated ours once its status bar item shows the account.
  await page.locator('[id$="gateway-images.status"]').first().waitFor({ state: 'visible', timeout: 90_000 });
  await page.bringToFront();
  return page;
}

/**
 * Opens a workspace file in the window by Quick Open, typing its absolute path, as a person may. With
 * the name alone, Quick Open lists files found by the workspace's file search, which in a new window
 * listed nothing for this file for 45 s in two CI runs (one idle); a path that exists is listed from a
 * stat of it, with no search. The new window restores the editors the workspace had, and one still
 * loading (a studio revived by its serializer) may take a key or the focus: Quick Open then does not
 * show, or closes again. So each attempt presses Ctrl+P once and waits for the file's tab; the next
 * attempt gives the workbench the focus first. Never a second Ctrl+P while the first may still be
 * opening: on a busy machine the workbench handled the second after Quick Open showed, as "next
 * item", and Ctrl's release then opened that item and closed Quick Open under the typing.
 */
async function quickOpen(page: Page, file: string): Promise<void> {
  const name = path.basename(file);
  const box = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first();
  const tab = page.locator('.tabs-container .tab.active', { hasText: name });
  const shows = (locator: typeof box, timeout: number) =>
    locator.waitFor({ state: 'visible', timeout }).then(
      () => true,
      () => false,
    );
  const seen: string[] = [];
  for (let attempt = 1; ; attempt++) {
    if (!(await box.isVisible())) await page.keyboard.press('Control+P');
    if (!(await shows(box, 20_000))) seen.push(`attempt ${attempt}: Quick Open did not show`);
    else if (
      !(await box.fill(file).then(
        () => shows(row, 15_000),
        () => false,
      ))
    ) {
      const rows = await page
        .locator('.quick-input-widget .monaco-list-row')
        .allInnerTexts()
        .catch(() => []);
      seen.push(`attempt ${attempt}: no row for ${name} (rows: ${rows.map((r) => JSON.stringify(r.replace(/\s+/g, ' '))).join(', ') || 'none'})`);
    } else {
      await page.keyboard.press('Enter');
      if (await shows(tab, 10_000)) return;
      seen.push(`attempt ${attempt}: Enter opened no tab of ${name}`);
    }
    if (attempt === 3) {
      await page.screenshot({ path: path.join(RESULTS_DIR, 'e2e', 'two-windows-second-window.png') }).catch(() => undefined);
      throw new Error(`Quick Open did not open ${name} in the second window (test-results/e2e/two-windows-second-window.png): ${seen.join('; ')}`);
    }
    await page.keyboard.press('Escape');
    await page
      .locator('.part.statusbar')
      .click({ position: { x: 5, y: 5 } })
      .catch(() => undefined);
  }
}

describe('Two windows of one workspace (e2e)', () => {
  let second: Page | undefined;

  // Before useWorkbench's after hook (mocha runs a suite's after hooks in the order registered).
  after(async () => {
    await second?.close().catch(() => undefined);
  });
  const opened = useWorkbench('shared');

  it('a prompt file run in one window is refused in the other at once, naming it; afterwards the other finds every line done and pays nothing', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { emulator, workspace } = opened();
    const file = path.join(workspace, 'shared-prompts.jsonl');
    const lines = Array.from({ length: 6 }, (_, i) => JSON.stringify({ prompt: `two windows ${i + 1}`, model: 'aurora-1', size: '64x64' }));
    fs.writeFileSync(file, lines.join('\n'));
    second = await openSecondWindow(opened());
    const paid = () => emulator.state.requests.filter((r) => r.paid && r.prompt?.startsWith('two windows')).length;
    // The first window runs the file by arguments, the gateway holding each line 25 s: its run must
    // still hold the claim when the second window's start comes, after Quick Open and the palette,
    // which took longer than the whole run (1.5 s a line) in a loaded CI run.
    emulator.state.armFault({ fault: 'latency', latencyMs: 25_000, times: -1 });
    const run = opened().command<{ done: number }>('gatewayImages.generateFromFile', { file, concurrency: 2 });
    await waitFor(() => paid() > 0, 20_000, 'the first window to send a line');

    // The second window, from its palette, on the same file: refused at once.
    await quickOpen(second, file);
    await runCommand(second, 'Gateway Images: Generate Images from File');
    const refusal = (await waitForNotification({ page: second }, /shared-prompts\.jsonl is already being run/, 20_000)).find((t) =>
      t.includes('already being run'),
    )!;
    assert.match(refusal, /in the window of "workspace", by a command with arguments/);
    assert.match(refusal, /Nothing was sent by this start/);
    // The lines not sent yet go at once.
    emulator.state.clearFaults();
    const result = await run;
    emulator.state.clearFaults();
    assert.strictEqual(result.done, 6);
    assert.strictEqual(paid(), 6, 'each line paid once');

    // Run again in the second window: its journal is the one the first window wrote.
    await runCommand(second, 'Gateway Images: Generate Images from File');
    await waitForNotification({ page: second }, /All 6 lines of shared-prompts\.jsonl already have results; nothing was sent/, 20_000);
    assert.strictEqual(paid(), 6, 'nothing paid again');
    console.log(
      `      two windows: the second refused ("${refusal.slice(0, 100)}…"); 6 lines, ${paid()} paid; the rerun in the second window found all 6 done`,
    );
  });
});
