// Project styles inside VS Code against the emulator: Generate Image from the palette with a style
// (its steps answered like a person would), a prompt file whose lines name their styles, a
// comparison with one style, and Regenerate after the style changed (the same request as before).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, api, captureUi, closeAllEditors, paidRequests, prepareSuite, rejectionOf, studioTabs, waitUntil, workspaceRoot } from './support';

interface Sent {
  path: string;
  prompt?: string;
  fingerprint?: string;
  status: number;
  paid: boolean;
}
interface Result {
  files: vscode.Uri[];
}
interface Prefill {
  request: Record<string, unknown> & { model: string; prompt: string };
  references: string[];
  source: 'png' | 'history';
  style?: { name: string; values: Record<string, unknown> };
}

const sentRequests = async () => (await admin<{ requests: Sent[] }>('GET', 'requests')).requests.filter((r) => r.paid && r.status === 200);

const STYLES = {
  styles: {
    base: { promptSuffix: ', pastel colours', options: { seed: 11 } },
    docs: {
      extends: 'base',
      description: 'Flat illustrations for the docs',
      model: 'sketch-mini',
      promptPrefix: 'Flat illustration:',
      options: { aspect_ratio: '4:3' },
      outputFolder: 'styled/docs',
      fileNamePattern: '{slug}-{seed}-{index}',
    },
    hero: {
      model: 'aurora-1',
      promptPrefix: 'Hero banner:',
      options: { aspect_ratio: '16:9', seed: 3 },
      references: ['images/sample.png'],
      outputFolder: 'styled/hero',
    },
  },
};

/** The results journal's records (summary then details) as the extension wrote them. */
async function journal(): Promise<{ put: { files: string[]; style?: { name: string; values: Record<string, unknown> } } }[]> {
  const file = (await api()).testing!.resultsJournal;
  await waitUntil(() => fs.existsSync(file), 5_000, 'the results journal');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line.split('\t')[0]!));
}

/** The record of the last results that hold `file`. */
async function recordOf(file: string) {
  return (await journal()).reverse().find((r) => r.put.files.includes(file));
}

/**
 * Answers the quick picks and input boxes of a command as a person would: each step's chooser
 * picks an item (by its label) of what the extension offers; what each step offered is kept.
 */
function answerPalette(steps: { pick?: string; type?: string; send?: boolean }[]) {
  const window = vscode.window as unknown as Record<string, unknown>;
  const saved = ['createQuickPick', 'showQuickPick', 'showInputBox'].map((name) => [name, window[name]] as const);
  const offered: { title?: string; items: vscode.QuickPickItem[]; active?: string }[] = [];
  // A step the test did not answer is cancelled, as Escape would.
  const next = () => steps.shift() ?? { pick: '\u0000' };
  window.createQuickPick = () => {
    const accept: (() => void)[] = [];
    const hide: (() => void)[] = [];
    const picker = {
      items: [] as vscode.QuickPickItem[],
      activeItems: [] as vscode.QuickPickItem[],
      selectedItems: [] as vscode.QuickPickItem[],
      onDidAccept: (listener: () => void) => accept.push(listener),
      onDidHide: (listener: () => void) => hide.push(listener),
      onDidTriggerItemButton: () => undefined,
      show: () =>
        void (async () => {
          // Like a person, waits for the list to fill (the catalog may still be loading).
          await waitUntil(() => picker.items.length > 0, 10_000, 'the quick pick to fill');
          const step = next();
          offered.push({ title: (picker as { title?: string }).title, items: [...picker.items], active: picker.activeItems[0]?.label });
          const item = step.pick === undefined ? picker.activeItems[0] : picker.items.find((i) => i.label === step.pick);
          if (!item) return hide.forEach((h) => h());
          picker.selectedItems = [item];
          accept.forEach((a) => a());
        })(),
      dispose: () => undefined,
    };
    return picker;
  };
  window.showInputBox = () => Promise.resolve(next().type);
  window.showQuickPick = async (items: Thenable<vscode.QuickPickItem[]> | vscode.QuickPickItem[]) => {
    const list = await items;
    const step = next();
    offered.push({ items: list });
    return step.send ? list[0] : list.find((i) => i.label === step.pick);
  };
  return {
    offered,
    restore: () => {
      for (const [name, original] of saved) window[name] = original;
    },
  };
}

describe('Project styles', function () {
  this.timeout(90_000);
  const stylesFile = () => path.join(workspaceRoot(), '.gateway-images', 'styles.json');
  const writeStyles = (styles: unknown) => {
    fs.mkdirSync(path.dirname(stylesFile()), { recursive: true });
    fs.writeFileSync(stylesFile(), JSON.stringify(styles, null, 2));
  };

  before(async () => {
    await prepareSuite();
    await vscode.workspace.getConfiguration('gatewayImages').update('embedProvenance', undefined, vscode.ConfigurationTarget.Global);
  });
  beforeEach(() => writeStyles(STYLES));
  afterEach(closeAllEditors);
  after(() => {
    // Other suites' palettes must not meet a Style step.
    for (const dir of ['.gateway-images', 'styled', 'styled-batch']) fs.rmSync(path.join(workspaceRoot(), dir), { recursive: true, force: true });
  });

  it("Generate Image from the palette: a Style step, the style's model first, the review shows the prompt as sent; its folder and pattern", async () => {
    const before = (await sentRequests()).length;
    const palette = answerPalette([{ pick: 'docs' }, {}, { type: 'a lighthouse' }, { send: true }]);
    let result: Result;
    try {
      result = await vscode.commands.executeCommand<Result>('gatewayImages.generate');
    } finally {
      palette.restore();
    }
    const [styleStep, modelStep, review] = palette.offered;
    assert.deepStrictEqual(
      styleStep!.items.map((i) => i.label),
      ['$(circle-slash) No style', 'base', 'docs', 'hero'],
    );
    assert.strictEqual(modelStep!.active, 'sketch-mini', "the style's model is offered first");
    const prompt = review!.items.find((i) => i.label === 'Prompt sent');
    assert.strictEqual(prompt?.detail, 'Flat illustration: a lighthouse, pastel colours');
    assert.match(review!.items.find((i) => i.label === 'Aspect ratio')?.description ?? '', /^4:3 · style docs/);
    assert.match(review!.items.find((i) => i.label === 'Seed')?.description ?? '', /^11 · style docs/);

    const sent = (await sentRequests()).slice(before);
    assert.strictEqual(sent.length, 1);
    assert.strictEqual(sent[0]!.prompt, 'Flat illustration: a lighthouse, pastel colours');
    const file = result!.files[0]!.fsPath;
    assert.strictEqual(path.relative(workspaceRoot(), file), path.join('styled', 'docs', 'flat-illustration-a-lighthouse-pastel-11-1.png'));
    const record = await recordOf(file);
    assert.strictEqual(record?.put.style?.name, 'docs');
    assert.strictEqual(record?.put.style?.values.promptPrefix, 'Flat illustration:');

    // The last style is remembered for this workspace (the model step is then cancelled).
    const again = answerPalette([{}]);
    try {
      await vscode.commands.executeCommand('gatewayImages.generate');
    } finally {
      again.restore();
    }
    assert.strictEqual(again.offered[0]!.active, 'docs');
  });

  it('Edit Styles makes the file with an example and opens it; the editor checks it against the schema', async () => {
    fs.rmSync(path.dirname(stylesFile()), { recursive: true });
    const uri = await vscode.commands.executeCommand<vscode.Uri>('gatewayImages.editStyles');
    assert.strictEqual(uri.fsPath, stylesFile());
    assert.deepStrictEqual(Object.keys((JSON.parse(fs.readFileSync(stylesFile(), 'utf8')) as { styles: object }).styles), ['example']);
    assert.strictEqual(vscode.window.activeTextEditor?.document.uri.fsPath, stylesFile());
    // A field that does not exist and a number out of range: the schema (served by the extension) names both.
    writeStyles({ styles: { bad: { modle: 'aurora-1', options: { n: 11 } } } });
    const problems = () => vscode.languages.getDiagnostics(uri).map((d) => d.message);
    await waitUntil(() => problems().length >= 2, 30_000, 'the schema to check the file').catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(problems())}`, { cause: error });
    });
    assert.ok(
      problems().some((m) => /modle/.test(m)),
      JSON.stringify(problems()),
    );
    assert.ok(
      problems().some((m) => /10/.test(m)),
      JSON.stringify(problems()),
    );
  });

  it('Generate Images from File: each .jsonl line with its own style (or none); a bad style refuses the file, naming line, style and field', async () => {
    const dir = path.join(workspaceRoot(), 'styled-batch');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'lines.jsonl');
    const lines = [
      { prompt: 'a red cat', style: 'docs' },
      { prompt: 'a blue dog', style: 'hero', seed: 4 },
      { prompt: 'a green fox', model: 'sketch-mini', size: '64x64' },
    ];
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    const before = (await sentRequests()).length;
    const result = await (await api()).generateFromFile({ file });
    assert.strictEqual(result.done, 3, JSON.stringify(result.lines));
    const prompts = (await sentRequests())
      .slice(before)
      .map((r) => r.prompt)
      .sort();
    assert.deepStrictEqual(prompts, ['Flat illustration: a red cat, pastel colours', 'Hero banner: a blue dog', 'a green fox']);
    const folders = result.lines.map((l) => path.relative(workspaceRoot(), path.dirname(l.files[0]!)));
    assert.deepStrictEqual(folders, [path.join('styled', 'docs'), path.join('styled', 'hero'), 'generated-images']);
    assert.match(path.basename(result.lines[1]!.files[0]!), /^\d{4}-\d{2}-\d{2}-hero-banner-a-blue-dog-aurora-1-1\.png$/);
    assert.strictEqual((await recordOf(result.lines[1]!.files[0]!))?.put.style?.name, 'hero');
    // Run again: every line is done (the styled lines are recognised by the request the style made).
    const rerun = await (await api()).generateFromFile({ file });
    assert.strictEqual(rerun.skipped, 3);

    fs.writeFileSync(file, [...lines, { prompt: 'a grey owl', style: 'docs', model: 'lumen-xl' }].map((l) => JSON.stringify(l)).join('\n'));
    const sentBefore = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generateFromFile', { file }));
    assert.match(
      error.message,
      /line 4, style\.options\.aspect_ratio: \.gateway-images\/styles\.json, style "docs", "options\.aspect_ratio": "aspect_ratio" must be one of/,
    );
    assert.strictEqual((await paidRequests()).length, sentBefore, 'nothing may be sent');
  });

  it('the chat tool with a style: the request as the style makes it, saved into its folder', async () => {
    const before = (await sentRequests()).length;
    const result = await vscode.lm.invokeTool('gatewayImages_generateImage', { input: { prompt: 'a kite', style: 'docs' }, toolInvocationToken: undefined });
    const text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('\n');
    assert.match(text, /Generated 1 image with sketch-mini/, text);
    assert.match(text, /- styled\/docs\/flat-illustration-a-kite-pastel-colours-11-1(-\d+)?\.png/, text);
    const sent = (await sentRequests()).slice(before);
    assert.deepStrictEqual(
      sent.map((r) => r.prompt),
      ['Flat illustration: a kite, pastel colours'],
    );
  });

  it("Compare Models with one style: each model gets the style's words and options; the images land in its folder", async () => {
    writeStyles({ styles: { banner: { promptPrefix: 'Banner:', options: { aspect_ratio: '16:9', seed: 5 }, outputFolder: 'styled/compare' } } });
    const before = (await sentRequests()).length;
    const result = await (await api()).compareModels({ prompt: 'a harbour', models: ['aurora-1', 'lumen-xl'], style: 'banner' });
    assert.deepStrictEqual(
      result.entries.map((e) => e.status),
      ['done', 'done'],
    );
    const sent = (await sentRequests()).slice(before);
    assert.deepStrictEqual(
      sent.map((r) => r.prompt),
      ['Banner: a harbour', 'Banner: a harbour'],
    );
    for (const entry of result.entries) {
      assert.strictEqual(path.relative(workspaceRoot(), path.dirname(entry.files[0]!)), path.join('styled', 'compare'));
      assert.match(path.basename(entry.files[0]!), new RegExp(`^${entry.model}-banner-a-harbour-1\\.png$`));
      assert.strictEqual((await recordOf(entry.files[0]!))?.put.style?.name, 'banner');
    }
  });

  it('Regenerate after the style changed: the studio gets the request as it was sent (the style named, not applied), and sending it again is the same request', async () => {
    const first = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { style: 'hero', prompt: 'a ship' });
    const firstSent = (await sentRequests()).at(-1)!;
    assert.strictEqual(firstSent.prompt, 'Hero banner: a ship');
    // The team changes the style afterwards: other words, ratio and seed, no reference.
    writeStyles({ styles: { hero: { model: 'aurora-1', promptPrefix: 'Poster:', options: { aspect_ratio: '1:1', seed: 8 } } } });

    for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
    await waitUntil(() => studioTabs().length === 0, 5_000, 'no studio tab left');
    const ui = captureUi();
    let prefill: Prefill;
    try {
      prefill = await vscode.commands.executeCommand<Prefill>('gatewayImages.regenerate', first.files[0]);
      const filled = () =>
        ui.records
          .filter((r) => r.kind === 'webview-message')
          .map((r) => JSON.parse(r.text) as { type: string; form?: { style?: string; prompt: string }; madeWithStyle?: string })
          .find((m) => m.type === 'fillForm');
      await waitUntil(() => !!filled(), 30_000, 'the studio filled');
      assert.strictEqual(filled()!.madeWithStyle, 'hero');
      assert.strictEqual(filled()!.form!.style, undefined, 'the style was chosen again: its new values would apply');
      assert.strictEqual(filled()!.form!.prompt, 'Hero banner: a ship');
    } finally {
      ui.restore();
    }
    assert.deepStrictEqual(prefill.request, { model: 'aurora-1', prompt: 'Hero banner: a ship', aspect_ratio: '16:9', seed: 3 });
    assert.strictEqual(prefill.style?.name, 'hero');
    assert.deepStrictEqual(prefill.references, [path.join(workspaceRoot(), 'images', 'sample.png')]);

    // What the studio sends for that form: the recorded request and references, whatever the style says now.
    const edited = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', { ...prefill.request, images: prefill.references });
    for (const file of edited.files) fs.rmSync(file.fsPath);
    const again = (await sentRequests()).at(-1)!;
    assert.strictEqual(again.prompt, firstSent.prompt);
    assert.strictEqual(again.fingerprint, firstSent.fingerprint, 'the request differs from the first one');
  });
});
