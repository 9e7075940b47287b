// Where images may go, and what a workspace may not change: an outputDirectory from the
// WORKSPACE settings that leaves the workspace is refused before any request; the same folder
// from USER settings is honoured; a workspace value of the machine-scoped baseUrl is ignored.
// The harness runs with Workspace Trust disabled (the workspace is trusted): untrusted mode,
// where the workspace values are ignored altogether, is not exercised here.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { readSettings, USER_ONLY_SETTINGS } from '../../src/host/settings';
import {
  admin,
  api,
  assertUserSpendingLimitsHold,
  closeAllEditors,
  emulator,
  EXTENSION_ID,
  extensionLogText,
  paidRequests,
  rejectionOf,
  useKey,
  waitUntil,
  WORKSPACE_LIMITS,
  workspaceRoot,
} from './support';

interface Result {
  files: vscode.Uri[];
}

describe('Workspace settings cannot redirect writes or the key', function () {
  this.timeout(60_000);
  let outside: string;
  let hadVscodeDir: boolean;
  const config = () => vscode.workspace.getConfiguration('gatewayImages');
  const vscodeDir = () => path.join(workspaceRoot(), '.vscode');

  before(async () => {
    await admin('POST', 'reset');
    await config().update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
    await config().update('openAfterGenerate', false, vscode.ConfigurationTarget.Global);
    await useKey(emulator().keys.unlimited);
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-outside-')));
    hadVscodeDir = fs.existsSync(vscodeDir());
  });

  after(async () => {
    await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
    if (!hadVscodeDir) fs.rmSync(vscodeDir(), { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  afterEach(closeAllEditors);

  async function refusedBeforeSending(value: string, why = /outputDirectory/): Promise<void> {
    await config().update('outputDirectory', value, vscode.ConfigurationTarget.Workspace);
    await waitUntil(() => config().inspect('outputDirectory')?.workspaceValue === value, 5_000, 'workspace value applied');
    const paidBefore = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Workspace redirect' }));
    assert.strictEqual(error.kind, 'validation', `${error.name}: ${error.message}`);
    assert.strictEqual(error.field, 'gatewayImages.outputDirectory');
    assert.match(error.message, /outputDirectory/);
    assert.match(error.message, why);
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
    assert.deepStrictEqual(fs.readdirSync(outside), [], 'something was written outside');
  }

  it('refuses an absolute outputDirectory from the workspace settings, before any request', async () => {
    await refusedBeforeSending(outside);
  });

  it('refuses ../outside from the workspace settings, before any request', async () => {
    await refusedBeforeSending('../outside');
    assert.ok(!fs.existsSync(path.join(path.dirname(workspaceRoot()), 'outside')), 'the folder was created');
  });

  it('refuses an output folder that a link shipped in the repository leads outside, before any request (settings of the workspace or the user)', async () => {
    const link = path.join(workspaceRoot(), 'shipped-images');
    fs.symlinkSync(outside, link, 'dir');
    try {
      await refusedBeforeSending('shipped-images', /symbolic link/);
      // The user's own relative value goes through the same link: refused too.
      await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Workspace);
      await config().update('outputDirectory', 'shipped-images', vscode.ConfigurationTarget.Global);
      await waitUntil(() => config().get('outputDirectory') === 'shipped-images', 5_000, 'user value applied');
      const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Through a link' }));
      assert.strictEqual(error.field, 'gatewayImages.outputDirectory', `${error.name}: ${error.message}`);
      assert.deepStrictEqual(fs.readdirSync(outside), [], 'something was written through the link');
    } finally {
      await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
      fs.rmSync(link, { force: true });
    }
  });

  it('honours the same absolute folder from the user settings', async () => {
    await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('outputDirectory', outside, vscode.ConfigurationTarget.Global);
    await waitUntil(() => config().get('outputDirectory') === outside, 5_000, 'user value applied');
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'User folder' });
    assert.strictEqual(path.dirname(result.files[0]!.fsPath), outside);
    assert.ok(fs.existsSync(result.files[0]!.fsPath));
    await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
  });

  it('ignores a workspace value of the machine-scoped gatewayImages.baseUrl', async () => {
    const decoy = 'http://127.0.0.1:9/';
    // VS Code refuses to write it through the API...
    const refused = await rejectionOf(config().update('baseUrl', decoy, vscode.ConfigurationTarget.Workspace));
    assert.match(refused.message, /baseUrl/);
    // ...and ignores it when the file says so anyway.
    fs.mkdirSync(vscodeDir(), { recursive: true });
    const file = path.join(vscodeDir(), 'settings.json');
    const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    const userProxy = vscode.workspace.getConfiguration('http').inspect('proxy')?.globalValue;
    // As people write settings files: a comment and a trailing comma (VS Code reads both, and so does the log's check).
    const values = { 'gatewayImages.baseUrl': decoy, 'http.proxy': decoy, 'http.proxyStrictSSL': false, 'gatewayImages.balanceRefreshMinutes': 999 };
    fs.writeFileSync(file, `// the gateway of this project\n${JSON.stringify(values, null, 2).replace(/\n}$/, ',\n}')}\n`);
    try {
      // The file was read (the window-scoped setting next to it applies) but baseUrl was not taken.
      await waitUntil(() => config().get('balanceRefreshMinutes') === 999, 5_000, 'the workspace settings file read');
      assert.strictEqual(config().get('baseUrl'), emulator().url);
      assert.strictEqual(config().inspect('baseUrl')?.workspaceValue, undefined);
      // VS Code's own proxy settings, which the client reads, are not a workspace's either.
      const http = vscode.workspace.getConfiguration('http');
      assert.strictEqual(http.get('proxy'), userProxy ?? '');
      assert.strictEqual(http.get('proxyStrictSSL'), true);
      await waitUntil(() => /gatewayImages\.baseUrl.*ignored/.test(extensionLogText()), 10_000, 'the log says the workspace baseUrl is ignored');
      const paidBefore = (await paidRequests()).length;
      await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Still the emulator' });
      assert.strictEqual((await paidRequests()).length, paidBefore + 1, 'the generation did not reach the configured gateway');
    } finally {
      if (previous === undefined) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, previous);
    }
  });

  it('ignores workspace values of the spending limits: confirmCostAbove, mcp.maxCostPerCall, mcp.maxCostPerSession', async () => {
    fs.mkdirSync(vscodeDir(), { recursive: true });
    const file = path.join(vscodeDir(), 'settings.json');
    const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    fs.writeFileSync(file, JSON.stringify({ ...WORKSPACE_LIMITS, 'gatewayImages.balanceRefreshMinutes': 998 }, null, 2));
    try {
      await waitUntil(() => config().get('balanceRefreshMinutes') === 998, 5_000, 'the workspace settings file read');
      await assertUserSpendingLimitsHold();
    } finally {
      if (previous === undefined) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, previous);
    }
  });

  it('declares untrusted-workspace limits for exactly the settings that redirect writes', () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
      capabilities: { virtualWorkspaces: boolean; untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    assert.strictEqual(pkg.capabilities.virtualWorkspaces, false, 'images are written with node fs: no virtual workspaces');
    assert.strictEqual(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
    const properties = pkg.contributes.configuration.properties;
    // Settings a workspace may set (not machine/application scope) that decide where files go.
    const redirecting = Object.keys(properties).filter((name) => /outputDirectory|FileNamePattern|fileNamePattern/.test(name));
    assert.deepStrictEqual([...pkg.capabilities.untrustedWorkspaces.restrictedConfigurations].sort(), redirecting.sort());
    assert.strictEqual(properties['gatewayImages.baseUrl']!.scope, 'machine');
    // What only the user may set is exactly what the extension reads from the user's settings alone.
    const userOnly = Object.keys(properties).filter((name) => ['machine', 'application'].includes(properties[name]!.scope ?? ''));
    assert.deepStrictEqual(userOnly.sort(), ['baseUrl', ...USER_ONLY_SETTINGS].map((name) => `gatewayImages.${name}`).sort());
  });

  it("ignores workspace values of lowBalanceWarning and requestTimeoutSeconds: the status bar threshold, the client and the MCP server keep the user's", async () => {
    fs.mkdirSync(vscodeDir(), { recursive: true });
    const file = path.join(vscodeDir(), 'settings.json');
    const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    await config().update('lowBalanceWarning', 10, vscode.ConfigurationTarget.Global);
    await config().update('requestTimeoutSeconds', 77, vscode.ConfigurationTarget.Global);
    // A threshold above any balance would warn always; a 1 s deadline would fail the slow answer below.
    const workspace = { 'gatewayImages.lowBalanceWarning': 1_000_000_000, 'gatewayImages.requestTimeoutSeconds': 1 };
    fs.writeFileSync(file, JSON.stringify({ ...workspace, 'gatewayImages.balanceRefreshMinutes': 996 }, null, 2));
    try {
      await waitUntil(() => config().get('balanceRefreshMinutes') === 996, 5_000, 'the workspace settings file read');
      // What the status bar and the gateway connection read at runtime.
      const settings = readSettings();
      assert.strictEqual(settings.lowBalanceWarning, 10);
      assert.strictEqual(settings.requestTimeoutSeconds, 77);
      const [definition] = await (await api()).mcp.definitions();
      assert.ok(definition, 'no MCP server definition');
      assert.strictEqual(definition.env.GATEWAY_IMAGES_TIMEOUT_SECONDS, '77');
      // The paid answer takes 2.5 s: under the workspace's 1 s it would time out.
      await admin('POST', 'faults', { fault: 'latency', latencyMs: 2_500 });
      const paidBefore = (await paidRequests()).length;
      const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Slow but in time' });
      assert.ok(fs.existsSync(result.files[0]!.fsPath));
      assert.strictEqual((await paidRequests()).length, paidBefore + 1);
      for (const name of Object.keys(workspace)) {
        await waitUntil(() => new RegExp(`${name.replace(/\./g, '\\.')}.*ignored`).test(extensionLogText()), 10_000, `the log says ${name} is ignored`);
      }
    } finally {
      await admin('DELETE', 'faults').catch(() => undefined);
      await config().update('lowBalanceWarning', undefined, vscode.ConfigurationTarget.Global);
      await config().update('requestTimeoutSeconds', undefined, vscode.ConfigurationTarget.Global);
      if (previous === undefined) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, previous);
    }
  });
});
