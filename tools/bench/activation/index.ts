// Benchmark entry run inside the real VS Code by the test harness (test/harness/runIntegration.ts):
// activates the extension and prints how long its activate() took, as the extension measured it.
//   node out/test/harness/runIntegration.js --tests out/tools/bench/activation
import * as vscode from 'vscode';

const EXTENSION_ID = 'gateway-images.gateway-images';

export async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension<{ activationMs: number }>(EXTENSION_ID);
  if (!extension) throw new Error(`Extension ${EXTENSION_ID} is not installed in this VS Code.`);
  const api = extension.isActive ? extension.exports : await extension.activate();
  const ms = api?.activationMs;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new Error(`The extension's API has no numeric activationMs (got ${String(ms)}).`);
  console.log(`ACTIVATION_MS=${ms.toFixed(3)}`);
}
