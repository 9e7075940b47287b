// The flake check: a test layer N times in a row while one busy process per core loads the machine,
// then each test's pass count. A test that fails once in N loaded runs fails on some CI machine
// some day: the target is 0 failures. `--layer e2e` (default; `npm run test:e2e:stress`), `unit`
// (`npm run test:unit:stress`) or `integration` (`npm run test:integration:stress`, on
// `--vscode oldest|current`). With --alone (unit and e2e), every test instead runs by itself (mocha
// --grep on its full title), once per run: none may need what an earlier test left behind.
//   node out/test/harness/stress.js [--layer e2e|unit|integration] [--runs N] [--alone] [--grep <pattern>]
//                                   [--vscode oldest|current] [--no-load]
import { type ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { OUT_DIR, REPO_ROOT, RESULTS_DIR } from './paths';
import { LAYER_ENV, readSummaries, SUMMARY_FILE_ENV, type TestState } from './summary';

type StressLayer = 'e2e' | 'unit' | 'integration';
const STRESS_LAYERS: readonly StressLayer[] = ['e2e', 'unit', 'integration'];
const USAGE =
  'usage: node out/test/harness/stress.js [--layer e2e|unit|integration] [--runs N] [--alone] [--grep <pattern>] [--vscode oldest|current] [--no-load]';

interface Options {
  layer: StressLayer;
  runs: number;
  alone: boolean;
  grep?: string;
  vscode: string;
  load: boolean;
}

function parse(argv: string[]): Options {
  const options: Options = { layer: 'e2e', runs: 3, alone: false, vscode: 'oldest', load: true };
  for (let i = 0; i < argv.length; i++) {
    const value = () => argv[++i] ?? '';
    switch (argv[i]) {
      case '--layer': {
        const layer = value();
        if (!(STRESS_LAYERS as readonly string[]).includes(layer)) throw new Error(`--layer must be one of ${STRESS_LAYERS.join(', ')}`);
        options.layer = layer as StressLayer;
        break;
      }
      case '--runs':
        options.runs = Number(value());
        if (!Number.isInteger(options.runs) || options.runs < 1) throw new Error('--runs must be a whole number of at least 1');
        break;
      case '--grep':
        options.grep = value();
        break;
      case '--vscode':
        options.vscode = value();
        break;
      case '--no-load':
        options.load = false;
        break;
      case '--alone':
        options.alone = true;
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}\n${USAGE}`);
    }
  }
  // The integration suite runs inside VS Code (one window for the whole suite): mocha cannot list its tests outside it.
  if (options.alone && options.layer === 'integration') throw new Error('--alone lists the tests with mocha --dry-run: unit and e2e only');
  return options;
}

/** One process per core that spins until killed. */
function startLoad(): ChildProcess[] {
  return os.cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

function main(): number {
  const options = parse(process.argv.slice(2));
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const summaryFile = path.join(RESULTS_DIR, 'stress.jsonl');
  fs.rmSync(summaryFile, { force: true });
  const hogs = options.load ? startLoad() : [];
  const stop = () => hogs.forEach((hog) => hog.kill('SIGKILL'));
  process.once('exit', stop);
  const where = options.layer === 'unit' ? '' : ` on VS Code ${options.vscode}`;
  process.stdout.write(`[stress] ${options.runs} runs of the ${options.layer} suite${where}, ${hogs.length} busy processes (${os.cpus().length} cores)\n`);
  const exitCodes: number[] = [];
  const started = Date.now();
  const env = (layer: string) => ({ ...process.env, GATEWAY_IMAGES_TEST_VSCODE: options.vscode, [SUMMARY_FILE_ENV]: summaryFile, [LAYER_ENV]: layer });
  const node = (args: string[], layer: string) => spawnSync(process.execPath, args, { cwd: REPO_ROOT, stdio: 'inherit', env: env(layer) }).status ?? 1;
  const mocha = (layer: string, grep: string | undefined, extra: string[] = []) =>
    options.layer === 'integration'
      ? node([path.join(OUT_DIR, 'test', 'harness', 'runIntegration.js'), '--vscode', options.vscode, ...(grep ? ['--grep', grep] : [])], layer)
      : node(
          [
            path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'),
            '--config',
            `.mocharc.${options.layer}.json`,
            ...(grep ? ['--grep', grep] : []),
            ...extra,
          ],
          layer,
        );
  // --alone: the titles from a dry run (mocha lists the tests without running them or their hooks).
  const titles = options.alone ? listTests(options.grep, summaryFile, mocha) : [];
  try {
    for (let run = 1; run <= options.runs; run++) {
      process.stdout.write(`\n[stress] run ${run} of ${options.runs}${options.alone ? `: ${titles.length} tests, each alone` : ''}\n`);
      if (!options.alone) exitCodes.push(mocha(`run ${run}`, options.grep));
      else for (const title of titles) exitCodes.push(mocha(`run ${run}: ${title}`, `^${escapeRegExp(title)}$`));
    }
  } finally {
    stop();
  }
  const runs = readSummaries(summaryFile).filter((r) => r.layer !== DRY_RUN);
  const tally = new Map<string, Record<TestState, number>>();
  for (const run of runs) {
    for (const test of run.tests) {
      const counts = tally.get(test.title) ?? { passed: 0, failed: 0, pending: 0 };
      counts[test.state] += 1;
      tally.set(test.title, counts);
    }
  }
  // Every test of a small suite; of a large one (unit: a thousand tests), those that did not pass every run.
  const shown = [...tally].filter(([, c]) => tally.size <= 100 || c.passed !== options.runs);
  const width = Math.max(...shown.map(([t]) => t.length), 10);
  const lines = shown.map(
    ([title, c]) =>
      `${title.padEnd(width)}  ${c.pending === options.runs ? 'skipped' : `${c.passed}/${options.runs}`}${c.failed ? `  FAILED ${c.failed}` : ''}`,
  );
  // A run that exited red without a failing test (it crashed, or a workbench did not start) counts once.
  const crashed = Math.max(0, exitCodes.filter((code) => code !== 0).length - runs.filter((r) => r.failed > 0).length);
  const failures = [...tally.values()].reduce((n, c) => n + c.failed, 0) + crashed;
  const seconds = runs.map((r) => r.seconds.toFixed(0)).join(', ');
  const report = [
    ...lines,
    `${options.layer}${where}: ${tally.size} tests, ${options.runs} runs${options.alone ? ' of each test alone' : ` (${seconds} s)`} under the load of ${hogs.length} busy processes: ` +
      `${failures} failures in ${((Date.now() - started) / 60_000).toFixed(1)} min` +
      (crashed ? ` (${crashed} runs ended red without a failing test)` : ''),
  ];
  fs.writeFileSync(path.join(RESULTS_DIR, 'stress.txt'), report.join('\n') + '\n');
  process.stdout.write(`\n[stress] passes per test\n${report.join('\n')}\n`);
  return failures === 0 ? 0 : 1;
}

const DRY_RUN = 'dry run';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The full titles of the layer's tests (a dry run writes them to the summary file). */
function listTests(grep: string | undefined, summaryFile: string, mocha: (layer: string, grep: string | undefined, extra?: string[]) => number): string[] {
  mocha(DRY_RUN, grep, ['--dry-run']);
  const dry = readSummaries(summaryFile).find((r) => r.layer === DRY_RUN);
  if (!dry?.tests.length) throw new Error('The dry run listed no tests');
  return dry.tests.map((t) => t.title);
}

if (require.main === module) {
  try {
    process.exit(main());
  } catch (error) {
    process.stderr.write(`[stress] ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
}
