// Benchmark entry run inside the real VS Code by the test harness (test/harness/runIntegration.ts):
// activates the extension and prints how long its activate() took, as the extension measured it,
// and the baseline its target is a ratio to, measured in the same extension host right after:
// loading the same bundle once more (compiling and running its top level in a new module, as the
// extension host did before activate()), so that a slower machine, which stretches both, does not
// decide the target.
//   node out/test/harness/runIntegration.js --tests out/tools/bench/activation
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vscode from 'vscode';

const EXTENSION_ID = 'gateway-images.gateway-images';
const LOADS = 5;

interface LoadableModule {
  filename: string;
  paths: string[];
  _compile(code: string, filename: string): unknown;
}
// The module system's own class: a module instance that require()'s cache does not know.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const NodeModule = require('node:module') as { new (id: string, parent?: unknown): LoadableModule; _nodeModulePaths(dir: string): string[] };

/** Compiles and runs `file`'s code in a new module, as a first require() would; ms. */
function loadOnceMore(file: string, source: string, load: number): number {
  const loaded = new NodeModule(file, module);
  loaded.filename = file;
  loaded.paths = NodeModule._nodeModulePaths(path.dirname(file));
  // Another text each time: V8 compiles it anew instead of taking the compilation it cached.
  const code = `${source}\n// load ${load}`;
  const started = performance.now();
  loaded._compile(code, file);
  return performance.now() - started;
}

export async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension<{ activationMs: number }>(EXTENSION_ID);
  if (!extension) throw new Error(`Extension ${EXTENSION_ID} is not installed in this VS Code.`);
  const api = extension.isActive ? extension.exports : await extension.activate();
  const ms = api?.activationMs;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new Error(`The extension's API has no numeric activationMs (got ${String(ms)}).`);
  console.log(`ACTIVATION_MS=${ms.toFixed(3)}`);
  const main = path.join(extension.extensionPath, (extension.packageJSON as { main: string }).main);
  const source = readFileSync(main, 'utf8');
  const loads = Array.from({ length: LOADS }, (_, i) => loadOnceMore(main, source, i)).sort((a, b) => a - b);
  console.log(`BUNDLE_LOAD_MS=${loads[LOADS >> 1]!.toFixed(3)}`);
}
