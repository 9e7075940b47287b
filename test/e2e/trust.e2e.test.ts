// Workspace Trust on, as a person meets it: the folder opens untrusted (Restricted Mode), its
// outputDirectory setting is ignored and images go to the default folder; after the person trusts
// the workspace (Manage Workspace Trust > Trust), the workspace value applies again.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { FIXTURE_WORKSPACE } from '../harness/paths';
import {
  captureOnFailure,
  openWorkbench,
  type OpenedWorkbench,
  pickQuickItem,
  runCommand,
  typeInQuickInput,
  readStatusBar,
  waitForNotification,
} from './workbench';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const images = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.png')) : []);

async function waitForImages(dir: string, count: number): Promise<void> {
  const until = Date.now() + 30_000;
  while (images(dir).length < count) {
    assert.ok(Date.now() < until, `${dir} has ${images(dir).length} image(s), expected ${count}`);
    await sleep(200);
  }
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
  let opened: OpenedWorkbench | undefined;
  let workspace: string;

  before(async () => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-trust-'));
    fs.cpSync(FIXTURE_WORKSPACE, workspace, { recursive: true });
    fs.mkdirSync(path.join(workspace, '.vscode'));
    fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'gatewayImages.outputDirectory': 'from-workspace' }));
    opened = await openWorkbench({
      workspace,
      workspaceTrust: true,
      settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 },
    });
  });

  after(async () => {
    await opened?.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  afterEach(async function () {
    await captureOnFailure(this, opened);
  });

  it('untrusted: the workspace outputDirectory is ignored, images go to generated-images', async () => {
    const { page, emulator } = opened!;
    await runCommand(page, 'Gateway Images: Set API Key');
    await typeInQuickInput(page, emulator.keys.unlimited, { submit: true });
    await waitForNotification(page, 'API key saved', 20_000);
    await generate(page, 'Restricted mode');
    await waitForImages(path.join(workspace, 'generated-images'), 1);
    assert.deepStrictEqual(images(path.join(workspace, 'from-workspace')), []);
  });

  it('after Trust, the workspace outputDirectory applies again', async () => {
    const { page } = opened!;
    await runCommand(page, 'Workspaces: Manage Workspace Trust');
    const trust = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
    await trust.click({ timeout: 15_000 });
    await page
      .locator('.workspace-trust-editor .workspace-trust-header', { hasText: /trusted/i })
      .first()
      .waitFor({ timeout: 15_000 })
      .catch(() => undefined);
    // Trusted once the workbench drops its Restricted Mode indicator (the extension host is told at the same time).
    const until = Date.now() + 15_000;
    while ((await readStatusBar(page, 'Restricted Mode')).length > 0) {
      assert.ok(Date.now() < until, 'Restricted Mode is still shown');
      await sleep(200);
    }
    await generate(page, 'Trusted now');
    await waitForImages(path.join(workspace, 'from-workspace'), 1);
    assert.strictEqual(images(path.join(workspace, 'generated-images')).length, 1);
  });
});
