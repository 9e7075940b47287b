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

/**
 * A second window of the same workbench: the same folder, its own extension host, opened on `file`
 * (the workbench URL's `openFile`, as a window opened on a file has it). In slowed CI runs the second
 * window's Quick Open listed nothing for the file for 45 s, by its name and by its absolute path alike,
 * while that window was still busy with its start; a window that opens with the file needs no search.
 */
async function openSecondWindow(opened: OpenedWorkbench, file: string): Promise<Page> {
  const url = new URL(opened.page.url());
  const payload = JSON.parse(url.searchParams.get('payload') ?? '[]') as [string, string][];
  payload.push(['openFile', `vscode-remote://${url.host}${file}`]);
  url.searchParams.set('payload', JSON.stringify(payload));
  const page = await opened.workbench.context.newPage();
  await page.goto(url.toString(), { waitUntil: 'domcontentloaded', timeout: 60_000 });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
  // Its extension host has activated ours once its status bar item shows the account.
  await page.locator('[id$="gateway-images.status"]').first().waitFor({ state: 'visible', timeout: 90_000 });
  await page.bringToFront();
  // The file's tab, active: the command below takes the active editor's file.
  const tab = page.locator('.tabs-container .tab.active', { hasText: path.basename(file) });
  await tab.waitFor({ state: 'visible', timeout: 60_000 }).catch(async (error: Error) => {
    await page.screenshot({ path: path.join(RESULTS_DIR, 'e2e', 'two-windows-second-window.png') }).catch(() => undefined);
    throw new Error(`the second window did not show ${path.basename(file)} (test-results/e2e/two-windows-second-window.png): ${error.message}`);
  });
  return page;
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
    second = await openSecondWindow(opened(), file);
    const paid = () => emulator.state.requests.filter((r) => r.paid && r.prompt?.startsWith('two windows')).length;
    // The first window runs the file by arguments, the gateway holding each line 25 s: its run must
    // still hold the claim when the second window's start comes, after Quick Open and the palette,
    // which took longer than the whole run (1.5 s a line) in a loaded CI run.
    emulator.state.armFault({ fault: 'latency', latencyMs: 25_000, times: -1 });
    const run = opened().command<{ done: number }>('gatewayImages.generateFromFile', { file, concurrency: 2 });
    await waitFor(() => paid() > 0, 20_000, 'the first window to send a line');

    // The second window, from its palette, on the same file (its active editor): refused at once.
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
