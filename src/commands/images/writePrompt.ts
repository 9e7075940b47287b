// The image prompt written by the editor's language model (vscode.lm: Copilot or any installed
// provider) from a selection or a whole Markdown/HTML document. The instruction and the cleaning of
// the answer are pure (core/requests/promptWriting.ts); here: the setting, the choice of model, the request
// with a cancellable progress, and the fallback to the selected text with one line that says why.
// Nothing is sent to the gateway here: the prompt goes on to the review step, with the estimate.
// Bundled as dist/writePrompt.js, loaded on first use (generateForSelection.ts).
import * as vscode from 'vscode';
import { CancelledError, ValidationError } from '../../core/gateway/errors';
import { cleanWrittenPrompt, promptInstruction, type PromptSource } from '../../core/requests/promptWriting';
import { SECTION } from '../../host/settings';
import { type Services } from '../../services';
import { messageText } from '../../core/common/markdownText';

export type WritePromptMode = 'ask' | 'always' | 'never';
const LAST_LANGUAGE_MODEL_KEY = 'gatewayImages.lastLanguageModel';

/** The user's choice (scope `application`: a workspace cannot turn it on or off). */
export function writePromptMode(): WritePromptMode {
  const value = vscode.workspace.getConfiguration(SECTION).inspect<unknown>('writePromptWithLanguageModel')?.globalValue;
  return value === 'always' || value === 'never' ? value : 'ask';
}

export interface WrittenPrompt {
  /** The prompt proposed for the review (the model's, or the text itself); empty when there is none. */
  prompt: string;
  /** The language model that wrote it. */
  writtenBy?: string;
  /** Why the text itself is the prompt (no model, consent declined, the model failed). */
  fallback?: string;
}

export interface PromptRequest {
  source: PromptSource;
  /** What the prompt is without a model: the selected text (empty: the person writes one). */
  plainText: string;
  title: string;
  mode?: WritePromptMode;
}

/**
 * A prompt for the review: written by a language model when the setting and the person allow it,
 * else the plain text. A cancel while the model writes ends the command (nothing was sent).
 */
export async function proposePrompt(services: Services, request: PromptRequest): Promise<WrittenPrompt> {
  const mode = request.mode ?? writePromptMode();
  if (mode === 'never') return { prompt: request.plainText };
  const models = await vscode.lm.selectChatModels().then(
    (found) => found,
    () => [] as vscode.LanguageModelChat[],
  );
  if (!models.length) {
    return fallBack(services, request, vscode.l10n.t('No language model is available in VS Code'));
  }
  const model = mode === 'ask' ? await askModel(services, models, request) : lastUsed(services, models);
  if (!model) return { prompt: request.plainText };
  await services.context.globalState.update(LAST_LANGUAGE_MODEL_KEY, model.id);
  try {
    return { prompt: await writeWith(model, request), writtenBy: model.name };
  } catch (error) {
    if (error instanceof CancelledError) throw error;
    if (error instanceof vscode.LanguageModelError && error.code === vscode.LanguageModelError.NoPermissions.name) {
      return fallBack(services, request, vscode.l10n.t('Gateway Images may not use {0} (permission declined)', model.name));
    }
    const reason = error instanceof Error ? error.message : String(error);
    return fallBack(services, request, vscode.l10n.t('{0} could not write a prompt ({1})', model.name, reason));
  }
}

/** The text itself, and the line that says why (shown without waiting, and in the review). */
function fallBack(services: Services, request: PromptRequest, reason: string): WrittenPrompt {
  const why = request.plainText
    ? vscode.l10n.t('{0}, so the selected text is the prompt.', reason)
    : vscode.l10n.t('{0}, so you write the prompt yourself.', reason);
  services.log.info(why);
  void vscode.window.showInformationMessage(messageText(why));
  return { prompt: request.plainText, fallback: why };
}

function lastUsed(services: Services, models: vscode.LanguageModelChat[]): vscode.LanguageModelChat {
  const last = services.context.globalState.get<string>(LAST_LANGUAGE_MODEL_KEY);
  return models.find((m) => m.id === last) ?? models[0]!;
}

/** "ask": write with one of the models (the last one used first), or use the text as it is. */
async function askModel(services: Services, models: vscode.LanguageModelChat[], request: PromptRequest): Promise<vscode.LanguageModelChat | undefined> {
  const first = lastUsed(services, models);
  const ordered = [first, ...models.filter((m) => m !== first)];
  type Item = vscode.QuickPickItem & { model?: vscode.LanguageModelChat };
  const items: Item[] = ordered.map((model) => ({
    label: `$(sparkle) ${vscode.l10n.t('Write the prompt with {0}', model.name)}`,
    description: model.vendor,
    detail: vscode.l10n.t("Its cost or quota is the language model provider's; you review the prompt and the estimate before sending."),
    model,
  }));
  items.push({
    label: `$(quote) ${request.plainText ? vscode.l10n.t('Use the selected text as the prompt') : vscode.l10n.t('Write the prompt myself')}`,
    description: vscode.l10n.t('setting gatewayImages.writePromptWithLanguageModel'),
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: request.title,
    placeHolder: vscode.l10n.t('Write the image prompt with a language model?'),
    ignoreFocusOut: true,
  });
  if (!picked) throw new CancelledError(vscode.l10n.t('Cancelled: nothing was sent.'));
  return picked.model;
}

/** Streams the model's answer under a cancellable progress; the cleaned prompt. */
async function writeWith(model: vscode.LanguageModelChat, request: PromptRequest): Promise<string> {
  const messages = [vscode.LanguageModelChatMessage.User(promptInstruction(request.source))];
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Writing the prompt with {0}…', model.name), cancellable: true },
    async (_progress, token) => {
      const cancelled = () => new CancelledError(vscode.l10n.t('Cancelled while the language model was writing: nothing was sent.'));
      let answer = '';
      try {
        const response = await model.sendRequest(messages, { justification: vscode.l10n.t('To write an image prompt from your text') }, token);
        for await (const part of response.text) {
          if (token.isCancellationRequested) break;
          answer += part;
        }
      } catch (error) {
        if (token.isCancellationRequested) throw cancelled();
        throw error;
      }
      if (token.isCancellationRequested) throw cancelled();
      try {
        return cleanWrittenPrompt(answer);
      } catch (error) {
        if (error instanceof ValidationError) throw new Error(error.message, { cause: error });
        throw error;
      }
    },
  );
}
