// Host side of the studio's comparison grid: the view of the feed, and the page's requests
// (compare the form across models, cancel, use a model).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { compareModels, pickCompareModels, useModel } from '../../commands/images/compareModels';
import { showError } from '../../commands/common/showError';
import { formatRubles } from '../../core/money/cost';
import { type Services } from '../../services';
import { type ComparisonView, type CompareFromWebviewMessage } from '../protocol/compareProtocol';
import { comparisonFeed, type ComparisonState } from '../../jobs/comparisonFeed';
import { checkReference } from '../model/files';
import { formArgs } from '../model/view';
import { messageText } from '../../core/common/markdownText';

export function toComparisonView(state: ComparisonState, src: (file: string) => string, locale: string): ComparisonView {
  return {
    runId: state.runId,
    prompt: state.prompt,
    running: state.running,
    estimateText: state.estimateText,
    entries: state.entries.map((e) => ({
      model: e.model,
      status: e.status,
      images: e.files.map((file) => ({ file, name: path.basename(file), src: src(file) })),
      costText: e.costRub === undefined ? undefined : formatRubles(e.costRub, locale),
      timeText: e.ms === undefined ? undefined : vscode.l10n.t('{0} s', (e.ms / 1000).toLocaleString(locale, { maximumFractionDigits: 1 })),
      error: e.error,
    })),
  };
}

export async function handleCompareMessage(services: Services, message: CompareFromWebviewMessage): Promise<void> {
  switch (message.type) {
    case 'cancelCompare':
      comparisonFeed.cancel();
      return;
    case 'useModel':
      await useModel(services, message.model);
      void vscode.window.showInformationMessage(messageText(vscode.l10n.t('{0} is now the default model for the next run.', message.model)));
      return;
    case 'compare':
      try {
        const images: string[] = [];
        for (const file of message.form.references) {
          const check = await checkReference(file);
          if (!check.ok) throw new Error(check.reason);
          images.push(check.path);
        }
        // Provider parameters belong to one model: a comparison leaves them out (and each model is the style's choice no more).
        const { model: _model, params: _params, style, ...options } = formArgs(message.form);
        const { prompt, ...compared } = options;
        const models = await pickCompareModels(services, prompt, ownOptions(compared), images.length, style);
        await compareModels(services, { ...options, models, images, ...(style ? { style } : {}) }, true);
      } catch (error) {
        void showError(services, error);
      }
      return;
  }
}

/** The options the person set (a field cleared against the style is no option). */
function ownOptions<T extends object>(options: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]: Exclude<T[K], null> };
}
