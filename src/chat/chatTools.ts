// The chat tools of package.json `languageModelTools`: gatewayImages_generateImage and
// gatewayImages_editImage. Registered at activation; their code (toolCode.ts, dist/chatToolCode.js)
// loads when an agent first uses one, so the activation bundle stays small.
import * as vscode from 'vscode';
import { summarizeError } from '../core/gateway/errors';
import { type Services } from '../services';
import type * as ToolCodeModule from './toolCode';

export const GENERATE_IMAGE_TOOL = 'gatewayImages_generateImage';
export const EDIT_IMAGE_TOOL = 'gatewayImages_editImage';

/** A tool's confirmation as the test harness reads it (VS Code shows it in a dialog). */
export type PrepareChatTool = (tool: string, input: unknown) => Promise<vscode.PreparedToolInvocation | null | undefined>;

type ChatTools = ReturnType<typeof ToolCodeModule.createChatTools>;

/** Registers both chat tools; `prepare` runs a tool's confirmation without invoking it (tests). */
export function registerChatTools(services: Services): { disposable: vscode.Disposable; prepare: PrepareChatTool } {
  let tools: ChatTools | undefined;
  const load = (): ChatTools => {
    // Esbuild leaves this require alone: dist/chatToolCode.js, next to dist/extension.js.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    tools ??= (require('./chatToolCode.js') as typeof ToolCodeModule).createChatTools(services);
    return tools;
  };
  const lazy = (which: keyof ChatTools): vscode.LanguageModelTool<object> => ({
    prepareInvocation: (options, token) => load()[which].prepareInvocation?.(options as never, token),
    invoke: (options, token) => load()[which].invoke(options as never, token),
  });
  const byName: Record<string, keyof ChatTools> = { [GENERATE_IMAGE_TOOL]: 'generate', [EDIT_IMAGE_TOOL]: 'edit' };
  const none = new vscode.CancellationTokenSource().token;
  const prepare: PrepareChatTool = async (tool, input) => {
    const which = byName[tool];
    return which && load()[which].prepareInvocation?.({ input } as never, none);
  };
  const disposables: vscode.Disposable[] = [];
  for (const [name, which] of Object.entries(byName)) {
    try {
      disposables.push(vscode.lm.registerTool(name, lazy(which)));
    } catch (error) {
      // A host without language model tools must not fail the whole activation.
      services.log.warn(`The chat tool ${name} could not be registered: ${summarizeError(error).message}`);
    }
  }
  return { disposable: vscode.Disposable.from(...disposables), prepare };
}
