// Workspace Trust on, the folder untrusted (runIntegration --workspace-trust): the extension runs
// in its declared limited mode. Each restricted setting's workspace value is ignored; generation
// and editing still work into the default folder and names. Runs only in that run.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  EXTENSION_ID,
  assertUserSpendingLimitsHold,
  closeAllEditors,
  paidRequests,
  prepareSuite,
  rejectionOf,
  waitUntil,
  WORKSPACE_LIMITS,
  workspaceRoot,
} from './support';

interface Result {
  files: vscode.Uri[];
}

describe('Untrusted workspace (Workspace Trust on)', function () {
  this.timeout(60_000);
  const config = () => vscode.workspace.getConfiguration('gatewayImages');
  const settingsFile = () => path.join(workspaceRoot(), '.vscode', 'settings.json');

  before(async function () {
    if (process.env.GATEWAY_IMAGES_TEST_TRUST !== 'untrusted') this.skip();
    await prepareSuite();
  });

  afterEach(async () => {
    await closeAllEditors();
    fs.rmSync(path.join(workspaceRoot(), '.vscode'), { recursive: true, force: true });
    fs.rmSync(path.join(workspaceRoot(), '.gateway-images'), { recursive: true, force: true });
  });

  /** Writes the workspace settings file and waits until VS Code has read it (a free setting beside it applies). */
  async function workspaceSettings(values: Record<string, unknown>): Promise<void> {
    const marker = 100 + Math.floor(Math.random() * 800);
    fs.mkdirSync(path.dirname(settingsFile()), { recursive: true });
    fs.writeFileSync(settingsFile(), JSON.stringify({ ...values, 'gatewayImages.balanceRefreshMinutes': marker }, null, 2));
    await waitUntil(() => config().get('balanceRefreshMinutes') === marker, 10_000, 'the workspace settings file read');
  }

  it('the workspace is untrusted and the extension is active in limited mode', async () => {
    assert.strictEqual(vscode.workspace.isTrusted, false);
    const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.ok(extension.isActive, 'the extension did not activate in the untrusted workspace');
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('gatewayImages.generate'));
  });

  it('ignores the workspace value of gatewayImages.outputDirectory', async () => {
    await workspaceSettings({ 'gatewayImages.outputDirectory': 'from-workspace' });
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Untrusted folder' });
    assert.strictEqual(path.relative(workspaceRoot(), path.dirname(result.files[0]!.fsPath)), 'generated-images');
    assert.ok(!fs.existsSync(path.join(workspaceRoot(), 'from-workspace')), 'the workspace folder setting was used');
  });

  it('ignores the workspace value of gatewayImages.fileNamePattern', async () => {
    await workspaceSettings({ 'gatewayImages.fileNamePattern': 'from-workspace-{index}' });
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Untrusted name' });
    const name = path.basename(result.files[0]!.fsPath);
    assert.match(name, /untrusted-name-sketch-mini-1(-\d+)?\.png$/, name);
    assert.doesNotMatch(name, /from-workspace/);
  });

  it('ignores the workspace value of gatewayImages.editFileNamePattern', async () => {
    await workspaceSettings({ 'gatewayImages.editFileNamePattern': 'from-workspace-{index}' });
    const sample = path.join(workspaceRoot(), 'images', 'sample.png');
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', {
      images: [vscode.Uri.file(sample)],
      model: 'aurora-1',
      prompt: 'Untrusted edit',
    });
    const name = path.basename(result.files[0]!.fsPath);
    assert.match(name, /^sample\.edit-1(-\d+)?\.png$/, name);
  });

  it('ignores workspace values of the spending limits: confirmCostAbove, mcp.maxCostPerCall, mcp.maxCostPerSession', async () => {
    await workspaceSettings(WORKSPACE_LIMITS);
    await assertUserSpendingLimitsHold();
  });

  it('a style of the workspace is read but never sends on its own: it is confirmed first, and its output folder and pattern are ignored', async () => {
    fs.mkdirSync(path.join(workspaceRoot(), '.gateway-images'), { recursive: true });
    const style = { model: 'sketch-mini', promptPrefix: 'Untrusted style:', outputFolder: 'from-style', fileNamePattern: 'from-style-{index}' };
    fs.writeFileSync(path.join(workspaceRoot(), '.gateway-images', 'styles.json'), JSON.stringify({ styles: { loud: style } }));
    const window = vscode.window as unknown as Record<string, unknown>;
    const showWarningMessage = window.showWarningMessage;
    const asked: { message: string; detail?: string }[] = [];
    let answer: 'decline' | 'send' = 'decline';
    window.showWarningMessage = (message: string, options: { detail?: string }, ...items: string[]) => {
      asked.push({ message, detail: options?.detail });
      return Promise.resolve(answer === 'send' ? items[0] : undefined);
    };
    try {
      // confirmCostAbove is 1000 (prepareSuite): only the style's origin makes it ask.
      const before = (await paidRequests()).length;
      const declined = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { style: 'loud', prompt: 'a drum' }));
      assert.strictEqual(declined.kind, 'cancelled');
      assert.strictEqual(asked.length, 1, 'the request was not confirmed first');
      assert.match(asked[0]!.detail ?? '', /Prompt: Untrusted style: a drum/);
      assert.match(asked[0]!.detail ?? '', /Style: loud \(\.gateway-images\/styles\.json\)/);
      assert.match(asked[0]!.detail ?? '', /not trusted/);
      assert.strictEqual((await paidRequests()).length, before, 'sent without the confirmation');
      answer = 'send';
      const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { style: 'loud', prompt: 'a drum' });
      const file = result.files[0]!.fsPath;
      assert.strictEqual(path.relative(workspaceRoot(), path.dirname(file)), 'generated-images');
      assert.match(path.basename(file), /untrusted-style-a-drum-sketch-mini-1(-\d+)?\.png$/);
      assert.ok(!fs.existsSync(path.join(workspaceRoot(), 'from-style')), "the style's folder was used");
    } finally {
      window.showWarningMessage = showWarningMessage;
    }
  });

  it('declares exactly these settings as restricted', () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } } };
    assert.deepStrictEqual([...pkg.capabilities.untrustedWorkspaces.restrictedConfigurations].sort(), [
      'gatewayImages.editFileNamePattern',
      'gatewayImages.fileNamePattern',
      'gatewayImages.outputDirectory',
    ]);
  });
});
