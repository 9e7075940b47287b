// Provenance: saved PNGs carry their request in an iTXt chunk; Regenerate and Variations read it
// (or the history) and open the Image Studio prefilled, without sending. Inside VS Code, emulator.
import * as assert from 'assert';
import * as path from 'path';
import * as vscode from 'vscode';
import { readPngTextChunk } from '../../src/core/files/pngText';
import { admin, captureUi, closeAllEditors, emulator, paidRequests, useKey, workspaceRoot, studioTabs, waitUntil } from './support';

interface Prefill {
  request: { model: string; prompt: string; n?: number; seed?: number; aspect_ratio?: string };
  references: string[];
  source: 'png' | 'history';
}

async function generateOne(request: Record<string, unknown>): Promise<vscode.Uri> {
  const result = await vscode.commands.executeCommand<{ files: vscode.Uri[] }>('gatewayImages.generate', request);
  assert.strictEqual(result.files.length, 1);
  return result.files[0]!;
}

describe('Provenance: PNG record, Regenerate and Variations', function () {
  this.timeout(60_000);
  const prompt = 'Маяк на скале на рассвете, акварель';

  before(async () => {
    await admin('POST', 'reset');
    const config = vscode.workspace.getConfiguration('gatewayImages');
    await config.update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
    await config.update('openAfterGenerate', false, vscode.ConfigurationTarget.Global);
    await config.update('embedProvenance', undefined, vscode.ConfigurationTarget.Global);
    await useKey(emulator().keys.unlimited);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('embedProvenance', undefined, vscode.ConfigurationTarget.Global);
    await closeAllEditors();
  });

  it('a generated PNG carries prompt (Cyrillic), model, seed and parameters in its gateway-images chunk', async () => {
    const file = await generateOne({ model: 'aurora-1', prompt, seed: 77, aspect_ratio: '16:9' });
    const record = JSON.parse((await readPngTextChunk(file.fsPath, 'gateway-images'))!);
    assert.strictEqual(record.prompt, prompt);
    assert.strictEqual(record.model, 'aurora-1');
    assert.strictEqual(record.seed, 77);
    assert.strictEqual(record.parameters.aspect_ratio, '16:9');
  });

  it('Regenerate opens the studio prefilled with the same settings, seed included, and sends nothing', async () => {
    const file = await generateOne({ model: 'aurora-1', prompt, seed: 78, aspect_ratio: '16:9' });
    const paidBefore = (await paidRequests()).length;
    // A fresh panel, so that the capture sees what the host posts to it.
    for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
    await waitUntil(() => studioTabs().length === 0, 5_000, 'no studio tab left');
    const ui = captureUi();
    try {
      const prefill = await vscode.commands.executeCommand<Prefill>('gatewayImages.regenerate', file);
      assert.strictEqual(prefill.source, 'png');
      assert.deepStrictEqual(prefill.request, { model: 'aurora-1', prompt, seed: 78, aspect_ratio: '16:9' });
      await waitUntil(() => studioTabs().length === 1);
      await waitUntil(() => studioTabs()[0]!.isActive);
      // The page holds the prefilled form and has had it evaluated: had it sent anything, it would have by now.
      const seen = () => ui.records.filter((r) => r.kind === 'webview-message').map((r) => (JSON.parse(r.text) as { type: string }).type);
      await waitUntil(() => seen().includes('evaluation'), 30_000, 'the prefilled form evaluated').catch((error: unknown) => {
        throw new Error(`${String(error)} (panels captured: ${ui.panels.length}; messages: ${seen().join(', ')})`, { cause: error });
      });
    } finally {
      ui.restore();
    }
    assert.strictEqual((await paidRequests()).length, paidBefore, 'something was sent');
  });

  it('Variations: same settings, seed cleared, n = min(4, max_n)', async () => {
    const file = await generateOne({ model: 'lumen-xl', prompt: 'Variations', seed: 3 });
    const prefill = await vscode.commands.executeCommand<Prefill>('gatewayImages.variations', file);
    assert.strictEqual(prefill.request.seed, undefined);
    assert.strictEqual(prefill.request.n, 2, 'lumen-xl has max_n 2');
    const aurora = await generateOne({ model: 'aurora-1', prompt: 'Variations', seed: 3 });
    const four = await vscode.commands.executeCommand<Prefill>('gatewayImages.variations', aurora);
    assert.strictEqual(four.request.n, 4);
    assert.strictEqual(studioTabs().length, 1, 'one studio panel');
  });

  it('without the chunk (setting off) the record comes from the history; an unknown image has none', async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('embedProvenance', false, vscode.ConfigurationTarget.Global);
    const file = await generateOne({ model: 'sketch-mini', prompt: 'No chunk', seed: 9 });
    assert.strictEqual(await readPngTextChunk(file.fsPath, 'gateway-images'), undefined);
    const prefill = await vscode.commands.executeCommand<Prefill>('gatewayImages.regenerate', file);
    assert.strictEqual(prefill.source, 'history');
    assert.strictEqual(prefill.request.seed, 9);
    assert.strictEqual(prefill.request.prompt, 'No chunk');
    const unknown = await vscode.commands.executeCommand<Prefill | undefined>(
      'gatewayImages.regenerate',
      vscode.Uri.file(path.join(workspaceRoot(), 'images', 'sample.png')),
    );
    assert.strictEqual(unknown, undefined);
  });
});
