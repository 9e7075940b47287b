// Generate Images from File, as activation sees it: the command's registration only. Its code (the
// claim, the plan, the confirmation, the run and its report) is dist/promptFiles.js, loaded when a
// prompt file is first run, so that activation does not read it.
import * as vscode from 'vscode';
import { type Services } from '../../services';
import type * as PromptFilesModule from './batchFromFile';
import type { BatchResult } from './batchRun';

export type { BatchArgs, BatchResult } from './batchRun';

let chunk: typeof PromptFilesModule | undefined;
/** Loads dist/promptFiles.js on first use; esbuild leaves this require alone. */
function promptFilesCode(): typeof PromptFilesModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./promptFiles.js') as typeof PromptFilesModule;
  return chunk;
}

export function registerBatchFromFile(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.generateFromFile', (first?: unknown) => generateFromFileCommand(services, first));
}

/** The command with its first argument: a file (menus), an arguments object (scripts, tests) or nothing (palette). */
export function generateFromFileCommand(services: Services, first?: unknown): Promise<BatchResult | undefined> {
  return promptFilesCode().generateFromFileCommand(services, first);
}
