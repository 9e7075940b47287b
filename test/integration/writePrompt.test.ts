// Generate Image for Selection with a prompt written by the editor's language model, in real VS
// Code: a provider registered by the fixture extension test/fixtures/lm-provider answers. The
// person's pickers are answered through uiDriver.ts; the gateway is the emulator, whose request
// log says which prompt it received.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, closeAllEditors, paidRequests, prepareSuite, workspaceRoot } from './support';
import { driveUi, pickLabel, type UiDriver } from './uiDriver';

interface ProviderFixture {
  state: { answer: string; mode: 'answer' | 'hold' | 'refuse'; requests: string[]; cancelled: number };
  onDidStartRequest: vscode.Event<string>;
  setAvailable(value: boolean): Promise<void>;
}

const PARAGRAPH =
  'Gateway Images makes and edits images with the image models of an API gateway, billed in rubles, without leaving the editor: the estimate before, the cost after.';

async function openArticle(name: string): Promise<vscode.TextEditor> {
  const file = path.join(workspaceRoot(), 'docs', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `# Gateway Images\n\n${PARAGRAPH}\n\nMore text.\n`);
  const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file));
  const line = editor.document.lineAt(2);
  editor.selection = new vscode.Selection(line.range.start, line.range.end);
  return editor;
}

async function lastPaidPrompt(): Promise<string | undefined> {
  const log = await admin<{ requests: { paid: boolean; prompt?: string }[] }>('GET', 'requests');
  return log.requests.filter((r) => r.paid).at(-1)?.prompt;
}

/** The provider fixture, or undefined where this VS Code has no provider API (before 1.104). */
async function providerFixture(): Promise<ProviderFixture | undefined> {
  if (typeof (vscode.lm as { registerLanguageModelChatProvider?: unknown }).registerLanguageModelChatProvider !== 'function') return undefined;
  const extension = vscode.extensions.getExtension<ProviderFixture>('gateway-images-test.lm-provider');
  assert.ok(extension, 'the lm-provider fixture is not installed');
  return extension.activate();
}

function skipWithoutProvider(context: Mocha.Context, fixture: ProviderFixture | undefined): asserts fixture is ProviderFixture {
  if (fixture) return;
  console.log(`      skipped on VS Code ${vscode.version}: vscode.lm.registerLanguageModelChatProvider is stable only from VS Code 1.104`);
  context.skip();
}

const run = () => vscode.commands.executeCommand('gatewayImages.generateForSelection');
const isSend = (item: vscode.QuickPickItem) => item.label.startsWith('$(sparkle)');

describe('Prompt written by a language model (Generate Image for Selection)', function () {
  this.timeout(60_000);
  let fixture: ProviderFixture | undefined;
  let ui: UiDriver | undefined;

  before(async () => {
    await prepareSuite();
    fixture = await providerFixture();
  });

  afterEach(async () => {
    ui?.restore();
    ui = undefined;
    await vscode.workspace.getConfiguration('gatewayImages').update('writePromptWithLanguageModel', undefined, vscode.ConfigurationTarget.Global);
    if (fixture) {
      fixture.state.mode = 'answer';
      await fixture.setAvailable(true);
    }
    await vscode.workspace.saveAll(false);
    await closeAllEditors();
  });

  it('the gateway receives the prompt the person accepted: written by the model, edited in the review', async function () {
    skipWithoutProvider(this, fixture);
    fixture.state.answer = '**Prompt:** "A brass printing press turning out glowing pictures, a ruble coin beside it"';
    await openArticle('cover.md');
    let review: vscode.QuickPickItem[] = [];
    ui = driveUi([
      pickLabel('sketch-mini'),
      pickLabel('Test Writer'),
      pickLabel('Prompt', (items) => (review = items)),
      { input: (value) => `${value}, morning light` },
      { pick: isSend },
    ]);
    await run();
    assert.deepStrictEqual(ui.left, [], ui.messages.join('\n'));
    const promptLine = review.find((item) => item.label.includes('Prompt'));
    assert.strictEqual(promptLine?.detail, 'A brass printing press turning out glowing pictures, a ruble coin beside it');
    assert.match(promptLine?.description ?? '', /Test Writer/);
    assert.ok(
      review.some((item) => isSend(item) && /\d/.test(item.label)),
      'the review shows the reservation',
    );
    assert.strictEqual(await lastPaidPrompt(), 'A brass printing press turning out glowing pictures, a ruble coin beside it, morning light');
    const instruction = fixture.state.requests.at(-1) ?? '';
    assert.ok(instruction.includes(PARAGRAPH), 'the model got the selection');
    assert.match(instruction, /no text/i);
    assert.match(instruction, /Markdown/);
  });

  it('no language model: the selection is sent, and one line says why', async function () {
    if (fixture) await fixture.setAvailable(false);
    await openArticle('nomodel.md');
    let review: vscode.QuickPickItem[] = [];
    ui = driveUi([pickLabel('sketch-mini'), { pick: isSend, see: (items) => (review = items) }]);
    await run();
    assert.deepStrictEqual(ui.left, [], ui.messages.join('\n'));
    assert.strictEqual(await lastPaidPrompt(), PARAGRAPH);
    const why = 'No language model is available in VS Code, so the selected text is the prompt.';
    assert.deepStrictEqual(
      ui.messages.filter((m) => m === why),
      [why],
    );
    assert.strictEqual(review.find((item) => item.label.includes('Prompt'))?.description, why);
  });

  it('no language model and nothing selected: the person writes the prompt, and the line says so', async () => {
    if (fixture) await fixture.setAvailable(false);
    const editor = await openArticle('noselection.md');
    editor.selection = new vscode.Selection(0, 0, 0, 0);
    ui = driveUi([pickLabel('sketch-mini'), { input: () => 'a harbour at night' }, { pick: isSend }]);
    await run();
    assert.deepStrictEqual(ui.left, [], ui.messages.join('\n'));
    assert.strictEqual(await lastPaidPrompt(), 'a harbour at night');
    assert.ok(ui.messages.includes('No language model is available in VS Code, so you write the prompt yourself.'), ui.messages.join('\n'));
  });

  it('cancel while the model writes: nothing is sent to the gateway', async function () {
    skipWithoutProvider(this, fixture);
    await vscode.workspace.getConfiguration('gatewayImages').update('writePromptWithLanguageModel', 'always', vscode.ConfigurationTarget.Global);
    fixture.state.mode = 'hold';
    const cancelledBefore = fixture.state.cancelled;
    await openArticle('cancel.md');
    const requestsBefore = (await admin<{ requests: unknown[] }>('GET', 'requests')).requests.length;
    ui = driveUi([pickLabel('sketch-mini')]);
    const started = new Promise<void>((resolve) => fixture!.onDidStartRequest(() => resolve()));
    const command = run();
    const cancel = await ui.progress;
    await started; // the model is writing
    cancel();
    assert.strictEqual(await command, undefined);
    assert.strictEqual(fixture.state.cancelled, cancelledBefore + 1, 'the model request was cancelled');
    assert.ok(
      ui.messages.some((m) => m.includes('nothing was sent')),
      ui.messages.join('\n'),
    );
    // No request at all reached the emulator after the catalog (no generation, paid or not).
    const after = (await admin<{ requests: { method: string; path: string }[] }>('GET', 'requests')).requests.slice(requestsBefore);
    assert.deepStrictEqual(
      after.filter((r) => r.method === 'POST'),
      [],
    );
  });

  it('consent declined (the model refuses): the selection is sent, and the line says so', async function () {
    skipWithoutProvider(this, fixture);
    await vscode.workspace.getConfiguration('gatewayImages').update('writePromptWithLanguageModel', 'always', vscode.ConfigurationTarget.Global);
    fixture.state.mode = 'refuse';
    await openArticle('refused.md');
    const paidBefore = (await paidRequests()).length;
    ui = driveUi([pickLabel('sketch-mini'), { pick: isSend }]);
    await run();
    assert.strictEqual((await paidRequests()).length, paidBefore + 1);
    assert.strictEqual(await lastPaidPrompt(), PARAGRAPH);
    assert.ok(
      ui.messages.some((m) => m === 'Gateway Images may not use Test Writer (permission declined), so the selected text is the prompt.'),
      ui.messages.join('\n'),
    );
  });
});
