// One source of truth per key and gateway, and a client that accepts the forms a real gateway may
// answer in (the emulator's forms switch, tools/emulator/forms.ts). Inside VS Code.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { AccountSnapshot } from '../../src/account/accountModel';
import {
  admin,
  api,
  captureUi,
  closeAllEditors,
  emulator,
  paidRequests,
  prepareSuite,
  rejectionOf,
  studioTabs,
  useKey,
  waitUntil,
  workspaceRoot,
} from './support';

interface Result {
  files: vscode.Uri[];
  model: string;
  usage?: { cost_rub?: number; balance?: number };
}

async function totals(): Promise<{ reservations: number; charges: number }> {
  const state = await admin<{ totalReservations: number; totalCharges: number }>('GET', 'state');
  return { reservations: state.totalReservations, charges: state.totalCharges };
}

const setForms = (forms: string[]) => admin('POST', 'forms', { forms });

describe('Real gateway forms and account identity', function () {
  this.timeout(60_000);

  // Each test from a fresh emulator and key: one that fails half-way (a poor balance left set) must not fail the rest.
  beforeEach(() => prepareSuite('budget'));
  afterEach(async () => {
    await admin('DELETE', 'forms');
    await closeAllEditors();
  });

  it('switch from a poor key (₽1) to a rich one (₽500), generate at once: sent; the status and the studio show the switch', async () => {
    const extensionApi = await api();
    await admin('POST', 'state', { balance: 1 });
    await extensionApi.refreshAccount();
    assert.strictEqual(extensionApi.account.balance, 1);

    // On the poor key the local refusal is right (current facts), and it sends and reserves nothing.
    const before = await totals();
    const refused = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'Poor key' }));
    assert.strictEqual(refused.kind, 'cannot-afford', refused.message);
    assert.deepStrictEqual(await totals(), before, 'nothing reserved or charged');
    assert.strictEqual((await paidRequests()).length, 0, '0 requests');

    const ui = captureUi();
    const seen: AccountSnapshot[] = [];
    const subscription = extensionApi.onDidChangeAccount((s) => seen.push(s));
    try {
      await vscode.commands.executeCommand('gatewayImages.openStudio');
      await waitUntil(() => studioTabs().length === 1, 10_000, 'the studio');
      // The page posts 'ready' once loaded; only then does the host post account changes to it.
      await waitUntil(() => ui.records.some((r) => r.kind === 'webview-message' && r.text.includes('"account"')), 15_000, 'the studio page ready');
      // Another key, on an account with ₽500; generate at once, no refresh in between.
      await admin('POST', 'state', { balance: 500 });
      await vscode.commands.executeCommand('gatewayImages.setApiKey', emulator().keys.unlimited);
      const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'aurora-1', prompt: 'Rich key' });
      assert.strictEqual(result?.files.length, 1, 'generated');
      const paid = await paidRequests();
      assert.strictEqual(paid.length, 1, 'sent once');

      const switching = seen.find((s) => s.switching);
      assert.ok(switching, `a switching snapshot: ${seen.map((s) => s.status).join(', ')}`);
      assert.strictEqual(switching.status, 'loading');
      assert.strictEqual(switching.balance, undefined, "the poor key's ₽1 is gone at once");
      assert.notStrictEqual(extensionApi.account.identity, undefined);
      assert.ok(!extensionApi.account.identity!.includes(emulator().keys.unlimited), 'the identity never holds the key');
      await waitUntil(() => ui.records.some((r) => r.kind === 'webview-message' && r.text.includes('"switchingText"')), 10_000, 'the studio shows the switch');
    } finally {
      subscription.dispose();
      ui.restore();
      for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
    }
  });

  it('Clear API Key drops the old figures at once (the same switch secrets.onDidChange triggers)', async () => {
    const extensionApi = await api();
    await useKey(emulator().keys.budget);
    const budgetIdentity = extensionApi.account.identity;
    const seen: AccountSnapshot[] = [];
    const subscription = extensionApi.onDidChangeAccount((s) => seen.push(s));
    try {
      await vscode.commands.executeCommand('gatewayImages.clearApiKey');
      await waitUntil(() => extensionApi.account.status === 'no-key', 5_000, 'no key');
      assert.ok(
        seen.some((s) => s.switching && s.balance === undefined),
        'dropped at once',
      );
      assert.notStrictEqual(extensionApi.account.identity, budgetIdentity);
    } finally {
      subscription.dispose();
      await useKey(emulator().keys.budget);
    }
  });

  it("403 moderation: the gateway's words, no Set API Key, nothing charged", async () => {
    await useKey(emulator().keys.unlimited);
    await setForms(['moderation-403']);
    const before = await totals();
    const ui = captureUi();
    try {
      const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'Something blocked' }));
      assert.strictEqual(error.kind, 'api');
      await waitUntil(() => ui.records.some((r) => r.kind === 'error' && /safety system/.test(r.text)), 5_000, 'the error');
      const shown = ui.records.find((r) => r.kind === 'error' && /safety system/.test(r.text))!;
      assert.ok(!shown.items.includes('Set API Key'), `actions: ${shown.items.join(', ')}`);
      assert.ok(!/API key/.test(shown.text), shown.text);
      assert.deepStrictEqual(await totals(), before);
    } finally {
      ui.restore();
    }
  });

  it('400 invalid key: recognised as a rejected key (Set API Key), not as offline', async () => {
    await setForms(['invalid-key-400']);
    const ui = captureUi();
    try {
      const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.setApiKey', 'gw-not-a-real-key'));
      assert.strictEqual(error.kind, 'authentication');
      assert.strictEqual(error.reason, 'invalid');
      await waitUntil(() => ui.records.some((r) => r.kind === 'error' && r.items.includes('Set API Key')), 5_000, 'Set API Key offered');
    } finally {
      ui.restore();
    }
  });

  it('string usage: cost and balance are read and shown', async () => {
    await useKey(emulator().keys.unlimited);
    await setForms(['string-usage']);
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'String usage' });
    const [paid] = (await paidRequests()).slice(-1);
    assert.strictEqual(result?.usage?.cost_rub, paid!.chargedRub);
    assert.strictEqual(typeof result?.usage?.balance, 'number');
    assert.strictEqual((await api()).account.balance, result?.usage?.balance);
  });

  it('SVG with an XML declaration and comments is saved as .svg', async () => {
    await setForms(['svg-prolog']);
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', {
      model: 'vector-forge',
      prompt: 'Inkscape logo',
      output_format: 'svg',
    });
    assert.strictEqual(result?.files.length, 1);
    assert.match(result.files[0]!.fsPath, /\.svg$/);
    assert.match(fs.readFileSync(result.files[0]!.fsPath, 'utf8'), /<!-- Created with Inkscape/);
  });

  it('binary edits answer: the image/png body is saved', async () => {
    await setForms(['binary-edits']);
    const config = vscode.workspace.getConfiguration('gatewayImages');
    await config.update('editTransport', 'multipart', vscode.ConfigurationTarget.Global);
    try {
      const sample = path.join(workspaceRoot(), 'images', 'sample.png');
      const result = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', { model: 'aurora-1', prompt: 'Binary answer', images: [sample] });
      assert.strictEqual(result?.files.length, 1);
      assert.ok(
        fs
          .readFileSync(result.files[0]!.fsPath)
          .subarray(0, 4)
          .equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])),
      );
      assert.strictEqual((await paidRequests()).slice(-1)[0]!.path, '/v1/images/edits');
    } finally {
      await config.update('editTransport', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('budget reset: a budget that looks short warns but is sent, and the gateway (after its reset) accepts', async () => {
    await useKey(emulator().keys.lowBudget);
    const extensionApi = await api();
    assert.ok((extensionApi.account.budget ?? 0) < 12.5, `budget ${extensionApi.account.budget}`);
    await setForms(['budget-reset']);
    const ui = captureUi();
    try {
      const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'lumen-xl', prompt: 'After the reset' });
      assert.strictEqual(result?.files.length, 1);
      assert.ok(
        ui.records.some((r) => r.kind === 'info' && /looks lower than the reservation/.test(r.text)),
        'warned',
      );
    } finally {
      ui.restore();
    }
  });

  it('"Лимит ключа исчерпан" (403): funds in the gateway\'s words, the account refreshed; then refused locally with 0 requests and nothing reserved', async () => {
    await admin('POST', 'reset');
    await useKey(emulator().keys.lowBudget);
    await setForms(['ru-errors']);
    const extensionApi = await api();
    const ui = captureUi();
    try {
      const first = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'lumen-xl', prompt: 'Too dear' }));
      assert.strictEqual(first.kind, 'insufficient-funds');
      assert.strictEqual(first.message, 'Лимит ключа исчерпан.');
      await waitUntil(() => ui.records.some((r) => r.kind === 'warning' && r.text === 'Лимит ключа исчерпан.'), 5_000, 'shown');
      assert.ok(!ui.records.some((r) => r.items.includes('Set API Key')), 'no Set API Key');
      await waitUntil(
        () => extensionApi.account.budgetRefusal !== undefined && extensionApi.account.status === 'ready',
        5_000,
        'refreshed with the refusal noted',
      );

      const paidBefore = (await paidRequests()).length;
      const before = await totals();
      const second = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'lumen-xl', prompt: 'Too dear' }));
      assert.strictEqual(second.kind, 'cannot-afford');
      assert.strictEqual((await paidRequests()).length, paidBefore, '0 requests');
      assert.deepStrictEqual(await totals(), before, 'nothing reserved');
      await waitUntil(() => ui.records.some((r) => r.kind === 'warning' && r.items.includes('Refresh and Try Again')), 5_000, 'Refresh and Try Again offered');
    } finally {
      ui.restore();
    }
  });

  it('normalised input (64X64, 2k, a spaced model id) is sent normalised and the user is told', async () => {
    await useKey(emulator().keys.unlimited);
    const ui = captureUi();
    try {
      const tier = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: ' aurora-1 ', prompt: 'Normalised', size: '2k' });
      assert.strictEqual(tier?.files.length, 1);
      const pixels = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'aurora-1', prompt: 'Normalised', size: '64X64' });
      assert.strictEqual(pixels?.files.length, 1);
      const told = (pattern: RegExp) => ui.records.some((r) => r.kind === 'info' && pattern.test(r.text));
      assert.ok(told(/"size" was changed from "2k" to "2K"/), 'told about 2k');
      assert.ok(told(/"model" was changed/), 'told about the model id');
      assert.ok(told(/"size" was changed from "64X64" to "64x64"/), 'told about 64X64');
    } finally {
      ui.restore();
    }
  });
});
