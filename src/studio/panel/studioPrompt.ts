// Host side of the studio's "Write a prompt from the active document…": the editor's language model
// writes a prompt from the Markdown or HTML editor beside the studio (its selection, else the whole
// document), through the same code as Generate Image for Selection (commands/images/writePrompt.ts). The
// prompt goes into the form, whose live estimate is the review: nothing is sent from here.
import * as vscode from 'vscode';
import { CancelledError } from '../../core/gateway/errors';
import { sourceKindOf } from '../../core/requests/promptWriting';
import { styleValues } from '../../commands/styles/styles';
import { writePromptCode } from '../../commands/images/writePromptChunk';
import { type Services } from '../../services';

const WRITABLE = ['markdown', 'html'];

interface SourceText {
  document: vscode.TextDocument;
  selection: vscode.Selection;
}

/** The Markdown or HTML editor active last, with its selection: the studio, which has the focus, often hides it. */
let last: SourceText | undefined;

function remember(editor: vscode.TextEditor | undefined): void {
  if (editor && WRITABLE.includes(editor.document.languageId)) last = { document: editor.document, selection: editor.selection };
}

/** Follows the active Markdown/HTML editor and its selection while the studio is open. */
export function trackSourceEditor(): vscode.Disposable {
  remember(vscode.window.activeTextEditor);
  return vscode.Disposable.from(
    vscode.window.onDidChangeActiveTextEditor(remember),
    vscode.window.onDidChangeTextEditorSelection((event) => remember(event.textEditor)),
  );
}

/** What to write from: the active Markdown/HTML editor, else the one active last (still open), else a visible one. */
function sourceText(): SourceText | undefined {
  remember(vscode.window.activeTextEditor);
  if (last && !last.document.isClosed) return last;
  const visible = vscode.window.visibleTextEditors.find((editor) => WRITABLE.includes(editor.document.languageId));
  return visible && { document: visible.document, selection: visible.selection };
}

/** The prompt for the form and a line for the person (who wrote it, or why there is none). */
export async function writePromptFromEditor(services: Services, style: string | undefined): Promise<{ prompt?: string; note?: string }> {
  const code = writePromptCode();
  if (code.writePromptMode() === 'never') {
    return { note: vscode.l10n.t('Writing prompts with a language model is turned off (setting gatewayImages.writePromptWithLanguageModel).') };
  }
  const editor = sourceText();
  if (!editor) return { note: vscode.l10n.t('Open a Markdown or HTML document beside the studio to write a prompt from it.') };
  const selected = editor.selection.isEmpty ? '' : editor.document.getText(editor.selection).trim();
  const values = style ? await styleValues(style, undefined, services).catch(() => undefined) : undefined;
  const source = {
    text: selected || editor.document.getText(),
    wholeDocument: !selected,
    kind: sourceKindOf(editor.document.languageId),
    ...(style ? { style: { name: style, description: values?.description, promptPrefix: values?.promptPrefix, promptSuffix: values?.promptSuffix } } : {}),
  };
  try {
    const written = await code.proposePrompt(services, { source, plainText: selected, title: vscode.l10n.t('Image Studio') });
    const note = written.writtenBy ? vscode.l10n.t('Written by {0}: check it and the estimate before generating.', written.writtenBy) : written.fallback;
    return { ...(written.prompt ? { prompt: written.prompt } : {}), ...(note ? { note } : {}) };
  } catch (error) {
    if (error instanceof CancelledError) return { note: error.message };
    return { note: error instanceof Error ? error.message : String(error) };
  }
}
