// Starter styles in real VS Code: without a styles file there is no Style step, and the review's
// Style row offers the built-in styles; with one, the Style step offers only the project's. "Save
// as Project Style…" writes one into .gateway-images/styles.json (made, other styles kept, a project
// style of the same name never replaced by arguments); a built-in style makes a request like a
// project style. Emulator.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, closeAllEditors, prepareSuite, rejectionOf, workspaceRoot } from './support';
import { driveUi, pickLabel, type UiDriver } from './uiDriver';

const stylesFile = () => path.join(workspaceRoot(), '.gateway-images', 'styles.json');

describe('Starter styles (built-in, Save as Project Style)', function () {
  this.timeout(60_000);
  let ui: UiDriver | undefined;

  before(async () => {
    await prepareSuite();
    fs.rmSync(stylesFile(), { force: true });
  });

  afterEach(async () => {
    ui?.restore();
    ui = undefined;
    await closeAllEditors();
  });

  after(() => fs.rmSync(path.dirname(stylesFile()), { recursive: true, force: true }));

  it("without a styles file there is no Style step (model, prompt, review); the review's Style row offers the built-in styles, and one makes the request", async () => {
    let offered: vscode.QuickPickItem[] = [];
    let review: vscode.QuickPickItem[] = [];
    let reviewAgain: vscode.QuickPickItem[] = [];
    ui = driveUi([
      pickLabel('sketch-mini'),
      { input: () => 'a red kite over the sea' },
      { pick: (i) => i.label === 'Style', see: (items) => (review = items) },
      pickLabel('Photo-real', (items) => (offered = items)),
      { pick: (i) => i.label.startsWith('$(sparkle)'), see: (items) => (reviewAgain = items) },
    ]);
    await vscode.commands.executeCommand('gatewayImages.generate');
    assert.deepStrictEqual(ui.left, [], ui.messages.join('\n'));
    // Three steps: the first picker was the model's (issue 42: it was the Style step's).
    assert.ok(!ui.shown[0]!.items.some((i) => i.label.includes('No style')), ui.shown[0]!.items.map((i) => i.label).join(', '));
    assert.strictEqual(review.find((i) => i.label === 'Style')?.description, 'No style');
    const names = offered.map((i) => i.label);
    for (const name of ['Photo-real', 'Flat illustration', 'Sketch']) assert.ok(names.includes(name), `${name} not offered: ${names.join(', ')}`);
    assert.ok(offered.find((i) => i.label === 'Photo-real')?.description?.startsWith('built-in'));
    // Back in the review, with the style on its row and the prompt as it will be sent.
    assert.strictEqual(reviewAgain.find((i) => i.label === 'Style')?.description, 'Photo-real');
    assert.match(reviewAgain.find((i) => i.label === 'Prompt sent')?.detail ?? '', /^a red kite over the sea, photorealistic/);
    const log = await admin<{ requests: { paid: boolean; prompt?: string }[] }>('GET', 'requests');
    assert.match(log.requests.filter((r) => r.paid).at(-1)?.prompt ?? '', /^a red kite over the sea, photorealistic/);
  });

  it('Save as Project Style writes valid styles JSON, keeps the file, refuses to replace a project style', async () => {
    const saved = await vscode.commands.executeCommand<string>('gatewayImages.saveStarterStyle', { style: 'Sketch' });
    assert.strictEqual(saved, 'Sketch');
    const written = JSON.parse(fs.readFileSync(stylesFile(), 'utf8')) as { styles: Record<string, Record<string, unknown>> };
    assert.deepStrictEqual(Object.keys(written.styles), ['Sketch']);
    assert.ok(typeof written.styles.Sketch!.model === 'string' && typeof written.styles.Sketch!.promptSuffix === 'string');
    await vscode.commands.executeCommand('gatewayImages.saveStarterStyle', { style: 'Photo-real', as: 'Photo' });
    assert.deepStrictEqual(Object.keys(JSON.parse(fs.readFileSync(stylesFile(), 'utf8')).styles), ['Sketch', 'Photo']);
    const before = fs.readFileSync(stylesFile(), 'utf8');
    const refused = await rejectionOf(vscode.commands.executeCommand('gatewayImages.saveStarterStyle', { style: 'Photo-real', as: 'Sketch' }));
    assert.strictEqual(refused.kind, 'validation');
    assert.match(refused.message, /already has a style "Sketch"/);
    assert.strictEqual(fs.readFileSync(stylesFile(), 'utf8'), before, 'the project style was replaced');
  });

  it("with a styles file the Style step offers only the project styles, and so does the review's Style row", async () => {
    let offered: vscode.QuickPickItem[] = [];
    let inReview: vscode.QuickPickItem[] = [];
    ui = driveUi([
      pickLabel('No style', (items) => (offered = items)),
      pickLabel('sketch-mini'),
      { input: () => 'a kite' },
      { pick: (i) => i.label === 'Style' },
      pickLabel('Photo', (items) => (inReview = items)),
      { pick: (i) => i.label.startsWith('$(sparkle)') },
    ]);
    await vscode.commands.executeCommand('gatewayImages.generate');
    assert.deepStrictEqual(ui.left, [], ui.messages.join('\n'));
    for (const items of [offered, inReview]) {
      const names = items.map((i) => i.label).filter((l) => !l.includes('No style'));
      assert.deepStrictEqual(names, ['Sketch', 'Photo']);
      assert.ok(items.every((i) => !i.description?.startsWith('built-in')));
    }
    const log = await admin<{ requests: { paid: boolean; prompt?: string }[] }>('GET', 'requests');
    assert.match(log.requests.filter((r) => r.paid).at(-1)?.prompt ?? '', /^a kite, photorealistic/);
  });
});
