// Compare Models by arguments inside VS Code against the emulator: 3 models give 3 paid requests
// and 3 files named after their models, in the history; invalid input sends nothing.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, closeAllEditors, paidRequests, prepareSuite, rejectionOf, workspaceRoot } from './support';

describe('Compare Models (arguments)', function () {
  this.timeout(90_000);
  let out: string;

  before(async () => {
    await prepareSuite();
    out = path.join(workspaceRoot(), 'compare-test');
  });
  after(() => fs.rmSync(out, { recursive: true, force: true }));
  afterEach(closeAllEditors);

  it('3 models: 3 paid requests and 3 files, each named after its model', async () => {
    const before = (await paidRequests()).length;
    const models = ['aurora-1', 'sketch-mini', 'prism-2'];
    const result = await (await api()).compareModels({ prompt: 'A lighthouse at dawn', models, size: '64x64', outputDirectory: out });
    assert.strictEqual((await paidRequests()).length - before, 3);
    assert.deepStrictEqual(
      result.entries.map((e) => e.status),
      ['done', 'done', 'done'],
    );
    assert.strictEqual(result.files.length, 3);
    result.entries.forEach((entry, i) => {
      assert.strictEqual(entry.model, models[i]);
      assert.match(path.basename(entry.files[0]!), new RegExp(`^${entry.model}-a-lighthouse-at-dawn-1\\.png$`));
      assert.ok(fs.existsSync(entry.files[0]!));
      assert.ok(entry.costRub! > 0);
    });
  });

  it('refuses one model, duplicates, or a model that does not take the options, with 0 requests', async () => {
    const before = (await paidRequests()).length;
    const one = await rejectionOf(vscode.commands.executeCommand('gatewayImages.compareModels', { prompt: 'p', models: ['aurora-1'] }));
    assert.strictEqual(one.field, 'models');
    const twice = await rejectionOf(vscode.commands.executeCommand('gatewayImages.compareModels', { prompt: 'p', models: ['aurora-1', 'aurora-1'] }));
    assert.strictEqual(twice.field, 'models');
    const background = await rejectionOf(
      vscode.commands.executeCommand('gatewayImages.compareModels', {
        prompt: 'p',
        models: ['aurora-1', 'prism-2'],
        background: 'transparent',
        outputDirectory: out,
      }),
    );
    assert.strictEqual(background.field, 'background');
    assert.strictEqual((await paidRequests()).length - before, 0);
  });
});
