// Ten generations at once by arguments into one folder, inside VS Code: distinct names, nothing
// overwritten, every file its own request's image, and the account ends at the gateway's balance.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, closeAllEditors, emulator, emulatorBalance, emulatorImages, paidRequests, waitUntil, workspaceRoot, prepareSuite } from './support';

interface Result {
  files: vscode.Uri[];
  usage: { cost_rub: number; balance: number };
}

const N = 10;

describe('Concurrent generations (10 at once, one folder)', function () {
  this.timeout(120_000);

  before(async () => {
    await prepareSuite();
  });

  afterEach(closeAllEditors);

  it('saves every image under its own name and ends with the gateway balance', async () => {
    const folder = `concurrent-${Date.now()}`;
    const outDir = path.join(workspaceRoot(), folder);
    // Same model and prompt: every request wants the same file name. Seeds make the bytes differ.
    const requests = Array.from({ length: N }, (_, i) => ({ model: 'sketch-mini', prompt: 'Ten at once', seed: 100 + i }));
    const paidBefore = (await paidRequests()).length;
    const balanceBefore = await emulatorBalance();

    const results = await Promise.all(
      requests.map((request) => vscode.commands.executeCommand<Result>('gatewayImages.generate', { ...request, outputDirectory: folder })),
    );

    const files = results.map((r) => r.files[0]!.fsPath);
    assert.ok(results.every((r) => r.files.length === 1));
    assert.strictEqual(new Set(files).size, N, `names collided: ${files.map((f) => path.basename(f)).join(', ')}`);
    for (const file of files) assert.strictEqual(path.dirname(file), outDir);
    assert.strictEqual(fs.readdirSync(outDir).filter((f) => f.endsWith('.png')).length, N, 'the folder does not hold exactly 10 images');
    const paid = (await paidRequests()).slice(paidBefore);
    assert.strictEqual(paid.length, N, 'exactly 10 paid requests');
    const charged = paid.reduce((sum, r) => sum + r.chargedRub, 0);

    // The account: the answers arrive in any order; the snapshot (what the status bar shows) must
    // end at the gateway's balance.
    const gatewayBalance = await emulatorBalance();
    assert.strictEqual(Math.round((balanceBefore - charged) * 100), Math.round(gatewayBalance * 100));
    const extensionApi = await api();
    const took = await waitUntil(
      () => extensionApi.account.balance === gatewayBalance,
      10_000,
      `account balance ${extensionApi.account.balance} = gateway ${gatewayBalance}`,
    );
    console.log(`      concurrency: ${N} at once, ${new Set(files).size} distinct files, account = gateway balance after ${took} ms`);

    // No file was overwritten: each holds exactly its own request's image (checked last: these
    // direct calls are paid too).
    for (let i = 0; i < N; i++) {
      const [expected] = await emulatorImages(emulator().keys.unlimited, requests[i]!);
      // Everything before IEND is the gateway's image; a provenance chunk may follow (gatewayImages.embedProvenance).
      const head = (png: Buffer) => png.subarray(0, expected!.length - 12);
      assert.ok(head(fs.readFileSync(files[i]!)).equals(head(expected!)), `${path.basename(files[i]!)} is not the image of seed ${requests[i]!.seed}`);
    }
  });
});
