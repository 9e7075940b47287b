// Generate Image for Selection (Markdown and HTML editors): the editor's language model writes the
// prompt from the selection (commands/images/writePrompt.ts), or the selected text is the prompt; the
// images are generated through the shared path and linked right after the selection, with paths
// relative to the document. Interactive (model picker and options review) or by arguments.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ValidationError } from '../../core/gateway/errors';
import { escapeHtml } from '../../core/common/escapeHtml';
import { type Services } from '../../services';
import { type GenerateArgs, isArgsObject, toGenerateArgs } from '../common/commandArgs';
import { generate } from './generate';
import { type CommandResult } from './jobRunner';
import { sourceKindOf, type StyleHint } from '../../core/requests/promptWriting';
import { askPrompt, pickModel, reviewRequest } from './pickers';
import { type ErrorActions, showError } from '../common/showError';
import { askStyle, styleValues } from '../styles/styles';
import { writePromptCode } from './writePromptChunk';

export interface SelectionResult extends CommandResult {
  /** The text inserted into the document. */
  inserted: string;
}

type LinkSyntax = 'markdown' | 'html';

const DROP_KIND = vscode.DocumentDropOrPasteEditKind.Empty.append('gatewayImages', 'image');

export function registerGenerateForSelection(services: Services): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('gatewayImages.generateForSelection', (args?: unknown) => generateForSelection(services, args)),
    vscode.languages.registerDocumentDropEditProvider(
      [{ language: 'markdown' }, { language: 'html' }],
      { provideDocumentDropEdits: (document, _position, data) => dropEdit(services, document, data) },
      { providedDropEditKinds: [DROP_KIND], dropMimeTypes: ['text/uri-list'] },
    ),
  );
}

/**
 * A drop (with Shift) of generated images (Studio gallery cards, Explorer files) into Markdown or
 * HTML: the same link as the command, with the prompt as alt text. Only files the history knows;
 * anything else is left to VS Code's own providers (Markdown's built-in one links any file).
 */
async function dropEdit(services: Services, document: vscode.TextDocument, data: vscode.DataTransfer): Promise<vscode.DocumentDropEdit | undefined> {
  const syntax = syntaxOf(document);
  const list = await data.get('text/uri-list')?.asString();
  if (!syntax || !list) return undefined;
  const links: string[] = [];
  const history = await services.history.index();
  for (const line of list.split(/\r?\n/).map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(line, true);
    } catch {
      return undefined;
    }
    const entry = uri.scheme === 'file' ? history.findByFile(uri.fsPath) : undefined;
    if (!entry) return undefined;
    links.push(imageLink(syntax, linkTarget(document.uri, uri), entry.request.prompt));
  }
  if (!links.length) return undefined;
  return new vscode.DocumentDropEdit(links.join(syntax === 'markdown' ? '\n\n' : '\n'), vscode.l10n.t('Insert generated image'), DROP_KIND);
}

export async function generateForSelection(services: Services, args?: unknown): Promise<SelectionResult | undefined> {
  const byArgs = isArgsObject(args);
  const errorActions: ErrorActions = {};
  try {
    const editor = vscode.window.activeTextEditor;
    const syntax = editor && syntaxOf(editor.document);
    if (!editor || !syntax) {
      throw new ValidationError('editor', vscode.l10n.t('Open a Markdown or HTML file and select the text that describes the image.'));
    }
    const document = editor.document;
    // The links go right after the selection as it was when the command started.
    const anchor = editor.selection.end;
    const selected = document.getText(editor.selection).trim();
    const chosen = byArgs ? argsWithSelection(args, selected) : await askArgs(services, document, selected);
    // The link is inserted here: the result message does not offer it a second time.
    const result = await generate(services, chosen, !byArgs, { offerMarkdownLink: false, errorActions, origin: { kind: 'markdown' } });
    const inserted = await insertLinks(document, anchor, result.files, chosen.prompt, syntax);
    return { ...result, inserted };
  } catch (error) {
    // The one place this command's errors are shown. By arguments the caller also gets the typed error.
    void showError(services, error, errorActions.retry, errorActions.baseline);
    if (byArgs) throw error;
    return undefined;
  }
}

function syntaxOf(document: vscode.TextDocument): LinkSyntax | undefined {
  return document.languageId === 'markdown' ? 'markdown' : document.languageId === 'html' ? 'html' : undefined;
}

/** Arguments like Generate Image's; the prompt is the selection (or `prompt` when nothing is selected). */
function argsWithSelection(args: Record<string, unknown>, selected: string): GenerateArgs {
  const prompt = selected || (typeof args.prompt === 'string' ? args.prompt.trim() : '');
  if (!prompt) throw new ValidationError('prompt', vscode.l10n.t('Select the text that describes the image.'));
  return toGenerateArgs({ ...args, prompt });
}

/**
 * Style (only where the project has styles), model, then the prompt: written by the editor's language model from the selection (or the
 * whole document when nothing is selected) when the setting and the person allow it, else the
 * selection; then the review, where the prompt can be edited beside the estimate.
 */
async function askArgs(services: Services, document: vscode.TextDocument, selected: string): Promise<GenerateArgs> {
  await services.connection.assertReady();
  const title = vscode.l10n.t('Generate Image for Selection');
  const asked = await askStyle(services, title);
  const model = await pickModel(services, (m) => m.supports_generation, title, asked);
  const source = {
    text: selected || document.getText(),
    wholeDocument: !selected,
    kind: sourceKindOf(document.languageId),
    style: await styleHint(services, asked),
  };
  const written = source.text.trim() ? await writePromptCode().proposePrompt(services, { source, plainText: selected, title }) : { prompt: '' };
  const proposed = written.prompt || (await askPrompt(title, '', vscode.l10n.t('A lighthouse on a cliff at dawn, watercolour')));
  const note = written.writtenBy ? vscode.l10n.t('written by {0}; choose to edit', written.writtenBy) : written.fallback;
  const { options, prompt, style } = await reviewRequest(services, model, { prompt: proposed, style: asked, editablePrompt: true, promptNote: note }, title);
  return { ...options, model: model.id, prompt, ...(style ? { style } : {}) };
}

/** The style's words for the language model's instruction (undefined without a style or when it cannot be read). */
async function styleHint(services: Services, style: string | undefined): Promise<StyleHint | undefined> {
  if (!style) return undefined;
  const values = await styleValues(style, undefined, services).catch(() => undefined);
  return { name: style, description: values?.description, promptPrefix: values?.promptPrefix, promptSuffix: values?.promptSuffix };
}

/** Inserts one link per file after `anchor` (on new lines when the selection ends a line). */
async function insertLinks(document: vscode.TextDocument, anchor: vscode.Position, files: vscode.Uri[], prompt: string, syntax: LinkSyntax): Promise<string> {
  if (!files.length) return '';
  const links = files.map((file) => imageLink(syntax, linkTarget(document.uri, file), prompt));
  const atLineEnd = anchor.character >= document.lineAt(anchor.line).range.end.character;
  const separator = syntax === 'markdown' ? '\n\n' : '\n';
  const text = atLineEnd ? `${separator}${links.join(separator)}` : ` ${links.join(' ')}`;
  const edit = new vscode.WorkspaceEdit();
  edit.insert(document.uri, anchor, text);
  if (!(await vscode.workspace.applyEdit(edit))) {
    throw new Error(vscode.l10n.t('The image was saved, but the link could not be inserted into {0}.', path.basename(document.uri.fsPath)));
  }
  return text;
}

/** `![alt](target)` or `<img src="target" alt="alt">`, the alt text escaped for the syntax. */
export function imageLink(syntax: LinkSyntax, target: string, alt: string): string {
  const oneLine = alt.replace(/\s+/g, ' ').trim();
  // Backslash escapes keep the text literal: no link brackets, emphasis, code spans, HTML or entities.
  if (syntax === 'markdown') return `![${oneLine.replace(/[\\`*_[\]<>&]/g, (c) => `\\${c}`)}](${target})`;
  return `<img src="${escapeHtml(target)}" alt="${escapeHtml(oneLine)}">`;
}

/**
 * The file's path relative to the document, with POSIX separators and percent-encoding for what
 * would break a link (spaces, parentheses, #, ?, %...); letters of any script stay readable.
 * A document that is not a file (untitled) gets the file's URI.
 */
export function linkTarget(documentUri: vscode.Uri, file: vscode.Uri): string {
  if (documentUri.scheme !== 'file') return file.toString();
  const relative = path.relative(path.dirname(documentUri.fsPath), file.fsPath);
  if (path.isAbsolute(relative)) return file.toString(); // another drive
  return relative
    .split(path.sep)
    .map((segment) => segment.replace(/[^\p{L}\p{N}\-._~!$&'*+,;=:@]/gu, (c) => encodeURIComponent(c)))
    .join('/');
}
