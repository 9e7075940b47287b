// Outcome unknown inside VS Code: the connection breaks after the gateway charged. The command
// rejects with a typed error marked outcomeUnknown, the account is reconciled at once, nothing is
// resent, and the notification says it was charged (its answer had begun to arrive), offering Recover
// first, or a resend that says it pays again.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { admin, api, captureUi, closeAllEditors, emulatorBalance, paidRequests, rejectionOf, waitUntil, prepareSuite } from './support';

describe('Outcome unknown (drop-mid-body, kill)', function () {
  this.timeout(60_000);

  before(async () => {
    await prepareSuite();
  });

  afterEach(async () => {
    await admin('DELETE', 'faults');
    await closeAllEditors();
  });

  for (const fault of ['drop-mid-body', 'kill'] as const) {
    it(`${fault}: typed error, reconciled by the error path, one paid request, "charged", Recover before any resend`, async () => {
      const extensionApi = await api();
      await extensionApi.refreshAccount();
      const before = extensionApi.account.balance;
      const paidBefore = (await paidRequests()).length;
      await admin('POST', 'faults', { fault });
      const ui = captureUi();
      try {
        const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: `Outcome ${fault}`, n: 2 }));
        const rejectedAt = Date.now();
        assert.strictEqual((error as { outcomeUnknown?: boolean }).outcomeUnknown, true, `${error.name}: ${error.message}`);
        assert.ok(['connection', 'response-format'].includes(String(error.kind)), `kind ${error.kind}`);

        // Reconciled by the error path itself: the snapshot equals the gateway's balance.
        const gatewayBalance = await emulatorBalance();
        assert.ok(before !== undefined && gatewayBalance < before, 'the gateway charged the broken request');
        await waitUntil(() => extensionApi.account.balance === gatewayBalance, 5_000, 'account reconciled');
        const took = Date.now() - rejectedAt;

        // The notification says what is known: its answer had begun to arrive, so it was charged.
        await waitUntil(() => ui.records.some((r) => r.kind === 'warning' && /charged/.test(r.text)), 5_000, 'the warning');
        const warning = ui.records.find((r) => r.kind === 'warning' && /charged/.test(r.text))!;
        assert.match(warning.text, /The gateway charged for this request: its answer had begun to arrive\./);
        assert.doesNotMatch(warning.text, /nothing was charged/);
        // What was paid for comes first; a resend is offered only when nothing was kept, and says it pays again.
        const kept = (error as { recovered?: unknown }).recovered !== undefined;
        assert.deepStrictEqual(warning.items, kept ? ['Recover Images', 'Show Account', 'Show Log'] : ['Show Account', 'Send Again (Pays Again)…', 'Show Log']);

        // No automatic resend: only the notice's own action sends again.
        const paid = (await paidRequests()).slice(paidBefore);
        assert.strictEqual(paid.length, 1, `paid requests: ${paid.length}`);
        assert.ok(paid[0]!.chargedRub > 0);
        console.log(
          `      outcome unknown (${fault}): ${error.kind}, reconciled in ${took} ms, ${paid.length} paid request, notice "${warning.text}" [${warning.items.join(' | ')}]`,
        );
      } finally {
        ui.restore();
      }
    });
  }
});
