// One layer shows a command's errors: the job runner only throws (with the retry and the balance
// before sending for the layer above), and the command shows the error once, with those actions.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { admin, api, captureUi, prepareSuite, rejectionOf } from './support';

describe('Errors are shown once, by the command', function () {
  this.timeout(30_000);

  before(() => prepareSuite('unlimited'));

  after(async () => {
    await admin('POST', 'reset');
    await (await api()).refreshAccount();
  });

  it('a validation error of a generation by arguments: one error message, and the typed error rejects', async () => {
    const ui = captureUi();
    try {
      const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'x', size: '1024х1024' }));
      assert.strictEqual(error.kind, 'validation');
      // Only this error's messages (see the next test: an earlier suite's job may still show its own).
      const shown = ui.records.filter((r) => (r.kind === 'error' || r.kind === 'warning') && r.text.includes(error.message));
      assert.strictEqual(shown.length, 1, ui.records.map((r) => r.text).join(' | '));
      assert.match(shown[0]!.text, /Latin letter x/);
    } finally {
      ui.restore();
    }
  });

  it('a local refusal for the balance: one warning, which offers the retry the job runner passed up', async () => {
    await admin('POST', 'state', { balance: 3 });
    await (await api()).refreshAccount();
    const ui = captureUi();
    try {
      const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'lumen-xl', prompt: 'Too expensive', n: 2 }));
      assert.strictEqual(error.kind, 'cannot-afford');
      // Only this refusal's messages: a job of an earlier suite (a 1 s timeout, reconciled later) may
      // still show its own while this test runs (CI, once).
      const shown = ui.records.filter((r) => (r.kind === 'error' || r.kind === 'warning') && r.text.includes(error.message));
      assert.strictEqual(shown.length, 1, ui.records.map((r) => r.text).join(' | '));
      assert.deepStrictEqual(shown[0]!.items, ['Refresh and Try Again', 'Show Account']);
    } finally {
      ui.restore();
    }
  });
});
