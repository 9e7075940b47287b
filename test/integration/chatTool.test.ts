// The chat tool gatewayImages_generateImage, invoked through vscode.lm.invokeTool without a chat
// request (toolInvocationToken undefined), inside VS Code against the emulator. Outside a chat
// request VS Code asks the tool's confirmation through its dialog service, which integration tests
// auto-confirm; the job's own cost dialog (a modal message, refused in tests) must not appear.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, api, closeAllEditors, emulator, paidRequests, workspaceRoot, prepareSuite, waitUntil } from './support';
import { assertPreviews, HAS_DATA_PARTS, NO_DATA_PARTS_REASON, textOf } from './chatToolSupport';

const TOOL = 'gatewayImages_generateImage';

async function invoke(input: Record<string, unknown>): Promise<string> {
  return textOf(await vscode.lm.invokeTool(TOOL, { input, toolInvocationToken: undefined }));
}

/** Workspace-relative paths listed as "- path" lines in the tool's answer. */
function listedPaths(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2));
}

describe('Chat tool gatewayImages_generateImage', function () {
  this.timeout(60_000);

  before(async () => {
    await prepareSuite();
    // 0 = the job always asks: a second confirmation would be refused in tests and fail the run.
    await vscode.workspace.getConfiguration('gatewayImages').update('confirmCostAbove', 0, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
  });

  afterEach(closeAllEditors);

  it('is registered with the schema of package.json', () => {
    const tool = vscode.lm.tools.find((t) => t.name === TOOL);
    assert.ok(tool, `lm.tools lacks ${TOOL}: ${vscode.lm.tools.map((t) => t.name).join(', ')}`);
    const schema = tool.inputSchema as { required?: string[]; properties?: Record<string, unknown> };
    assert.deepStrictEqual(schema.required, ['prompt']);
    for (const field of ['prompt', 'model', 'n', 'resolution', 'aspect_ratio', 'background', 'size', 'quality', 'output_format', 'seed']) {
      assert.ok(schema.properties?.[field], `schema lacks ${field}`);
    }
  });

  it('generates through invokeTool: one paid request, no second cost dialog, paths, cost and balance in the answer', async () => {
    const paidBefore = (await paidRequests()).length;
    const text = await invoke({ prompt: 'Маяк на скале на рассвете', model: 'aurora-1', n: 2, seed: 11 });
    assert.match(text, /Generated 2 images with aurora-1\. Cost .+, balance after .+\./, text);
    const paths = listedPaths(text);
    assert.strictEqual(paths.length, 2, text);
    for (const relative of paths) {
      assert.ok(!path.isAbsolute(relative), `${relative} is not workspace-relative`);
      assert.ok(fs.existsSync(path.join(workspaceRoot(), relative)), `${relative} does not exist`);
    }
    const paid = await paidRequests();
    assert.strictEqual(paid.length, paidBefore + 1, 'exactly one paid request');
    const charged = paid.at(-1)!.chargedRub;
    assert.ok(charged >= 5 && charged <= 8, `charged ${charged}`);
    assert.ok(!text.includes(emulator().keys.unlimited), 'the answer contains the key');
  });

  it('the result carries previews of the images (LanguageModelDataPart, PNG or JPEG, at most about 1 MP) where VS Code has data parts; text alone on 1.100', async () => {
    if (!HAS_DATA_PARTS) console.log(`      (image parts not expected: ${NO_DATA_PARTS_REASON})`);
    const result = await vscode.lm.invokeTool(TOOL, {
      input: { prompt: 'A lighthouse, preview', model: 'aurora-1', n: 2, seed: 12 },
      toolInvocationToken: undefined,
    });
    const text = textOf(result);
    // The text stays whole beside the images.
    assert.match(text, /Generated 2 images with aurora-1\. Cost .+, balance after .+\./, text);
    assert.strictEqual(listedPaths(text).length, 2, text);
    await assertPreviews(result, 2);
  });

  it('without a model uses the remembered model, else the cheapest that generates (sketch-mini here)', async () => {
    const text = await invoke({ prompt: 'A paper boat' });
    assert.match(text, /with sketch-mini\./, text);
    assert.strictEqual(listedPaths(text).length, 1);
  });

  it('errors come back as text, nothing is sent and the key is never echoed', async () => {
    const paidBefore = (await paidRequests()).length;
    const unknown = await invoke({ prompt: 'x', model: 'acme/aurora-1' });
    assert.match(unknown, /^Image generation failed: .+/, unknown);
    const invalid = await invoke({ prompt: 'x', model: 'aurora-1', size: '1024х1024' });
    assert.match(invalid, /^Image generation failed: .*Latin letter x.* Nothing was sent\./s, invalid);
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
    for (const text of [unknown, invalid]) assert.ok(!text.includes(emulator().keys.unlimited));
  });

  it('a balance that cannot cover the reservation is refused before sending, as text', async () => {
    await admin('POST', 'state', { balance: 1 });
    await (await api()).refreshAccount();
    const paidBefore = (await paidRequests()).length;
    const text = await invoke({ prompt: 'Too expensive', model: 'lumen-xl' });
    assert.match(text, /reserves .* Nothing was sent\./s, text);
    assert.strictEqual((await paidRequests()).length, paidBefore);
    await admin('POST', 'reset');
    await (await api()).refreshAccount();
  });

  it("is held to the agents' per-call and per-session caps of the user's settings; a workspace's values cannot raise them", async () => {
    const user = vscode.workspace.getConfiguration('gatewayImages.mcp');
    const file = path.join(workspaceRoot(), '.vscode', 'settings.json');
    const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    // What a cloned repository could ship: caps raised far above the user's. editor.tabSize marks the file as read.
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ 'gatewayImages.mcp.maxCostPerCall': 1000, 'gatewayImages.mcp.maxCostPerSession': 1000, 'editor.tabSize': 7 }));
    try {
      await waitUntil(() => vscode.workspace.getConfiguration('editor').inspect('tabSize')?.workspaceValue === 7, 10_000, 'the workspace settings read');
      const paidBefore = (await paidRequests()).length;
      // aurora-1 reserves ₽4.00.
      await user.update('maxCostPerCall', 3, vscode.ConfigurationTarget.Global);
      const perCall = await invoke({ prompt: 'Above the per-call cap', model: 'aurora-1' });
      assert.match(perCall, /reserves ₽4\.00, above the per-call cap of ₽3\.00.* Nothing was sent\./s, perCall);
      await user.update('maxCostPerCall', undefined, vscode.ConfigurationTarget.Global);
      await user.update('maxCostPerSession', 0, vscode.ConfigurationTarget.Global);
      const perSession = await invoke({ prompt: 'Above the session cap', model: 'aurora-1' });
      assert.match(perSession, /only ₽0\.00 of the session cap of ₽0\.00 is left.* Nothing was sent\./s, perSession);
      assert.strictEqual((await paidRequests()).length, paidBefore, 'a call above a cap was sent');
    } finally {
      await user.update('maxCostPerCall', undefined, vscode.ConfigurationTarget.Global);
      await user.update('maxCostPerSession', undefined, vscode.ConfigurationTarget.Global);
      if (previous === undefined) fs.rmSync(file, { force: true });
      else fs.writeFileSync(file, previous);
    }
  });
});
