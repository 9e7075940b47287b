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
    assert.deepStrictEqual(
      result.entries.map((e) => e.status),
      ['done', 'done', 'done'],
      result.entries.map((e) => `${e.model}: ${e.status} ${e.error ?? ''}`).join('; '),
    );
    assert.strictEqual((await paidRequests()).length - before, 3);
    assert.strictEqual(result.files.length, 3);
    result.entries.forEach((entry, i) => {
      assert.strictEqual(entry.model, models[i]);
      assert.match(path.basename(entry.files[0]!), new RegExp(`^${entry.model}-a-lighthouse-at-dawn-1\\.png$`));
      assert.ok(fs.existsSync(entry.files[0]!));
      assert.ok(entry.costRub! > 0);
    });
  });

  it('two comparisons started together: the second is refused at once, the first runs whole', async () => {
    const before = (await paidRequests()).length;
    const models = ['aurora-1', 'sketch-mini'];
    const gateway = await api();
    // Both start before either has prepared or confirmed: the "already running" check and the start must be one step.
    const [first, second] = await Promise.allSettled([
      gateway.compareModels({ prompt: 'First run', models, size: '64x64', outputDirectory: out }),
      gateway.compareModels({ prompt: 'Second run', models, size: '64x64', outputDirectory: out }),
    ]);
    assert.strictEqual(first.status, 'fulfilled', first.status === 'rejected' ? String(first.reason) : '');
    assert.strictEqual(second.status, 'rejected', 'both comparisons ran: Cancel All would reach only the second');
    assert.match((second.reason as Error).message, /already running/);
    assert.strictEqual((await paidRequests()).length - before, 2, 'only the first run was sent');
    // The first one ended: the next one may start.
    const next = await gateway.compareModels({ prompt: 'Next run', models, size: '64x64', outputDirectory: out });
    assert.deepStrictEqual(
      next.entries.map((e) => e.status),
      ['done', 'done'],
    );
  });

  it('a comparison refused before it started (a bad option) does not block the next one', async () => {
    const gateway = await api();
    const refused = await rejectionOf(gateway.compareModels({ prompt: 'p', models: ['aurora-1', 'prism-2'], background: 'transparent', outputDirectory: out }));
    assert.strictEqual(refused.field, 'background');
    const next = await gateway.compareModels({ prompt: 'After a refusal', models: ['aurora-1', 'sketch-mini'], size: '64x64', outputDirectory: out });
    assert.strictEqual(next.entries.length, 2);
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
