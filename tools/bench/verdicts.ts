// How the bench judges its targets and what its exit code says (run.ts prints them). Pure, so the
// rules have a unit test (test/unit/benchVerdicts.test.ts).
import { type BenchTarget, pad } from './scenario';

export interface JudgeOptions {
  /** --quick: small sizes and one run, so its time targets are printed in brackets, not judged. */
  quick: boolean;
  /** --report-only: exit 0 whatever the targets say (the behaviour before issue 43). */
  reportOnly: boolean;
}

/** A failed target that the exit code counts: every FAIL (a row asked for and not measured is one), except a time target of --quick. */
const counted = (t: BenchTarget, o: JudgeOptions) => t.pass === false && !(o.quick && t.time);

export function verdict(t: BenchTarget, o: JudgeOptions): string {
  if (t.pass === undefined) return t.name.includes('info:') ? 'info' : 'skip';
  if (o.quick && t.time) return t.pass ? '(pass)' : '(fail)';
  return t.pass ? 'PASS' : 'FAIL';
}

/** The Targets table's rows, its closing lines, and the exit code: 1 when a counted target fails, unless --report-only. */
export function judge(targets: readonly BenchTarget[], o: JudgeOptions, totalSeconds: number): { lines: string[]; exitCode: 0 | 1 } {
  const lines = targets.map((t) => `  ${verdict(t, o).padEnd(6)} ${pad(t.name, 52)} ${pad(t.value, 22)} ${t.target}`);
  const failed = targets.filter((t) => counted(t, o));
  const unmeasured = failed.filter((t) => t.value.startsWith('not measured') || t.value === 'failed').length;
  const notJudged = o.quick ? targets.filter((t) => t.time && t.pass !== undefined).length : 0;
  lines.push(
    `  ${failed.length ? `${failed.length} target(s) FAIL${unmeasured ? ` (${unmeasured} of them not measured)` : ''}` : 'all judged targets PASS'}` +
      `${notJudged ? `; ${notJudged} time target(s) in brackets, not judged (--quick)` : ''}; total bench time ${totalSeconds.toFixed(0)} s`,
  );
  if (failed.length)
    lines.push(
      o.reportOnly
        ? '  (--report-only: exit code 0 all the same)'
        : '  exit code 1 (a target FAILs or was not measured; --report-only exits 0 with the same report)',
    );
  return { lines, exitCode: failed.length && !o.reportOnly ? 1 : 0 };
}
