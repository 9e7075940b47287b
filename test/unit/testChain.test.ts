// The order of `npm test`'s layers (test/harness/testAll.ts), with a runner that ends each layer when
// the test says so: the Debian packages first, then the code-servers' setup with the unit tests
// beside it (not after them: on a fresh clone that was a minute and a half of waiting), and the
// VS Code layers only once the setup has ended well.
import * as assert from 'node:assert/strict';
import { type Layer, type LayerResult, LAYERS, runLayers } from '../harness/testAll';

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

const SETUP = LAYERS.find((l) => l.besideTo)!.name;
const VSCODE_LAYERS = LAYERS.filter((l) => l.needsVscode).map((l) => l.name);

describe('npm test: the order of the layers', () => {
  it('the Debian packages first; then the setup of the code-servers with the unit tests beside it; the VS Code layers after the setup', async () => {
    const runner = heldRunner();
    const chain = runLayers(LAYERS, runner.run);
    await runner.end('Debian packages');
    await runner.started(SETUP);
    await runner.started('unit');
    assert.deepEqual(runner.events, ['start Debian packages', 'end Debian packages', `start ${SETUP}`, 'start unit']);
    // The unit tests end first: the VS Code layers still wait for the setup.
    await runner.end('unit');
    await runner.settle();
    assert.equal(runner.events.at(-1), 'end unit');
    await runner.end(SETUP);
    for (const name of VSCODE_LAYERS) await runner.end(name);
    const results = await chain;
    assert.deepEqual(
      results.map((r) => r.name),
      LAYERS.map((l) => l.name),
      'the summary lists the layers in their order',
    );
    assert.ok(results.every((r) => r.failed === 0));
  });

  it('a failed setup: the unit tests still run, and every VS Code layer is reported as not run', async () => {
    const runner = heldRunner();
    const chain = runLayers(LAYERS, runner.run);
    await runner.end('Debian packages');
    await runner.end(SETUP, 1);
    await runner.end('unit');
    const results = await chain;
    assert.deepEqual(
      runner.events.filter((e) => e.startsWith('start')),
      ['start Debian packages', `start ${SETUP}`, 'start unit'],
    );
    for (const name of VSCODE_LAYERS) assert.deepEqual(results.find((r) => r.name === name)?.note, 'not run: setup failed');
  });
});
