// Every entry point decides its output folder by the one rule (core/files/outputFolder.ts): generate,
// edit, compare with images, prompt files, the studio (through its message protocol), the chat tool
// and a project style. For each, a real symbolic link in the workspace that leads outside is refused
// before anything is paid, nothing is written outside, and a relative folder inside works. Inside
// VS Code against the emulator.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, closeAllEditors, paidRequests, prepareSuite, rejectionOf, studioTabs, waitUntil, workspaceRoot } from './support';

interface Result {
  files: vscode.Uri[];
}

/** Every file below `dir`, relative. */
function filesBelow(dir: string): string[] {
  return fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort() : [];
}

/** The studio's page, played by the test: what the page sends goes through the panel's own message handler. */
function captureStudioPage() {
  const window = vscode.window as unknown as Record<string, unknown>;
  const original = window.createWebviewPanel as typeof vscode.window.createWebviewPanel;
  const listeners: ((message: unknown) => unknown)[] = [];
  const posted: { type: string; requestId?: number; ok?: boolean; files?: string[]; error?: string }[] = [];
  window.createWebviewPanel = (...args: Parameters<typeof vscode.window.createWebviewPanel>) => {
    const panel = original.apply(vscode.window, args);
    const webview = panel.webview;
    const subscribe = webview.onDidReceiveMessage.bind(webview);
    Object.defineProperty(webview, 'onDidReceiveMessage', {
      configurable: true,
      value: (listener: (message: unknown) => unknown, thisArg?: unknown, disposables?: vscode.Disposable[]) => {
        listeners.push((message) => listener.call(thisArg, message));
        return subscribe(listener, thisArg, disposables);
      },
    });
    const post = webview.postMessage.bind(webview);
    Object.defineProperty(webview, 'postMessage', {
      configurable: true,
      value: (message: (typeof posted)[number]) => {
        posted.push(message);
        return post(message);
      },
    });
    return panel;
  };
  return {
    listening: () => listeners.length > 0,
    send: (message: unknown) => listeners.forEach((listener) => listener(message)),
    done: (requestId: number) => posted.find((m) => m.type === 'generateDone' && m.requestId === requestId),
    restore: () => (window.createWebviewPanel = original),
  };
}

describe('Output folders through links', function () {
  this.timeout(90_000);
  let suite: string;
  let rel: string;
  let outside: string;
  let photo: string;
  let hadStyles: string | undefined;
  const config = () => vscode.workspace.getConfiguration('gatewayImages');
  const setOutputDirectory = async (value: string | undefined) => {
    await config().update('outputDirectory', value, vscode.ConfigurationTarget.Global);
    await waitUntil(() => config().inspect('outputDirectory')?.globalValue === value, 5_000, `outputDirectory ${value}`);
  };
  const stylesFile = () => path.join(workspaceRoot(), '.gateway-images', 'styles.json');

  before(async () => {
    await prepareSuite();
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-links-outside-')));
    fs.mkdirSync(path.join(outside, 'photos'));
    suite = fs.mkdtempSync(path.join(workspaceRoot(), 'output-links-'));
    rel = path.basename(suite);
    photo = path.join(suite, 'photo.png');
    fs.copyFileSync(path.join(workspaceRoot(), 'images', 'sample.png'), photo);
    fs.copyFileSync(photo, path.join(outside, 'photos', 'shared.png'));
    // What a cloned repository can ship: a folder link out (its target not made yet), and a photos folder that is a link out.
    fs.symlinkSync(path.join(outside, 'out'), path.join(suite, 'out-link'), 'dir');
    fs.symlinkSync(path.join(outside, 'photos'), path.join(suite, 'shared-photos'), 'dir');
    hadStyles = fs.existsSync(stylesFile()) ? fs.readFileSync(stylesFile(), 'utf8') : undefined;
  });

  after(async () => {
    await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
    if (hadStyles === undefined) fs.rmSync(path.dirname(stylesFile()), { recursive: true, force: true });
    else fs.writeFileSync(stylesFile(), hadStyles);
    fs.rmSync(suite, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  afterEach(closeAllEditors);

  /** Nothing outside but the photo the test put there; the target of out-link (not made yet) still is not. */
  const assertNothingOutside = () => {
    assert.deepStrictEqual(filesBelow(outside), [path.join('photos', 'shared.png')], 'something was written outside');
    assert.ok(!fs.existsSync(path.join(outside, 'out')), 'the folder behind the link was made');
  };

  /** The call is refused as a validation error naming `field` and the link, with 0 paid requests and nothing outside. */
  async function refusedThroughLink(call: () => Thenable<unknown>, field: string): Promise<void> {
    const paidBefore = (await paidRequests()).length;
    const error = await rejectionOf(call());
    assert.strictEqual(error.kind, 'validation', `${error.name}: ${error.message}`);
    assert.strictEqual(error.field, field, error.message);
    assert.match(error.message, /leads outside the workspace folder through a symbolic link/);
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
    assertNothingOutside();
  }

  /** The files were made in `folder`, and nothing outside.*/
  function assertInside(files: readonly (vscode.Uri | string)[], folder: string): void {
    assert.ok(files.length > 0, 'no file');
    for (const file of files) {
      const fsPath = typeof file === 'string' ? file : file.fsPath;
      assert.strictEqual(path.dirname(fsPath), folder, fsPath);
      assert.ok(fs.existsSync(fsPath), fsPath);
    }
    assertNothingOutside();
  }

  it('Generate Image: an argument through a link out is refused (relative or absolute); a relative folder inside works', async () => {
    const generate = (outputDirectory: string) =>
      vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Links', outputDirectory });
    await refusedThroughLink(() => generate(`${rel}/out-link`), 'outputDirectory');
    await refusedThroughLink(() => generate(path.join(suite, 'out-link', 'deeper')), 'outputDirectory');
    assertInside((await generate(`${rel}/generated`)).files, path.join(suite, 'generated'));
  });

  it('Edit Image: an argument through a link out, and "next to" a source in a linked folder out, are refused; a relative folder inside works', async () => {
    const edit = (images: string[], outputDirectory?: string) =>
      vscode.commands.executeCommand<Result>('gatewayImages.editImage', { images, model: 'aurora-1', prompt: 'Make it blue', outputDirectory });
    // Relative to the source's folder, like the results themselves.
    await refusedThroughLink(() => edit([photo], 'out-link'), 'outputDirectory');
    await refusedThroughLink(() => edit([photo], path.join(suite, 'out-link')), 'outputDirectory');
    await refusedThroughLink(() => edit([path.join(suite, 'shared-photos', 'shared.png')]), 'outputDirectory');
    assertInside((await edit([photo], 'edits')).files, path.join(suite, 'edits'));
  });

  it('Compare Models with images: an argument through a link out is refused; a relative folder inside works', async () => {
    const compare = (outputDirectory: string) =>
      vscode.commands.executeCommand<{ files: vscode.Uri[] }>('gatewayImages.compareModels', {
        prompt: 'Make it blue',
        models: ['aurora-1', 'vector-forge'],
        images: [photo],
        outputDirectory,
      });
    await refusedThroughLink(() => compare('out-link'), 'outputDirectory');
    await refusedThroughLink(() => compare(path.join(suite, 'out-link')), 'outputDirectory');
    const compared = await compare('compared');
    assert.strictEqual(compared.files.length, 2);
    assertInside(compared.files, path.join(suite, 'compared'));
  });

  it('Generate Images from File: an argument through a link out is refused (relative or absolute); a relative folder inside works', async () => {
    const gateway = await api();
    const file = path.join(suite, 'prompts.txt');
    fs.writeFileSync(file, 'a paper boat\n');
    const run = (outputDirectory: string) => gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    await refusedThroughLink(() => run(`${rel}/out-link`), 'outputDirectory');
    await refusedThroughLink(() => run(path.join(suite, 'out-link')), 'outputDirectory');
    const result = await run(`${rel}/batch`);
    assert.strictEqual(result.done, 1);
    assertInside(
      result.lines.flatMap((line) => line.files),
      path.join(suite, 'batch'),
    );
  });

  it("a project style's folder through a link out is refused, naming the style's field; one inside works", async () => {
    fs.mkdirSync(path.dirname(stylesFile()), { recursive: true });
    const styles = { leaky: { model: 'sketch-mini', outputFolder: `${rel}/out-link` }, tidy: { model: 'sketch-mini', outputFolder: `${rel}/styled` } };
    fs.writeFileSync(stylesFile(), JSON.stringify({ styles }));
    const generate = (style: string) => vscode.commands.executeCommand<Result>('gatewayImages.generate', { style, prompt: 'Styled links' });
    await refusedThroughLink(() => generate('leaky'), 'style.outputFolder');
    assertInside((await generate('tidy')).files, path.join(suite, 'styled'));
  });

  it('the studio (through its message protocol): the output folder setting through a link out is refused; a relative folder inside works', async () => {
    for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
    await waitUntil(() => studioTabs().length === 0, 5_000, 'no studio tab left');
    const page = captureStudioPage();
    try {
      await vscode.commands.executeCommand('gatewayImages.openStudio');
      await waitUntil(page.listening, 10_000, 'the studio listening to its page');
      page.send({ type: 'ready', requestId: 900_000, references: [] });
      const form = { model: 'sketch-mini', prompt: 'From the studio', n: 1, params: {}, references: [] };
      const send = async (requestId: number) => {
        page.send({ type: 'generate', requestId, form });
        await waitUntil(() => !!page.done(requestId), 30_000, `the studio's answer to ${requestId}`);
        return page.done(requestId)!;
      };

      await setOutputDirectory(`${rel}/out-link`);
      const paidBefore = (await paidRequests()).length;
      const refused = await send(900_001);
      assert.strictEqual(refused.ok, false);
      assert.match(refused.error ?? '', /gatewayImages\.outputDirectory.*leads outside the workspace folder through a symbolic link/);
      assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
      assertNothingOutside();

      await setOutputDirectory(`${rel}/studio`);
      const made = await send(900_002);
      assert.strictEqual(made.ok, true, made.error);
      assertInside(made.files ?? [], path.join(suite, 'studio'));
    } finally {
      page.restore();
      await setOutputDirectory(undefined);
      for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
    }
  });

  it('the chat tool: the output folder setting through a link out is refused, nothing sent; a relative folder inside works', async () => {
    const invoke = async () => {
      const result = await vscode.lm.invokeTool('gatewayImages_generateImage', {
        input: { prompt: 'From chat', model: 'sketch-mini' },
        toolInvocationToken: undefined,
      });
      return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('\n');
    };
    try {
      await setOutputDirectory(`${rel}/out-link`);
      const paidBefore = (await paidRequests()).length;
      const refused = await invoke();
      assert.match(refused, /^Image generation failed: .*leads outside the workspace folder through a symbolic link.* Nothing was sent\./s, refused);
      assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');
      assertNothingOutside();

      await setOutputDirectory(`${rel}/chat`);
      const made = await invoke();
      const listed = made
        .split('\n')
        .filter((line) => line.startsWith('- '))
        .map((line) => path.join(workspaceRoot(), line.slice(2)));
      assert.strictEqual(listed.length, 1, made);
      assertInside(listed, path.join(suite, 'chat'));
    } finally {
      await setOutputDirectory(undefined);
    }
  });
});
