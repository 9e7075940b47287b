// The test chain of `npm test`, after the build: every layer, each a child process, in three lanes
// side by side (a VS Code layer keeps a 2-core machine only about 60 % busy: it waits on windows,
// timers and the emulator; two lanes still left it 13-16 % idle). The unit tests' Debian package
// (openssl) comes first, alone: a unit test must find it there, not half installed. Then the first
// lane runs lint, the format check, the unit tests, the Russian suite and the untrusted one, its
// output as it comes; the second installs the other Debian packages and the two code-servers
// (downloads, disk, a few native modules), then runs the e2e layer on 1.100.3; the third, once the
// setup ended, the e2e layer on 1.139.1, integration on 1.139.1 and on 1.100.3, and crash. The
// second and third lanes write each layer's output to test-results/<file>.log, printed whole once
// it ended. A VS Code layer waits for the setup. A failing layer does not stop the others (one run
// shows everything that is red), except setup, without which no VS Code layer can run. Prints one
// line per layer (counts and seconds) and, last, `N passed, M failed` over all layers (each line
// with the CPU seconds of the layer's processes); the same lines go to test-results/summary.txt,
// which .ci/run prints at its very end.
//   node out/test/harness/testAll.js [--only <layer>[,<layer>…]]
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT, RESULTS_DIR } from './paths';
import { type MachineCpu as Cpu, layerCpu, machineCpu } from './cpuAccounting';
import { readSpeedGauge, speedGaugeLine } from './speedGauge';
import { LAYER_ENV, readSummaries, SUMMARY_FILE_ENV } from './summary';

export interface Layer {
  name: string;
  /** The npm script that runs the layer, as a person runs it alone (`npm run test:unit`). */
  run: string;
  /** A layer that runs no tests (setup): reported by its seconds and exit code only. */
  untested?: boolean;
  /** A check that runs no tests either (lint, format): reported as a setup is, but no layer waits for it. */
  check?: boolean;
  /** Runs in the second lane (the third with `lane: 3`), beside the first; its output goes to test-results/<beside> and is printed once it ended. */
  beside?: string;
  /** A `beside` layer's lane: 2 (the default) or 3. */
  lane?: 2 | 3;
  /** Runs with nothing beside it: every layer before it has ended, none after it has started. */
  alone?: boolean;
  /** Needs the real VS Code installed by setup. */
  needsVscode?: boolean;
}

// The lanes by the layers' times in fresh-clone runs (ci18, ci19): the second lane holds the setup and
// the longest layer, e2e on 1.100.3, which needs it (550-590 s); the first lane lint, the format check,
// the unit tests (CPU 130-160 s, but 380-420 s: they wait on timers and processes), the Russian and the
// untrusted suites; the third the other VS Code layers. With integration on 1.100.3 in the first lane
// (ci18) that lane ended 2 minutes after the others, the machine half idle meanwhile.
export const LAYERS: readonly Layer[] = [
  { name: 'Debian packages of the unit tests', run: 'npm run setup:vscode -- --unit-packages', untested: true, alone: true },
  // First lane: lint and the format check beside the setup, which waits on downloads; the unit tests;
  // the Russian suite (it may build the Russian language pack while the e2e layer's Russian suite
  // does: each is made aside and moved into place whole, languagePack.ts); the untrusted suite.
  { name: 'lint (eslint, dependency rules)', run: 'npm run lint', check: true },
  { name: 'format check (prettier)', run: 'npm run format:check', check: true },
  { name: 'unit', run: 'npm run test:unit' },
  { name: 'integration, Russian', run: 'npm run test:integration:ru', needsVscode: true },
  { name: 'integration, untrusted workspace', run: 'npm run test:integration:untrusted', needsVscode: true },
  // Second lane: the setup, then the longest VS Code layer at once.
  { name: 'setup (VS Code 1.100.3 and 1.139.1)', run: 'npm run setup:vscode', untested: true, beside: 'setup.log' },
  { name: 'e2e, VS Code 1.100.3', run: 'npm run test:e2e', needsVscode: true, beside: 'e2e-1.100.3.log' },
  // Third lane, once the setup ended: the shorter VS Code layers.
  {
    name: 'e2e, VS Code 1.139.1 (generate, studio, walkthrough)',
    run: 'npm run test:e2e:current-subset',
    needsVscode: true,
    beside: 'e2e-1.139.1.log',
    lane: 3,
  },
  // On 1.139.1 without the suites of test/integration/onOldestOnly.ts (every one of them runs on 1.100.3).
  {
    name: 'integration, VS Code 1.139.1 (what differs between VS Codes)',
    run: 'npm run test:integration:current-subset',
    needsVscode: true,
    beside: 'integration-1.139.1.log',
    lane: 3,
  },
  { name: 'integration, VS Code 1.100.3', run: 'npm run test:integration', needsVscode: true, beside: 'integration-1.100.3.log', lane: 3 },
  // What `npm run test:crash` runs after its build and setup, both done by now.
  { name: 'crash, full disk, proxy and TLS, VS Code 1.100.3', run: 'npm run test:crash:built', needsVscode: true, beside: 'crash.log', lane: 3 },
];

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export interface LayerResult {
  name: string;
  passed: number;
  failed: number;
  pending: number;
  seconds: number;
  /** CPU seconds (user and system) of the layer's processes, its VS Code, Chromium and emulator included: what a slower machine multiplies. */
  cpuSeconds?: number;
  note?: string;
  /** Each failed test's title and the first lines of its error. */
  failures?: string[];
}

async function runLayer(layer: Layer, summaryFile: string): Promise<LayerResult> {
  const started = Date.now();
  const log = layer.beside ? path.join(RESULTS_DIR, layer.beside) : undefined;
  process.stdout.write(`\n::: ${layer.name}: ${layer.run}${log ? ` (beside the other layers; output in ${path.relative(REPO_ROOT, log)})` : ''}\n`);
  const out = log ? fs.openSync(log, 'w') : 'inherit';
  const cpu = layerCpu(layer.name);
  const { command, args } = cpu.wrap(NPM, layer.run.split(' ').slice(1));
  const child = spawn(command, args, {
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
  const cpuSeconds = cpu.read();
  // A tested layer's whole output (the names of its tests), the setup's end when it failed.
  if (log && (!layer.untested || code !== 0)) {
    const text = fs.readFileSync(log, 'utf8');
    const shown = layer.untested ? text.slice(-4000) : text;
    process.stdout.write(
      `\n::: ${layer.name} ${code === 0 ? 'ended' : `failed (exit ${code})`}; ${layer.untested ? 'the end of ' : ''}its output (${path.relative(REPO_ROOT, log)}):\n${shown}\n`,
    );
  }
  if (layer.untested || layer.check)
    return { name: layer.name, passed: 0, failed: code === 0 ? 0 : 1, pending: 0, seconds, cpuSeconds, ...(code ? { note: `exit ${code}` } : {}) };
  // Its own runs: layers beside it write to the same file meanwhile.
  const runs = readSummaries(summaryFile).filter((r) => r.layer === layer.name);
  const sum = (key: 'passed' | 'failed' | 'pending') => runs.reduce((total, r) => total + r[key], 0);
  const failures = runs.flatMap((r) => r.tests.filter((t) => t.state === 'failed').map((t) => `${t.title}: ${t.error ?? '(no message)'}`));
  const result: LayerResult = { name: layer.name, passed: sum('passed'), failed: sum('failed'), pending: sum('pending'), seconds, cpuSeconds, failures };
  // A layer that exits red without a failing test (a crash, a launch that timed out) is one failure.
  if (code !== 0 && result.failed === 0) return { ...result, failed: 1, note: runs.length ? `exit ${code}` : `exit ${code}, no test results` };
  return result;
}

/** The CPU seconds of the layers in all; undefined where no layer was measured (no control group). */
export function layersCpuSeconds(done: readonly LayerResult[]): number | undefined {
  return done.some((r) => r.cpuSeconds !== undefined) ? done.reduce((n, r) => n + (r.cpuSeconds ?? 0), 0) : undefined;
}

/**
 * The CPU of the layers in all, and how busy the machine was (every process, the layers' and anything
 * beside them): where it was busy throughout, a slower machine of the kind multiplies the time.
 */
export function cpuLines(done: readonly LayerResult[], before: Cpu | undefined, after: Cpu | undefined, seconds: number): string[] {
  const lines: string[] = [];
  const layersCpu = layersCpuSeconds(done);
  if (layersCpu !== undefined) lines.push(`CPU of the layers in all: ${layersCpu.toFixed(0)} s`);
  if (before && after) {
    const busy = after.busy - before.busy;
    const total = busy + after.idle - before.idle;
    const cores = os.cpus().length;
    lines.push(
      `machine CPU over ${seconds.toFixed(0)} s: ${busy.toFixed(0)} s busy of ${total.toFixed(0)} s (${cores} cores), ${total > 0 ? ((100 * busy) / total).toFixed(0) : '?'} %`,
    );
  }
  return lines;
}

export function line(r: LayerResult): string {
  const cpu = r.cpuSeconds === undefined ? '' : ` (CPU ${r.cpuSeconds.toFixed(0)} s)`;
  if (r.passed + r.failed + r.pending === 0 && !r.note) return `${r.name}: ${r.seconds.toFixed(0)} s${cpu}`;
  const pending = r.pending ? `, ${r.pending} pending` : '';
  return `${r.name}: ${r.passed} passed, ${r.failed} failed${pending}, ${r.seconds.toFixed(0)} s${cpu}${r.note ? ` (${r.note})` : ''}`;
}

/** The lane a layer runs in: 1 without `beside`, else its `lane` (2 by default). */
export const laneOf = (layer: Layer): number => (layer.beside ? (layer.lane ?? 2) : 1);

/**
 * Runs the layers: an `alone` one by itself; between two of those, each lane's layers one after
 * the other (laneOf), the lanes side by side. A layer that needs VS Code first waits for every untested (setup) layer, and
 * is not run when one of them failed. The results come in the order of `layers`.
 */
export async function runLayers(layers: readonly Layer[], run: (layer: Layer) => Promise<LayerResult>): Promise<LayerResult[]> {
  const ended = new Map<Layer, (ok: boolean) => void>();
  const setups = layers.filter((l) => l.untested).map((l) => new Promise<boolean>((resolve) => ended.set(l, resolve)));
  const results = new Map<Layer, Promise<LayerResult>>();
  const runOne = (layer: Layer): Promise<LayerResult> => {
    const result = (async () => {
      if (layer.needsVscode && !(await Promise.all(setups)).every(Boolean))
        return { name: layer.name, passed: 0, failed: 1, pending: 0, seconds: 0, note: 'not run: setup failed' };
      return run(layer);
    })();
    results.set(layer, result);
    void result.then(
      (r) => ended.get(layer)?.(r.failed === 0),
      () => ended.get(layer)?.(false),
    );
    return result;
  };
  const lane = async (sequence: readonly Layer[]) => {
    for (const layer of sequence) await runOne(layer);
  };
  for (let i = 0; i < layers.length;) {
    if (layers[i]!.alone) {
      await runOne(layers[i++]!);
      continue;
    }
    const segment: Layer[] = [];
    while (i < layers.length && !layers[i]!.alone) segment.push(layers[i++]!);
    await Promise.all([1, 2, 3].map((n) => lane(segment.filter((l) => laneOf(l) === n))));
  }
  return Promise.all(layers.map((l) => results.get(l)!));
}

async function main(): Promise<number> {
  const only = process.argv.includes('--only') ? (process.argv[process.argv.indexOf('--only') + 1] ?? '').split(',') : undefined;
  const layers = only ? LAYERS.filter((l) => only.some((o) => l.name.startsWith(o))) : LAYERS;
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const summaryFile = path.join(RESULTS_DIR, 'summary.jsonl');
  fs.rmSync(summaryFile, { force: true });
  const gaugeAtStart = readSpeedGauge();
  const before = machineCpu();
  const startedAt = Date.now();
  const done = await runLayers(layers, (layer) => runLayer(layer, summaryFile));
  const after = machineCpu();
  const seconds = (Date.now() - startedAt) / 1000;
  const gauge = speedGaugeLine(gaugeAtStart, readSpeedGauge(), layersCpuSeconds(done));
  const passed = done.reduce((n, r) => n + r.passed, 0);
  const failed = done.reduce((n, r) => n + r.failed, 0);
  // The failed tests by name, above the total: CI shows the end of the output, and a count alone cannot be chased.
  const failures = done.flatMap((r) => (r.failures ?? []).map((f) => `FAILED in ${r.name}: ${f}`));
  const lines = [...done.map(line), ...cpuLines(done, before, after, seconds), gauge, ...failures, `${passed} passed, ${failed} failed`];
  fs.writeFileSync(path.join(RESULTS_DIR, 'summary.txt'), lines.join('\n') + '\n');
  process.stdout.write(`\n::: test layers\n${lines.join('\n')}\n`);
  return failed === 0 ? 0 : 1;
}

if (require.main === module) void main().then((code) => process.exit(code));
