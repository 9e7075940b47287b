// Generate Images from File and the transparency refusal, inside VS Code against the emulator:
// invalid lines refuse the whole batch with 0 requests, Cancel leaves unstarted lines unsent,
// a re-run skips the lines already done, and transparent + jpeg is refused before sending.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, closeAllEditors, paidRequests, prepareSuite, rejectionOf, workspaceRoot } from './support';

describe('Generate Images from File', function () {
  this.timeout(90_000);
  let dir: string;

  before(async () => {
    await prepareSuite();
    dir = path.join(workspaceRoot(), 'batch-test');
    fs.mkdirSync(dir, { recursive: true });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(closeAllEditors);

  it('refuses a batch of 5 lines with 1 invalid line, naming line and field, with 0 requests', async () => {
    const file = path.join(dir, 'mixed.jsonl');
    const lines = [
      { prompt: 'a red cat', model: 'aurora-1', size: '64x64' },
      { prompt: 'a blue dog', model: 'aurora-1', size: '64x64' },
      { prompt: 'a green fox', model: 'aurora-1', size: '64x64' },
      { prompt: 'a grey owl', model: 'aurora-1', n: 99 },
      { prompt: 'a gold bee', model: 'aurora-1', size: '64x64' },
    ];
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    const before = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generateFromFile', { file }));
    assert.strictEqual(error.kind, 'validation');
    assert.match(error.message, /line 4, n: /);
    assert.strictEqual((await paidRequests()).length - before, 0, 'nothing may be sent');
    assert.ok(!fs.existsSync(path.join(dir, 'mixed.report.md')), 'no report for a refused batch');
  });

  it('cancelled after 2 of 5 lines: at most 3 paid requests, the rest never sent; a re-run skips the done lines', async () => {
    const file = path.join(dir, 'five.txt');
    fs.writeFileSync(file, ['# five animals', 'a red cat', 'a blue dog', '', 'a green fox', 'a grey owl', 'a gold bee'].join('\n'));
    const outputDirectory = path.join(dir, 'out');
    const before = (await paidRequests()).length;
    const controller = new AbortController();
    const gateway = await api();
    const first = await gateway.generateFromFile({
      file,
      model: 'sketch-mini',
      concurrency: 1,
      outputDirectory,
      signal: controller.signal,
      onProgress: (finished) => finished === 2 && controller.abort(),
    });
    const sent = (await paidRequests()).length - before;
    assert.ok(sent >= 2 && sent <= 3, `paid requests: ${sent}`);
    assert.strictEqual(first.done, 2);
    assert.strictEqual(first.done + first.notSent + first.outcomeUnknown, 5);
    assert.deepStrictEqual(
      first.lines.filter((l) => l.status === 'done').map((l) => l.line),
      [2, 3],
    );
    const report = fs.readFileSync(first.report.fsPath, 'utf8');
    assert.strictEqual(first.report.fsPath, path.join(dir, 'five.report.md'));
    assert.match(report, /\| 2 \| a red cat \| sketch-mini \| done \| \[/);
    assert.match(report, /\| 7 \| a gold bee \| sketch-mini \| not sent \|/);
    for (const line of first.lines.filter((l) => l.status === 'done')) assert.ok(fs.existsSync(line.files[0]!), `line ${line.line} saved`);

    const beforeRerun = (await paidRequests()).length;
    const second = await gateway.generateFromFile({ file, model: 'sketch-mini', concurrency: 2, outputDirectory });
    assert.strictEqual(second.skipped, 2, 'the two done lines are skipped');
    assert.strictEqual(second.done, 3);
    assert.strictEqual((await paidRequests()).length - beforeRerun, 3, 'only the three open lines are sent');
    assert.match(fs.readFileSync(second.report.fsPath, 'utf8'), /\| 2 \| a red cat \| sketch-mini \| done earlier \(skipped\) \|/);

    const third = await gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    assert.strictEqual(third.skipped, 5);
    assert.strictEqual((await paidRequests()).length - beforeRerun, 3, 'a finished file sends nothing');
  });

  it('a line whose paid images went to the recovery folder is not paid again; the report says where they are', async () => {
    const file = path.join(dir, 'blocked.txt');
    fs.writeFileSync(file, ['a red cat', 'a blue dog'].join('\n'));
    // A file where the output folder should be: the images cannot be placed and stay in recovery.
    const outputDirectory = path.join(dir, 'blocked-output');
    fs.writeFileSync(outputDirectory, 'not a folder');
    const gateway = await api();
    const before = (await paidRequests()).length;
    const first = await gateway.generateFromFile({ file, model: 'sketch-mini', concurrency: 2, outputDirectory });
    assert.strictEqual((await paidRequests()).length - before, 2);
    assert.strictEqual(first.done, 2);
    const second = await gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    assert.strictEqual((await paidRequests()).length - before, 2, 'a line paid for is never paid again');
    assert.strictEqual(second.skipped, 2);
    const report = fs.readFileSync(second.report.fsPath, 'utf8');
    assert.match(report, /\| 1 \| a red cat \| sketch-mini \| done earlier \(skipped\): images in the recovery folder \|/);
    for (const line of second.lines)
      assert.ok(line.files.length > 0 && line.files.every((f) => fs.existsSync(f)), `line ${line.line} names its recovered images`);
  });

  it('refuses transparent + jpeg before sending, naming output_format', async () => {
    const before = (await paidRequests()).length;
    const error = await rejectionOf(
      vscode.commands.executeCommand('gatewayImages.generate', {
        model: 'prism-2',
        prompt: 'a logo',
        background: 'transparent',
        output_format: 'jpeg',
        size: '64x64',
      }),
    );
    assert.strictEqual(error.kind, 'validation');
    assert.strictEqual(error.field, 'output_format');
    assert.match(error.message, /JPEG has no alpha/);
    assert.strictEqual((await paidRequests()).length - before, 0);
  });
});
