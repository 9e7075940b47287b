// A mocha reporter: mocha's own `spec` output, plus the run's summary line (see summary.ts). Used by
// the plain mocha runs (.mocharc.*.json) and by the suite inside VS Code (test/integration/index.ts),
// whose extension host inherits the variables from the harness.
import * as fs from 'fs';
import * as path from 'path';
import Mocha from 'mocha';
import { ownGroupCpu } from './cpuAccounting';
import { LAYER_ENV, type RunSummary, SUMMARY_FILE_ENV, type TestState } from './summary';

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const file = process.env[SUMMARY_FILE_ENV];
    if (!file) return;
    const started = Date.now();
    const tests: RunSummary['tests'] = [];
    const hooks: NonNullable<RunSummary['hooks']> = [];
    // The CPU of the layer (its windows included) while each test and each long hook ran: where a
    // layer's CPU goes, which a slower machine multiplies.
    const groupCpu = ownGroupCpu();
    const cpuNow = () => (groupCpu ? safely(groupCpu) : undefined);
    let testCpu: number | undefined;
    let hookStart = { ms: 0, cpu: undefined as number | undefined };
    const cpuMsSince = (from: number | undefined) => {
      const now = cpuNow();
      return now === undefined || from === undefined ? {} : { cpuMs: Math.round((now - from) * 1000) };
    };
    runner.on(Mocha.Runner.constants.EVENT_TEST_BEGIN, () => (testCpu = cpuNow()));
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, (test) =>
      tests.push({ title: test.fullTitle(), state: 'passed', ms: test.duration, ...cpuMsSince(testCpu) }),
    );
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test) => tests.push({ title: test.fullTitle(), state: 'pending' }));
    // A failing hook fails the tests it was for: mocha reports it once, under the hook's title.
    // The error's first lines go with it: CI prints only the end of a long log, and the summary is at the end.
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test, error: Error) =>
      tests.push({ title: test.fullTitle(), state: 'failed', ms: test.duration, error: firstLines(error), ...cpuMsSince(testCpu) }),
    );
    runner.on(Mocha.Runner.constants.EVENT_HOOK_BEGIN, () => (hookStart = { ms: Date.now(), cpu: cpuNow() }));
    runner.on(Mocha.Runner.constants.EVENT_HOOK_END, (hook) => {
      const ms = Date.now() - hookStart.ms;
      if (ms >= 1000) hooks.push({ title: hook.fullTitle(), ms, ...cpuMsSince(hookStart.cpu) });
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const count = (state: TestState) => tests.filter((t) => t.state === state).length;
      const summary: RunSummary = {
        layer: process.env[LAYER_ENV] ?? 'mocha',
        passed: count('passed'),
        failed: count('failed'),
        pending: count('pending'),
        seconds: (Date.now() - started) / 1000,
        tests,
        ...(hooks.length > 0 && { hooks }),
      };
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.appendFileSync(file, JSON.stringify(summary) + '\n');
    });
  }
}

function safely(read: () => number): number | undefined {
  try {
    return read();
  } catch {
    return undefined; // the group was removed under us: no figure
  }
}

function firstLines(error: unknown): string {
  const text = error instanceof Error ? error.message || String(error) : String(error);
  return text.split('\n').slice(0, 3).join(' | ').slice(0, 400);
}

export = SummaryReporter;
