// The summary reporter (test/harness/summaryReporter.ts) under a real mocha run: CI shows only the end
// of a long log, so a failed test must reach the summary by name and with its error's first lines.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { layerCpu } from '../harness/cpuAccounting';
import { LAYER_ENV, readSummaries, SUMMARY_FILE_ENV } from '../harness/summary';

const ROOT = path.resolve(__dirname, '../../..');

describe('test summary reporter', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-images-summary-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records each test, and a failed one with the first lines of its error', () => {
    const spec = path.join(dir, 'sample.test.js');
    writeFileSync(
      spec,
      [
        "describe('sample', () => {",
        "  it('passes', () => {});",
        "  it.skip('waits', () => {});",
        "  it('fails', () => { throw new Error('balance 90 ≠ 100\\nsecond line\\nthird line\\nfourth line'); });",
        '});',
      ].join('\n'),
    );
    const file = path.join(dir, 'summary.jsonl');
    try {
      execFileSync(process.execPath, [require.resolve('mocha/bin/mocha.js'), '--reporter', path.join(ROOT, 'out/test/harness/summaryReporter.js'), spec], {
        env: { ...process.env, [SUMMARY_FILE_ENV]: file, [LAYER_ENV]: 'sample layer' },
        stdio: 'pipe',
      });
      assert.fail('mocha should exit red: one test fails');
    } catch (error) {
      assert.equal((error as { status?: number }).status, 1);
    }
    const [run, ...more] = readSummaries(file);
    assert.equal(more.length, 0);
    assert.ok(run);
    assert.deepEqual([run.layer, run.passed, run.failed, run.pending], ['sample layer', 1, 1, 1]);
    const failed = run.tests.find((t) => t.state === 'failed');
    assert.equal(failed?.title, 'sample fails');
    assert.equal(failed?.error, 'balance 90 ≠ 100 | second line | third line');
  });

  it("gives each test and each hook of a second or more the CPU its layer used meanwhile, a child process's too", function () {
    this.timeout(60_000); // a wait on a loaded machine, not a bound
    const spin = (ms: number) => `const t = process.cpuUsage(); while (process.cpuUsage(t).user < ${ms * 1000});`;
    const spec = path.join(dir, 'cpu.test.js');
    writeFileSync(
      spec,
      [
        "const { execFileSync } = require('child_process');",
        "describe('cpu', () => {",
        // 0.3 s of CPU, then a sleep to 1.1 s in all.
        `  before(function () { this.timeout(20000); const s = Date.now(); ${spin(300)} Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, 1100 - (Date.now() - s))); });`,
        `  it('spins in a child', function () { this.timeout(20000); execFileSync(process.execPath, ['-e', ${JSON.stringify(spin(400))}]); });`,
        "  it('idles', () => {});",
        '});',
      ].join('\n'),
    );
    const file = path.join(dir, 'summary.jsonl');
    const cpu = layerCpu(`summary-${process.pid}`);
    const { command, args } = cpu.wrap(process.execPath, [
      require.resolve('mocha/bin/mocha.js'),
      '--reporter',
      path.join(ROOT, 'out/test/harness/summaryReporter.js'),
      spec,
    ]);
    execFileSync(command, args, { env: { ...process.env, [SUMMARY_FILE_ENV]: file, [LAYER_ENV]: 'cpu layer' }, stdio: 'pipe' });
    const layerSeconds = cpu.read();
    const [run] = readSummaries(file);
    const [spinning, idling] = run!.tests;
    assert.equal(run!.hooks?.length, 1, 'the before hook of 1.1 s; the short ones are left out');
    assert.match(run!.hooks[0]!.title, /"before all" hook/);
    assert.ok(run!.hooks[0]!.ms >= 1100);
    if (layerSeconds === undefined) {
      assert.equal(spinning!.cpuMs, undefined, 'no group (not root, not Linux): no figure rather than a wrong one');
      return;
    }
    assert.ok(spinning!.cpuMs! >= 400, `the child's 0.4 s counts: ${spinning!.cpuMs} ms`);
    assert.ok(idling!.cpuMs! < spinning!.cpuMs!, `idle ${idling!.cpuMs} ms`);
    assert.ok(run!.hooks[0]!.cpuMs! >= 300, `the hook spun 0.3 s: ${run!.hooks[0]!.cpuMs} ms`);
  });
});
