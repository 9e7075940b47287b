// The chat tool gatewayImages_editImage, invoked through vscode.lm.invokeTool without a chat request
// (VS Code asks its confirmation through the dialog service, auto-confirmed in tests), and its
// confirmation read through the test hook (prepareChatTool): model, references, reservation, range.
// References outside the workspace are refused before anything is sent.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, closeAllEditors, emulator, paidRequests, workspaceRoot, prepareSuite } from './support';
import { assertPreviews, textOf } from './chatToolSupport';

const TOOL = 'gatewayImages_editImage';
const SAMPLE = 'images/sample.png';

async function invoke(input: Record<string, unknown>): Promise<vscode.LanguageModelToolResult> {
  return vscode.lm.invokeTool(TOOL, { input, toolInvocationToken: undefined });
}

async function confirmation(input: Record<string, unknown>): Promise<{ title: string; message: string; invocation: string }> {
  const prepared = await (await api()).testing!.prepareChatTool(TOOL, input);
  // Outside text is written with numeric character references (core/common/markdownText.ts): read as the person sees it.
  const text = (value: string | vscode.MarkdownString | undefined) =>
    (typeof value === 'string' ? value : (value?.value ?? ''))
      .replace(/\\([^\sA-Za-z0-9])/g, '$1') // appendText's backslash escapes
      .replace(/&#(x?)([0-9a-f]+);/gi, (_, hex: string, code: string) => String.fromCodePoint(parseInt(code, hex ? 16 : 10)))
      .replace(/&nbsp;/g, ' '); // appendText keeps runs of spaces as &nbsp; (VS Code 1.139 does so for every space)
  return {
    title: prepared?.confirmationMessages?.title ?? '',
    message: text(prepared?.confirmationMessages?.message),
    invocation: text(prepared?.invocationMessage),
  };
}

describe('Chat tool gatewayImages_editImage', function () {
  this.timeout(60_000);
  let outsideDir: string;

  before(async () => {
    await prepareSuite();
    // 0 = the job always asks: a second confirmation would be refused in tests and fail the run.
    await vscode.workspace.getConfiguration('gatewayImages').update('confirmCostAbove', 0, vscode.ConfigurationTarget.Global);
    outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-edit-outside-'));
    fs.copyFileSync(path.join(workspaceRoot(), SAMPLE), path.join(outsideDir, 'outside.png'));
  });

  after(async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
    fs.rmSync(outsideDir, { recursive: true, force: true });
  });

  afterEach(closeAllEditors);

  it('is registered with the schema of package.json (prompt and images required)', () => {
    const tool = vscode.lm.tools.find((t) => t.name === TOOL);
    assert.ok(tool, `lm.tools lacks ${TOOL}: ${vscode.lm.tools.map((t) => t.name).join(', ')}`);
    const schema = tool.inputSchema as { required?: string[]; properties?: Record<string, unknown> };
    assert.deepStrictEqual(schema.required, ['prompt', 'images']);
    for (const field of ['prompt', 'images', 'model', 'n', 'aspect_ratio', 'output_format', 'seed', 'style'])
      assert.ok(schema.properties?.[field], `schema lacks ${field}`);
  });

  it('its confirmation shows the model, the references, the prompt, the reservation and the expected range; nothing is sent', async () => {
    const paidBefore = (await paidRequests()).length;
    const shown = await confirmation({ prompt: 'Make the sky stormy', images: [SAMPLE], model: 'aurora-1' });
    assert.match(shown.title, /^Edit 1 image with aurora-1\?$/, shown.title);
    assert.match(shown.message, /aurora-1/, shown.message);
    assert.match(shown.message, /images\/sample\.png/, shown.message);
    assert.match(shown.message, /Make the sky stormy/, shown.message);
    // aurora-1 reserves ₽4.00.
    assert.match(shown.message, /reserves ₽4\.00 before generating and charges the actual cost, expected ₽.+/, shown.message);
    assert.strictEqual((await paidRequests()).length, paidBefore, 'the confirmation sent a paid request');
  });

  it('a reference outside the workspace gets no confirmation and is refused as text; no paid request', async () => {
    const paidBefore = (await paidRequests()).length;
    for (const image of ['../outside.png', path.join(outsideDir, 'outside.png'), vscode.Uri.file(path.join(outsideDir, 'outside.png')).toString()]) {
      const shown = await confirmation({ prompt: 'Steal it', images: [image], model: 'aurora-1' });
      assert.strictEqual(shown.title, '', `a confirmation for ${image}`);
      const text = textOf(await invoke({ prompt: 'Steal it', images: [SAMPLE, image], model: 'aurora-1' }));
      assert.match(text, /^Image editing failed: .*leads outside the workspace folder.* Nothing was sent\./s, text);
      assert.ok(!text.includes(emulator().keys.unlimited), 'the answer contains the key');
    }
    const missing = textOf(await invoke({ prompt: 'x', images: 'images/sample.png', model: 'aurora-1' }));
    assert.match(missing, /^Image editing failed: .*"images" must be a list.* Nothing was sent\./s, missing);
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
  });

  it('edits through invokeTool: one paid request, the result next to the source, previews where VS Code has data parts', async () => {
    const paidBefore = (await paidRequests()).length;
    const result = await invoke({ prompt: 'Make it blue', images: [SAMPLE], model: 'aurora-1' });
    const text = textOf(result);
    assert.match(text, /^Edited into 1 image with aurora-1\. Cost .+, balance after .+\./, text);
    const saved = text
      .split('\n')
      .filter((line) => line.startsWith('- '))
      .map((line) => line.slice(2));
    assert.strictEqual(saved.length, 1, text);
    assert.strictEqual(path.dirname(saved[0]!), 'images', text);
    assert.ok(fs.existsSync(path.join(workspaceRoot(), saved[0]!)), `${saved[0]} does not exist`);
    assert.strictEqual((await paidRequests()).length, paidBefore + 1, 'exactly one paid request');
    await assertPreviews(result, 1);
  });

  it("is held to the agents' per-call cap: refused before sending, as text", async () => {
    const user = vscode.workspace.getConfiguration('gatewayImages.mcp');
    const paidBefore = (await paidRequests()).length;
    try {
      await user.update('maxCostPerCall', 3, vscode.ConfigurationTarget.Global);
      const text = textOf(await invoke({ prompt: 'Above the per-call cap', images: [SAMPLE], model: 'aurora-1' }));
      assert.match(text, /reserves ₽4\.00, above the per-call cap of ₽3\.00.* Nothing was sent\./s, text);
      assert.strictEqual((await paidRequests()).length, paidBefore, 'a call above the cap was sent');
    } finally {
      await user.update('maxCostPerCall', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
