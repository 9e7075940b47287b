// The test chain of `npm test`, after the build, lint and format check: every layer in turn, each a
// child process (Debian packages, unit, setup of the real VS Code, integration, e2e). The Debian
// packages come first (a unit test that needs openssl must find it there, not half installed);
// the two code-servers (downloads, disk, and native modules compiled) then install beside the unit
// tests, their output in test-results/setup.log. A failing layer does not stop the others (one run
// shows everything that is red), except setup, without which no VS Code layer can run. Prints one
// line per layer (counts and seconds) and, last, `N passed, M failed` over all layers; the same
// lines go to test-results/summary.txt, which .ci/run prints at its very end.
//   node out/test/harness/testAll.js [--only <layer>[,<layer>…]]
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, RESULTS_DIR } from './paths';
import { LAYER_ENV, readSummaries, SUMMARY_FILE_ENV } from './summary';

export interface Layer {
  name: string;
  /** The npm script that runs the layer, as a person runs it alone (`npm run test:unit`). */
  run: string;
  /** A layer that runs no tests (setup): reported by its seconds and exit code only. */
  untested?: boolean;
  /** Starts, and the next layers start beside it, its output in test-results/<log>; awaited by the first layer that needs it. */
  besideTo?: string;
  /** Needs the real VS Code installed by setup. */
  needsVscode?: boolean;
}

export const LAYERS: readonly Layer[] = [
  { name: 'Debian packages', run: 'npm run setup:vscode -- --debian-only', untested: true },
  { name: 'setup (VS Code 1.100.3 and 1.139.1)', run: 'npm run setup:vscode', untested: true, besideTo: 'setup.log' },
  { name: 'unit', run: 'npm run test:unit' },
  { name: 'integration, VS Code 1.100.3', run: 'npm run test:integration', needsVscode: true },
  { name: 'integration, VS Code 1.139.1', run: 'npm run test:integration:current', needsVscode: true },
  { name: 'integration, Russian', run: 'npm run test:integration:ru', needsVscode: true },
  { name: 'integration, untrusted workspace', run: 'npm run test:integration:untrusted', needsVscode: true },
  { name: 'e2e, VS Code 1.100.3', run: 'npm run test:e2e', needsVscode: true },
  { name: 'e2e, VS Code 1.139.1 (generate, studio, walkthrough)', run: 'npm run test:e2e:current-subset', needsVscode: true },
  // What `npm run test:crash` runs after its build and setup, both done by now.
  { name: 'crash, full disk, proxy and TLS, VS Code 1.100.3', run: 'npm run test:crash:built', needsVscode: true },
];

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export interface LayerResult {
  name: string;
  passed: number;
  failed: number;
  pending: number;
  seconds: number;
  note?: string;
  /** Each failed test's title and the first lines of its error. */
  failures?: string[];
}

async function runLayer(layer: Layer, summaryFile: string): Promise<LayerResult> {
  const started = Date.now();
  const log = layer.besideTo ? path.join(RESULTS_DIR, layer.besideTo) : undefined;
  process.stdout.write(`\n::: ${layer.name}: ${layer.run}${log ? ` (the next layers run beside it; output in ${path.relative(REPO_ROOT, log)})` : ''}\n`);
  const before = readSummaries(summaryFile).length;
  const out = log ? fs.openSync(log, 'w') : 'inherit';
  const child = spawn(NPM, layer.run.split(' ').slice(1), {
    cwd: REPO_ROOT,
    stdio: ['ignore', out, out],
    env: { ...process.env, [SUMMARY_FILE_ENV]: summaryFile, [LAYER_ENV]: layer.name },
  });
  const code = await new Promise<number>((resolve) => {
    child.once('error', () => resolve(1));
    child.once('exit', (exitCode) => resolve(exitCode ?? 1));
  });
  if (typeof out === 'number') fs.closeSync(out);
  const seconds = (Date.now() - started) / 1000;
  if (log && code !== 0)
    process.stdout.write(
      `\n::: ${layer.name} failed (exit ${code}); the end of ${path.relative(REPO_ROOT, log)}:\n${fs.readFileSync(log, 'utf8').slice(-4000)}\n`,
    );
  if (layer.untested) return { name: layer.name, passed: 0, failed: code === 0 ? 0 : 1, pending: 0, seconds, ...(code ? { note: `exit ${code}` } : {}) };
  const runs = readSummaries(summaryFile).slice(before);
  const sum = (key: 'passed' | 'failed' | 'pending') => runs.reduce((total, r) => total + r[key], 0);
  const failures = runs.flatMap((r) => r.tests.filter((t) => t.state === 'failed').map((t) => `${t.title}: ${t.error ?? '(no message)'}`));
  const result: LayerResult = { name: layer.name, passed: sum('passed'), failed: sum('failed'), pending: sum('pending'), seconds, failures };
  // A layer that exits red without a failing test (a crash, a launch that timed out) is one failure.
  if (code !== 0 && result.failed === 0) return { ...result, failed: 1, note: runs.length ? `exit ${code}` : `exit ${code}, no test results` };
  return result;
}

function line(r: LayerResult): string {
  if (r.passed + r.failed + r.pending === 0 && !r.note) return `${r.name}: ${r.seconds.toFixed(0)} s`;
  const pending = r.pending ? `, ${r.pending} pending` : '';
  return `${r.name}: ${r.passed} passed, ${r.failed} failed${pending}, ${r.seconds.toFixed(0)} s${r.note ? ` (${r.note})` : ''}`;
}

/**
 * Runs the layers in order, each after the one before has ended, except a `besideTo` layer: the
 * layers after it start at once, beside it. A layer that needs VS Code first waits for every
 * untested (setup) layer started before it, and is not run when one of them failed.
 */
export async function runLayers(layers: readonly Layer[], run: (layer: Layer) => Promise<LayerResult>): Promise<LayerResult[]> {
  const results: Promise<LayerResult>[] = [];
  let setup: Promise<boolean> = Promise.resolve(true);
  for (const layer of layers) {
    if (layer.needsVscode && !(await setup)) {
      results.push(Promise.resolve({ name: layer.name, passed: 0, failed: 1, pending: 0, seconds: 0, note: 'not run: setup failed' }));
      continue;
    }
    const result = run(layer);
    results.push(result);
    if (layer.untested) {
      const before = setup;
      setup = result.then(async (r) => (await before) && r.failed === 0);
    }
    if (!layer.besideTo) await result;
  }
  return Promise.all(results);
}

async function main(): Promise<number> {
  const only = process.argv.includes('--only') ? (process.argv[process.argv.indexOf('--only') + 1] ?? '').split(',') : undefined;
  const layers = only ? LAYERS.filter((l) => only.some((o) => l.name.startsWith(o))) : LAYERS;
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const summaryFile = path.join(RESULTS_DIR, 'summary.jsonl');
  fs.rmSync(summaryFile, { force: true });
  const done = await runLayers(layers, (layer) => runLayer(layer, summaryFile));
  const passed = done.reduce((n, r) => n + r.passed, 0);
  const failed = done.reduce((n, r) => n + r.failed, 0);
  // The failed tests by name, above the total: CI shows the end of the output, and a count alone cannot be chased.
  const failures = done.flatMap((r) => (r.failures ?? []).map((f) => `FAILED in ${r.name}: ${f}`));
  const lines = [...done.map(line), ...failures, `${passed} passed, ${failed} failed`];
  fs.writeFileSync(path.join(RESULTS_DIR, 'summary.txt'), lines.join('\n') + '\n');
  process.stdout.write(`\n::: test layers\n${lines.join('\n')}\n`);
  return failed === 0 ? 0 : 1;
}

if (require.main === module) void main().then((code) => process.exit(code));
