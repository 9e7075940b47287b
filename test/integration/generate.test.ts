// Key, generation by arguments, account updates and refusals, inside VS Code against the emulator.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, api, closeAllEditors, emulator, emulatorImages, paidRequests, rejectionOf, useKey, workspaceRoot } from './support';

describe('Generate Image (arguments, no prompts)', function () {
  this.timeout(60_000);

  before(async () => {
    await admin('POST', 'reset');
    await vscode.workspace.getConfiguration('gatewayImages').update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('gatewayImages').update('openAfterGenerate', false, vscode.ConfigurationTarget.Global);
  });

  afterEach(closeAllEditors);

  it('sets the key by argument after checking it with /v1/gateway/me', async () => {
    const result = await vscode.commands.executeCommand<{ email: string }>('gatewayImages.setApiKey', emulator().keys.budget);
    assert.strictEqual(result?.email, 'demo@example.com');
    const account = await (await api()).refreshAccount();
    assert.strictEqual(account.status, 'ready');
    assert.strictEqual(account.user?.email, 'demo@example.com');
    assert.ok(typeof account.budget === 'number', 'the budget key has a budget');
  });

  it('refuses an expired key with a typed error and does not save it', async () => {
    await useKey(emulator().keys.budget);
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.setApiKey', emulator().keys.expired));
    assert.strictEqual(error.kind, 'authentication');
    assert.strictEqual(error.reason, 'expired');
    // The previous, valid key is still the one in use.
    assert.strictEqual((await (await api()).refreshAccount()).status, 'ready');
  });

  it('saves the images with pattern names, byte-equal to what the emulator produced', async () => {
    await useKey(emulator().keys.budget);
    const request = { model: 'aurora-1', prompt: 'A red fox in snow', n: 2, seed: 7 };
    // Byte equality needs the files as the gateway sent them: no provenance chunk (see provenance.test.ts).
    const config = vscode.workspace.getConfiguration('gatewayImages');
    await config.update('embedProvenance', false, vscode.ConfigurationTarget.Global);
    type Result = { files: vscode.Uri[]; model: string; usage: { cost_rub: number; balance: number } };
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', request).then(async (value) => {
      await config.update('embedProvenance', undefined, vscode.ConfigurationTarget.Global);
      return value;
    });
    assert.ok(result, 'the command resolved nothing');
    assert.strictEqual(result.files.length, 2);
    assert.strictEqual(result.model, 'aurora-1');
    const expected = await emulatorImages(emulator().keys.unlimited, request);
    const outDir = path.join(workspaceRoot(), 'generated-images');
    result.files.forEach((uri, i) => {
      assert.strictEqual(path.dirname(uri.fsPath), outDir);
      assert.match(path.basename(uri.fsPath), new RegExp(`^\\d{4}-\\d{2}-\\d{2}-a-red-fox-in-snow-aurora-1-${i + 1}\\.png$`));
      assert.ok(fs.readFileSync(uri.fsPath).equals(expected[i]!), `image ${i + 1} differs from the emulator's`);
    });
    assert.ok(result.usage.cost_rub >= 5 && result.usage.cost_rub <= 8, `cost ${result.usage.cost_rub} outside 2 × 2.50..4.00`);
    assert.strictEqual((await api()).account.balance, result.usage.balance, 'the account takes the balance from the answer');
  });

  it('never overwrites: the same name gets a new one', async () => {
    await useKey(emulator().keys.unlimited);
    const request = { model: 'aurora-1', prompt: 'Collision test', seed: 1 };
    const first = await vscode.commands.executeCommand<{ files: vscode.Uri[] }>('gatewayImages.generate', request);
    const before = fs.readFileSync(first.files[0]!.fsPath);
    const second = await vscode.commands.executeCommand<{ files: vscode.Uri[] }>('gatewayImages.generate', request);
    assert.notStrictEqual(second.files[0]!.fsPath, first.files[0]!.fsPath);
    assert.match(path.basename(second.files[0]!.fsPath), /-2\.png$/);
    assert.ok(fs.readFileSync(first.files[0]!.fsPath).equals(before), 'the first file was modified');
  });

  it('refuses before sending when the known balance cannot cover the reservation', async () => {
    await useKey(emulator().keys.unlimited);
    await admin('POST', 'state', { balance: 3 });
    await (await api()).refreshAccount();
    const paidBefore = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'lumen-xl', prompt: 'Too expensive', n: 2 }));
    assert.strictEqual(error.kind, 'cannot-afford');
    assert.match(error.message, /reserves/);
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
    await admin('POST', 'reset');
    await (await api()).refreshAccount();
  });

  it('refuses invalid input with the field named, before any request', async () => {
    await useKey(emulator().keys.unlimited);
    const paidBefore = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'x', size: '1024х1024' }));
    assert.strictEqual(error.kind, 'validation');
    assert.strictEqual(error.field, 'size');
    assert.match(error.message, /Latin letter x/);
    assert.strictEqual((await paidRequests()).length, paidBefore);
  });

  it('updates the account from the answer and reconciles the budget after', async () => {
    await useKey(emulator().keys.budget);
    const extensionApi = await api();
    const before = extensionApi.account;
    const changed = new Promise<void>((resolve) => {
      const sub = extensionApi.onDidChangeAccount((snapshot) => {
        if (snapshot.budget !== undefined && before.budget !== undefined && snapshot.budget < before.budget) {
          sub.dispose();
          resolve();
        }
      });
    });
    const result = await vscode.commands.executeCommand<{ usage: { balance: number } }>('gatewayImages.generate', {
      model: 'sketch-mini',
      prompt: 'Budget check',
    });
    await changed;
    assert.ok(result.usage.balance < (before.balance ?? Infinity));
  });
});
