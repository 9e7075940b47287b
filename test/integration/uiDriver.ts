// Answers the extension's own pickers, input boxes and progress in real VS Code, as a person would:
// vscode.window's functions are wrapped (the tests and the extension share one API object, see
// captureUi in support.ts). Quick picks made with createQuickPick are answered through the
// workbench (the wanted item made active, then VS Code's own accept command).
import * as assert from 'assert';
import * as vscode from 'vscode';

export type Answer =
  { pick: (item: vscode.QuickPickItem) => boolean; see?: (items: vscode.QuickPickItem[]) => void } | { input: (value: string) => string | undefined };

export interface UiDriver {
  /** Every quick pick's items (by title or placeholder), in order. */
  readonly shown: { title: string; items: vscode.QuickPickItem[] }[];
  readonly messages: string[];
  /** Resolves with the next progress's cancel (the command's own cancel button). */
  readonly progress: Promise<() => void>;
  /** Answers not used yet. */
  readonly left: Answer[];
  restore(): void;
}

/** Answers, in order, each quick pick (both kinds) and input box the extension shows. */
export function driveUi(answers: Answer[]): UiDriver {
  const window = vscode.window as unknown as Record<string, unknown>;
  const originals = new Map<string, unknown>();
  const queue = [...answers];
  const shown: UiDriver['shown'] = [];
  const messages: string[] = [];
  let giveCancel: (cancel: () => void) => void = () => undefined;
  const progress = new Promise<() => void>((resolve) => (giveCancel = resolve));
  const replace = (name: string, make: (original: (...args: unknown[]) => unknown) => (...args: unknown[]) => unknown) => {
    const original = window[name] as (...args: unknown[]) => unknown;
    originals.set(name, original);
    window[name] = make(original.bind(vscode.window));
  };
  const next = (kind: 'pick' | 'input', what: string): Answer => {
    const answer = queue.shift();
    assert.ok(answer && kind in answer, `unexpected ${kind === 'pick' ? 'quick pick' : 'input box'}: ${what}`);
    return answer;
  };
  const choose = (items: vscode.QuickPickItem[], title: string) => {
    shown.push({ title, items });
    const answer = next('pick', `${title}: ${items.map((i) => i.label).join(' | ')}`) as Extract<Answer, { pick: unknown }>;
    answer.see?.(items);
    const item = items.find((i) => i.kind !== vscode.QuickPickItemKind.Separator && answer.pick(i));
    assert.ok(item, `no item to pick in ${title}: ${items.map((i) => i.label).join(' | ')}`);
    return item;
  };
  replace('showQuickPick', () => async (items, options) => {
    const list = (await (items as Thenable<vscode.QuickPickItem[]>)) ?? [];
    const opts = (options ?? {}) as vscode.QuickPickOptions;
    return choose(list, opts.title ?? opts.placeHolder ?? '');
  });
  replace('showInputBox', () => async (options) => {
    const opts = (options ?? {}) as vscode.InputBoxOptions;
    const answer = next('input', opts.title ?? '') as Extract<Answer, { input: unknown }>;
    return answer.input(opts.value ?? '');
  });
  replace('createQuickPick', (original) => () => {
    const quickPick = original() as vscode.QuickPick<vscode.QuickPickItem>;
    const show = quickPick.show.bind(quickPick);
    quickPick.show = () => {
      show();
      void (async () => {
        // The model picker fills its items after show (catalog): wait for the wanted one.
        for (let i = 0; i < 200 && !quickPick.items.length; i++) await new Promise((r) => setImmediate(r));
        const item = choose([...quickPick.items], quickPick.title ?? quickPick.placeholder ?? '');
        // Only the wanted item is left, so it is the workbench's active one. The extension host
        // sends a quick pick's changes on its next macrotask (batched): the command goes after them.
        quickPick.items = [item];
        quickPick.activeItems = [item];
        await new Promise((resolve) => setTimeout(resolve, 0));
        await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      })();
    };
    return quickPick;
  });
  replace('withProgress', (original) => (options, task) => {
    const source = new vscode.CancellationTokenSource();
    giveCancel(() => source.cancel());
    const run = task as (p: vscode.Progress<unknown>, t: vscode.CancellationToken) => unknown;
    return original(options, (p: vscode.Progress<unknown>, token: vscode.CancellationToken) => {
      token.onCancellationRequested(() => source.cancel());
      return run(p, source.token);
    });
  });
  for (const name of ['showInformationMessage', 'showWarningMessage', 'showErrorMessage']) {
    replace(name, (original) => (...args) => {
      messages.push(String(args[0]));
      return original(...args);
    });
  }
  return {
    shown,
    messages,
    progress,
    get left() {
      return queue;
    },
    restore() {
      for (const [name, original] of originals) window[name] = original;
    },
  };
}

/** An answer that picks the item whose label contains `text`. */
export const pickLabel = (text: string, see?: (items: vscode.QuickPickItem[]) => void): Answer => ({
  pick: (item) => item.label.includes(text),
  ...(see ? { see } : {}),
});
