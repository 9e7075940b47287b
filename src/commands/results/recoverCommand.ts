// Recover Unsaved Images, as activation sees it: the command's registration only. Its code is
// dist/recover.js (recover.ts), loaded when the command first runs, so that activation does not read it.
import * as vscode from 'vscode';
import { type Services } from '../../services';
import type * as RecoverModule from './recover';

let chunk: typeof RecoverModule | undefined;
/** Loads dist/recover.js on first use; esbuild leaves this require alone. */
function recoverCode(): typeof RecoverModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./recover.js') as typeof RecoverModule;
  return chunk;
}

export function registerRecover(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.recoverImages', () => recoverCode().recoverImages(services));
}
