// The bench's verdicts and exit code (tools/bench/verdicts.ts): what fails `npm run bench`, what
// --quick does not judge, what --report-only keeps.
import * as assert from 'node:assert/strict';
import type { BenchTarget } from '../../tools/bench/scenario';
import { judge, verdict } from '../../tools/bench/verdicts';

const ratio = (pass: boolean): BenchTarget => ({ name: 'journal: one append / bare append', value: pass ? '1.10' : '4.50', target: '≤ 4', pass, time: true });
const images = (pass: boolean): BenchTarget => ({ name: '[4 x 1 MiB] extension images correct', value: 'all images match', target: 'SHA-256 equal', pass });
const info: BenchTarget = { name: 'first image:   info: extension − limit', value: '+20 ms', target: '', pass: undefined };
const skipped: BenchTarget = { name: 'activate() / loading the bundle once more', value: 'not measured (--quick)', target: '≤ 1.5', pass: undefined };
const unmeasured: BenchTarget = {
  name: 'activate() / loading the bundle once more',
  value: 'not measured: run npm run setup:vscode -- --vscode oldest',
  target: '≤ 1.5',
  pass: false,
};
const full = { quick: false, reportOnly: false };
const quick = { quick: true, reportOnly: false };

describe('bench verdicts and exit code', () => {
  it('every target passes: exit 0', () => {
    const { lines, exitCode } = judge([ratio(true), images(true), info, skipped], full, 12);
    assert.equal(exitCode, 0);
    assert.match(lines.at(-1)!, /^ {2}all judged targets PASS; total bench time 12 s$/);
    assert.deepEqual(
      [ratio(true), images(true), info, skipped].map((t) => verdict(t, full)),
      ['PASS', 'PASS', 'info', 'skip'],
    );
  });

  it('a time target fails in a full run: exit 1, and the report says how --report-only differs', () => {
    const { lines, exitCode } = judge([ratio(false), images(true)], full, 1);
    assert.equal(exitCode, 1);
    assert.match(lines[0]!, /^ {2}FAIL {3}journal: one append/);
    assert.ok(lines.includes('  exit code 1 (a target FAILs or was not measured; --report-only exits 0 with the same report)'));
  });

  it('a row asked for and not measured is not a pass: it counts as a failed target', () => {
    const { lines, exitCode } = judge([images(true), unmeasured], full, 1);
    assert.equal(exitCode, 1);
    assert.equal(verdict(unmeasured, full), 'FAIL');
    assert.match(lines.join('\n'), /1 target\(s\) FAIL \(1 of them not measured\)/);
  });

  it('a row not asked for (--quick, --only, --no-activation) is skipped and does not count', () => {
    assert.equal(judge([images(true), skipped], full, 1).exitCode, 0);
  });

  it('--quick prints its time targets in brackets and does not judge them; correctness still fails it', () => {
    const passing = judge([ratio(false), images(true)], quick, 1);
    assert.equal(passing.exitCode, 0);
    assert.match(passing.lines[0]!, /^ {2}\(fail\) journal: one append/);
    assert.match(passing.lines.at(-1)!, /all judged targets PASS; 1 time target\(s\) in brackets, not judged \(--quick\)/);
    assert.equal(judge([ratio(true), images(false)], quick, 1).exitCode, 1);
  });

  it('--report-only: the same report, exit 0', () => {
    const { lines, exitCode } = judge([ratio(false), unmeasured], { quick: false, reportOnly: true }, 1);
    assert.equal(exitCode, 0);
    assert.match(lines.join('\n'), /2 target\(s\) FAIL \(1 of them not measured\)/);
    assert.equal(lines.at(-1), '  (--report-only: exit code 0 all the same)');
  });
});
