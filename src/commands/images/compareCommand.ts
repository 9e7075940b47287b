// Compare Models… at activation: its command and the API's entry only. The comparison's code
// (compareModels.ts) is dist/compareModels.js, loaded on first use, so that activation does not read it.
import * as vscode from 'vscode';
import type { Services } from '../../services';
import type * as CompareModule from './compareModels';

let chunk: typeof CompareModule | undefined;
/** Loads dist/compareModels.js on first use; esbuild leaves this require alone. */
export function compareCode(): typeof CompareModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./compareModels.js') as typeof CompareModule;
  return chunk;
}

export function registerCompareModels(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.compareModels', (args?: unknown) => compareCode().compareModelsCommand(services, args));
}
