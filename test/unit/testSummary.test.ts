// The summary reporter (test/harness/summaryReporter.ts) under a real mocha run: CI shows only the end
// of a long log, so a failed test must reach the summary by name and with its error's first lines.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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
});
