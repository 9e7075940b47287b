// The order of `npm test`'s layers (test/harness/testAll.ts), with a runner that ends each layer when
// the test says so: the unit tests' Debian package first, alone; then the setup (the other packages
// and the code-servers) with lint and the unit tests beside it, not after them (on a fresh clone that
// was a minute and a half of waiting); the format check after the setup, in its lane; the VS Code
// layers once the setup has ended well, in three lanes.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { layerCpu, machineCpu } from '../harness/cpuAccounting';
import { cpuLines, type Layer, type LayerResult, laneOf, LAYERS, line, runLayers } from '../harness/testAll';

/** A runner whose layers end when `end(name)` is called; `events` is what happened, in order. */
function heldRunner() {
  const events: string[] = [];
  const ends = new Map<string, (failed: number) => void>();
  const run = (layer: Layer) =>
    new Promise<LayerResult>((resolve) => {
      events.push(`start ${layer.name}`);
      ends.set(layer.name, (failed) => {
        events.push(`end ${layer.name}`);
        resolve({ name: layer.name, passed: failed ? 0 : 1, failed, pending: 0, seconds: 0 });
      });
    });
  /** Waits until the layer has started (the chain runs on promises: a few turns of the event loop). */
  const started = async (name: string) => {
    for (let turn = 0; turn < 100 && !ends.has(name); turn++) await new Promise((r) => setImmediate(r));
    assert.ok(ends.has(name), `${name} did not start; so far: ${events.join(', ')}`);
  };
  const end = async (name: string, failed = 0) => {
    await started(name);
    ends.get(name)!(failed);
  };
  /** A few turns of the event loop: what would start next has started by then. */
  const settle = async () => {
    for (let turn = 0; turn < 20; turn++) await new Promise((r) => setImmediate(r));
  };
  return { events, run, started, end, settle };
}

const UNIT_PACKAGES = LAYERS[0]!.name;
const SETUP = LAYERS.find((l) => l.untested && l.beside)!.name;
const CHECKS = LAYERS.filter((l) => l.check).map((l) => l.name);
const LINT = LAYERS.find((l) => l.check && l.name.startsWith('lint'))!.name;
const FORMAT = LAYERS.find((l) => l.check && l.name.startsWith('format'))!.name;
const VSCODE_LAYERS = LAYERS.filter((l) => l.needsVscode).map((l) => l.name);
const vscodeLane = (n: number) => LAYERS.filter((l) => !l.alone && laneOf(l) === n && l.needsVscode).map((l) => l.name);
const FIRST_LANE = vscodeLane(1);
const SECOND_LANE = vscodeLane(2);
const THIRD_LANE = vscodeLane(3);

describe('npm test: the order of the layers', () => {
  it("the unit tests' Debian packages first, alone; then lint beside the setup; then three lanes of VS Code layers", async () => {
    const runner = heldRunner();
    const chain = runLayers(LAYERS, runner.run);
    await runner.started(UNIT_PACKAGES);
    await runner.settle();
    assert.deepEqual(runner.events, [`start ${UNIT_PACKAGES}`], "nothing beside the unit tests' Debian packages");
    await runner.end(UNIT_PACKAGES);
    // The first layer of the first two lanes, neither of which needs VS Code: lint and the setup. The
    // third lane has only VS Code layers: it waits for the setup.
    for (const first of [LINT, SETUP]) await runner.started(first);
    await runner.settle();
    assert.deepEqual(runner.events.slice(2).sort(), [`start ${SETUP}`, `start ${LINT}`].sort());
    // Lint, the format check, then the unit tests, in the first lane beside the setup.
    await runner.end(LINT);
    await runner.end(FORMAT);
    await runner.started('unit');
    // The unit tests end first: the VS Code layers still wait for the setup.
    await runner.end('unit');
    await runner.settle();
    assert.equal(runner.events.at(-1), 'end unit');
    await runner.end(SETUP);
    // The three lanes go on at once, each with its first VS Code layer (the second lane's is the
    // longest layer, e2e on 1.100.3: it starts as soon as it can).
    for (const lane of [FIRST_LANE, SECOND_LANE, THIRD_LANE]) await runner.started(lane[0]!);
    assert.equal(SECOND_LANE[0], 'e2e, VS Code 1.100.3');
    // Each lane keeps its order: the next of a lane starts once the one before it ended.
    for (let i = 0; i < Math.max(FIRST_LANE.length, SECOND_LANE.length, THIRD_LANE.length); i++) {
      for (const lane of [FIRST_LANE, SECOND_LANE, THIRD_LANE]) {
        if (!lane[i]) continue;
        if (lane[i + 1]) {
          await runner.settle();
          assert.ok(!runner.events.includes(`start ${lane[i + 1]}`), `${lane[i + 1]} started before ${lane[i]} ended`);
        }
        await runner.end(lane[i]!);
      }
    }
    const results = await chain;
    assert.deepEqual(
      results.map((r) => r.name),
      LAYERS.map((l) => l.name),
      'the summary lists the layers in their order',
    );
    assert.ok(results.every((r) => r.failed === 0));
    assert.ok(FIRST_LANE.length > 0 && SECOND_LANE.length > 0 && THIRD_LANE.length > 0, 'three lanes of VS Code layers');
  });

  it('a failed setup: the unit tests still run, and every VS Code layer is reported as not run', async () => {
    const runner = heldRunner();
    const chain = runLayers(LAYERS, runner.run);
    await runner.end(UNIT_PACKAGES);
    await runner.end(SETUP, 1);
    for (const check of CHECKS) await runner.end(check);
    await runner.end('unit');
    const results = await chain;
    assert.deepEqual(
      runner.events.filter((e) => e.startsWith('start')).sort(),
      [`start ${UNIT_PACKAGES}`, `start ${SETUP}`, ...CHECKS.map((c) => `start ${c}`), 'start unit'].sort(),
    );
    for (const name of VSCODE_LAYERS) assert.deepEqual(results.find((r) => r.name === name)?.note, 'not run: setup failed');
  });

  it('a failed check (lint, format) is reported, and holds back no layer: the unit tests and every VS Code layer still run', async () => {
    assert.deepEqual([...CHECKS].sort(), ['format check (prettier)', 'lint (eslint, dependency rules)']);
    const runner = heldRunner();
    const chain = runLayers(LAYERS, runner.run);
    await runner.end(UNIT_PACKAGES);
    await runner.end(LINT, 1);
    await runner.end(FORMAT, 1);
    await runner.end('unit');
    await runner.end(SETUP);
    for (const name of [...FIRST_LANE, ...SECOND_LANE, ...THIRD_LANE]) await runner.end(name);
    const results = await chain;
    assert.deepEqual(
      results.filter((r) => r.failed).map((r) => r.name),
      CHECKS,
    );
  });
});

describe("a layer's CPU seconds (a control group) and the machine's", () => {
  it('counts every process started in the layer, one that outlived its parent too: a shell that leaves a 0.4 s spinner behind', async function () {
    this.timeout(60_000); // a wait on a loaded machine, not a bound
    const cpu = layerCpu(`test-${process.pid}`);
    const spin = `const t = process.cpuUsage(); while (process.cpuUsage(t).user < 400000);`;
    // The shell exits at once; the spinner is orphaned, as a killed code-server's extension host is.
    const { command, args } = cpu.wrap('sh', ['-c', `"${process.execPath}" -e '${spin}' & echo $!`]);
    const done = spawnSync(command, args, { encoding: 'utf8' });
    assert.equal(done.status, 0);
    const orphan = Number(done.stdout.trim());
    while (fs.existsSync(`/proc/${orphan}`)) await new Promise((r) => setTimeout(r, 50));
    const seconds = cpu.read();
    if (process.platform !== 'linux' || process.getuid?.() !== 0) {
      assert.equal(seconds, undefined, 'no group without root: no figure rather than a wrong one');
      return;
    }
    assert.ok(seconds !== undefined && seconds >= 0.4, `CPU ${seconds} s`);
  });

  it('the machine: busy and idle seconds grow; the summary says how busy it was', () => {
    const before = machineCpu();
    if (process.platform !== 'linux') return assert.equal(before, undefined);
    const t = process.cpuUsage();
    while (process.cpuUsage(t).user < 200_000);
    const after = machineCpu()!;
    assert.ok(after.busy - before!.busy >= 0.1, `busy ${after.busy - before!.busy} s`);
    const [layers, machine] = cpuLines(
      [{ name: 'unit', passed: 1, failed: 0, pending: 0, seconds: 3, cpuSeconds: 2.4 }],
      { busy: 0, idle: 0 },
      { busy: 150, idle: 50 },
      100,
    );
    assert.equal(layers, 'CPU of the layers in all: 2 s');
    assert.match(machine!, /^machine CPU over 100 s: 150 s busy of 200 s \(\d+ cores\), 75 %$/);
  });

  it('is shown after the wall-clock seconds of its layer', () => {
    assert.equal(
      line({ name: 'unit', passed: 3, failed: 0, pending: 1, seconds: 200.4, cpuSeconds: 150.6 }),
      'unit: 3 passed, 0 failed, 1 pending, 200 s (CPU 151 s)',
    );
    assert.equal(line({ name: 'setup', passed: 0, failed: 0, pending: 0, seconds: 80 }), 'setup: 80 s');
  });
});
