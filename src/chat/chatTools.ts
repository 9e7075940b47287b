// The chat tools of package.json `languageModelTools`: gatewayImages_generateImage and
// gatewayImages_editImage, registered together so that they share the agents' session cap.
import * as vscode from 'vscode';
import { summarizeError } from '../core/gateway/errors';
import { SpendingCap } from '../core/money/spendingCap';
import { readAgentCaps } from '../host/settings';
import { type Services } from '../services';
import { createEditImageTool, EDIT_IMAGE_TOOL, type EditImageInput } from './editImageTool';
import { createGenerateImageTool, GENERATE_IMAGE_TOOL, type GenerateImageInput } from './generateImageTool';

/** The confirmations of both tools as the test harness reads them (VS Code shows them in a dialog). */
export type PrepareChatTool = (tool: string, input: unknown) => Promise<vscode.PreparedToolInvocation | null | undefined>;

/** Registers both chat tools; `prepare` runs a tool's confirmation without invoking it (tests). */
export function registerChatTools(services: Services): { disposable: vscode.Disposable; prepare: PrepareChatTool } {
  // "Always Allow" skips the confirmations: the agents' caps bound the spending, one session cap for both tools.
  const cap = new SpendingCap(readAgentCaps, services.locale);
  const generateTool = createGenerateImageTool(services, cap);
  const editTool = createEditImageTool(services, cap);
  const none = new vscode.CancellationTokenSource().token;
  const prepare: PrepareChatTool = async (tool, input) => {
    const options = { input } as vscode.LanguageModelToolInvocationPrepareOptions<never>;
    if (tool === GENERATE_IMAGE_TOOL) return generateTool.prepareInvocation?.(options, none);
    if (tool === EDIT_IMAGE_TOOL) return editTool.prepareInvocation?.(options, none);
    return undefined;
  };
  const disposables: vscode.Disposable[] = [];
  for (const [name, tool] of [
    [GENERATE_IMAGE_TOOL, generateTool],
    [EDIT_IMAGE_TOOL, editTool],
  ] as const) {
    try {
      disposables.push(vscode.lm.registerTool<GenerateImageInput | EditImageInput>(name, tool));
    } catch (error) {
      // A host without language model tools must not fail the whole activation.
      services.log.warn(`The chat tool ${name} could not be registered: ${summarizeError(error).message}`);
    }
  }
  return { disposable: vscode.Disposable.from(...disposables), prepare };
}
