// Workspace Trust on, as a person meets it: the folder opens untrusted (Restricted Mode), its
// outputDirectory setting is ignored and images go to the default folder; after the person trusts
// the workspace (Manage Workspace Trust > Trust), the workspace value applies again.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { FIXTURE_WORKSPACE } from '../harness/paths';
import { pickQuickItem, prepareTest, readStatusBar, runCommand, typeInQuickInput, waitFor } from './workbench';
import { useWorkbench } from './useWorkbench';

const images = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.png')) : []);

/** Waits for one more image in `dir` than `before` lists, and returns the new one. */
async function waitForNewImage(dir: string, before: string[]): Promise<string> {
  return waitFor(() => images(dir).find((n) => !before.includes(n)), 30_000, `a new image in ${dir}`);
}

async function generate(page: Page, prompt: string): Promise<void> {
  await runCommand(page, 'Gateway Images: Generate Image');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'sketch-mini' }).first().waitFor({ timeout: 30_000 });
  await typeInQuickInput(page, 'sketch-mini');
  await pickQuickItem(page, 'sketch-mini', 30_000);
  await page.locator('.quick-input-widget .quick-input-box input[placeholder*="A lighthouse on a cliff"]').waitFor({ timeout: 15_000 });
  await typeInQuickInput(page, prompt, { submit: true });
  await pickQuickItem(page, /Send \(reserve/, 15_000);
}

describe('Workspace Trust (e2e)', () => {
  let workspace: string;

  before(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-trust-'));
    fs.cpSync(FIXTURE_WORKSPACE, workspace, { recursive: true });
    fs.mkdirSync(path.join(workspace, '.vscode'));
    fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'gatewayImages.outputDirectory': 'from-workspace' }));
  });
  const opened = useWorkbench(() => ({
    workspace,
    workspaceTrust: true,
    settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 },
  }));
  // After the window has closed (useWorkbench's after hook, registered first).
  after(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  // The window opens untrusted, and only the next test trusts it (a file's tests run in the order
  // written, whatever --grep keeps): this test finds the workspace untrusted.
  it('untrusted: the workspace outputDirectory is ignored, images go to generated-images', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    assert.ok((await readStatusBar(page, 'Restricted Mode')).length > 0, 'the window is not in Restricted Mode');
    const before = images(path.join(workspace, 'generated-images'));
    await generate(page, 'Restricted mode');
    await waitForNewImage(path.join(workspace, 'generated-images'), before);
    assert.deepStrictEqual(images(path.join(workspace, 'from-workspace')), []);
  });

  it('after Trust, the workspace outputDirectory applies again', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    const before = images(path.join(workspace, 'generated-images'));
    await runCommand(page, 'Workspaces: Manage Workspace Trust');
    const trust = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
    await trust.click({ timeout: 15_000 });
    // Trusted once the workbench drops its Restricted Mode indicator (the extension host is told at the same time).
    await waitFor(async () => (await readStatusBar(page, 'Restricted Mode')).length === 0, 15_000, 'Restricted Mode to end');
    await generate(page, 'Trusted now');
    await waitForNewImage(path.join(workspace, 'from-workspace'), []);
    assert.deepStrictEqual(images(path.join(workspace, 'generated-images')), before);
  });
});
