// Generate Images from File (dist/promptFiles.js, loaded on first use by promptFiles.ts): every
// line of a .txt or .jsonl prompt file through the one job service. The file is claimed for the run first (one run per file, across windows); all lines are
// checked before money moves; then batchRun.ts plans, confirms, sends each line once and reports.
import { trPlural } from '../../core/common/plural';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { validateBatch } from '../../core/requests/batchValidation';
import { ValidationError } from '../../core/gateway/errors';
import { type Services } from '../../services';
import { isArgsObject, toGenerateArgs } from '../common/commandArgs';
import { styleLines } from './batchStyles';
import { type BatchArgs, type BatchResult, type PromptFileRun, runPromptFileCommand } from './batchRun';
import { resolveOutputFolder } from '../common/outputFolder';
import { pickModel } from '../images/pickers';
import { runCommandBody } from '../common/showError';
import { askStyle } from '../styles/styles';
import { messageText } from '../../core/common/markdownText';

export type { BatchArgs, BatchResult } from './batchRun';

export function generateFromFileCommand(services: Services, first?: unknown): Promise<BatchResult | undefined> {
  if (isArgsObject(first)) return runCommandBody(services, true, () => generateFromFile(services, toBatchArgs(first), false));
  return runCommandBody(services, false, async () => {
    const file = await fileFromInvocation(services, first);
    return file ? generateFromFile(services, { file }, true) : undefined;
  });
}

export async function generateFromFile(services: Services, args: BatchArgs, interactive: boolean): Promise<BatchResult> {
  const file = typeof args.file === 'string' ? (args.file.startsWith('file:') ? vscode.Uri.parse(args.file) : vscode.Uri.file(args.file)) : args.file;
  const name = path.basename(file.fsPath);
  // Prompt files, their resume and report are code of the results chunk, loaded here on first use.
  const kind = services.results().batchFileKind(file.fsPath);
  if (!kind)
    throw new ValidationError(
      'file',
      vscode.l10n.t('"{0}" is not a prompt file: use a .txt file (one prompt per line) or a .jsonl file (one request per line).', name),
      ['.txt', '.jsonl'],
    );
  // One run per prompt file, across windows: the run claims the file before any question, plan or request.
  return runPromptFileCommand(services, { file, args, interactive, prepare: () => prepareLines(services, file, kind, args, interactive) });
}

/** The file's lines with their styles and models, every one checked against the catalog before money moves. */
async function prepareLines(
  services: Services,
  file: vscode.Uri,
  kind: 'txt' | 'jsonl',
  args: BatchArgs,
  interactive: boolean,
): ReturnType<PromptFileRun['prepare']> {
  const { parseBatchFile, describeBatchIssues } = services.results();
  const name = path.basename(file.fsPath);
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
  const models = await services.catalog.get();
  const title = vscode.l10n.t('Generate Images from {0}', name);
  const parsed = parseBatchFile(text, kind, {});
  if (!parsed.lines.length && !parsed.issues.length)
    throw new ValidationError('file', vscode.l10n.t('{0} has no prompts (blank lines and lines starting with # are skipped).', name));
  // A .txt file is one style (asked for; arguments give it), a .jsonl line may name its own.
  const style = args.style ?? (interactive && kind === 'txt' && !parsed.issues.length ? await askStyle(services, title, file) : undefined);
  let { lines, issues } = parseBatchFile(text, kind, { style });
  let styled = await styleLines(services, file, lines, args.model);
  // Lines that name no model, nor their style: ask for one (arguments must give it).
  if (interactive && !args.model && !issues.length && !styled.issues.length && styled.lines.some((l) => !l.request.model)) {
    const model = await pickModel(services, (m) => m.supports_generation, title, style);
    styled = await styleLines(services, file, lines, model.id);
  }
  lines = styled.lines;
  if (interactive) for (const note of styled.notes) void vscode.window.showInformationMessage(messageText(note));
  issues = [...issues, ...styled.issues, ...validateBatch(lines, models)];
  if (issues.length) {
    throw new ValidationError(
      'file',
      trPlural(
        new Set(issues.map((i) => i.line)).size,
        { one: '{0}: nothing was sent, {1} line needs fixing:\n{2}', other: '{0}: nothing was sent, {1} lines need fixing:\n{2}' },
        name,
        new Set(issues.map((i) => i.line)).size,
        describeBatchIssues(issues),
      ),
    );
  }
  return { lines, directory: await resolveOutputFolder(args.outputDirectory), confirm: styled.confirm, models };
}

function toBatchArgs(args: Record<string, unknown>): BatchArgs {
  const file = args.file;
  if (!(typeof file === 'string' || file instanceof vscode.Uri))
    throw new ValidationError('file', '"file" must be the path or URI of a .txt or .jsonl prompt file.');
  if (args.model !== undefined) toGenerateArgs({ prompt: '', model: args.model });
  if (args.concurrency !== undefined && !(Number.isInteger(args.concurrency) && (args.concurrency as number) >= 1 && (args.concurrency as number) <= 6)) {
    throw new ValidationError('concurrency', '"concurrency" must be a whole number from 1 to 6.', [1, 2, 3, 4, 5, 6]);
  }
  if (args.outputDirectory !== undefined && typeof args.outputDirectory !== 'string')
    throw new ValidationError('outputDirectory', '"outputDirectory" must be a folder path.');
  const style = args.style === undefined ? undefined : toGenerateArgs({ prompt: '', model: '', style: args.style }).style;
  return {
    file,
    model: args.model as string | undefined,
    ...(style ? { style } : {}),
    concurrency: args.concurrency as number | undefined,
    outputDirectory: args.outputDirectory,
    signal: args.signal instanceof AbortSignal ? args.signal : undefined,
    onProgress: typeof args.onProgress === 'function' ? (args.onProgress as BatchArgs['onProgress']) : undefined,
    resendInterrupted: args.resendInterrupted === true,
  };
}

/** The explorer and editor menus pass the file; the palette uses the active editor's file, else asks. */
async function fileFromInvocation(services: Services, first: unknown): Promise<vscode.Uri | undefined> {
  if (first instanceof vscode.Uri) return first;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === 'file' && services.results().batchFileKind(active.fsPath)) return active;
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { [vscode.l10n.t('Prompt files')]: ['txt', 'jsonl'] },
    openLabel: vscode.l10n.t('Generate'),
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked?.[0];
}
