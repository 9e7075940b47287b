// Generate Images from File: every line of a .txt or .jsonl prompt file through the one job
// service. All lines are checked before money moves; one estimate, one confirmation, a refusal
// when the known funds cannot cover it; lines run a few at a time; Cancel stops lines not yet
// started; a Markdown report lands next to the file; a re-run skips lines already done.
import { trPlural } from '../core/plural';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { batchFileKind, type BatchLine, describeBatchIssues, parseBatchFile, validateBatch } from '../core/batchFile';
import { asCostEstimate, combineEstimates } from '../core/combinedEstimate';
import { checkAffordable, estimateCost, formatRubles } from '../core/cost';
import { CancelledError, ValidationError } from '../core/errors';
import { type LineOutcome, planResume, runBatch, summarize } from '../jobs/batch';
import { batchReport, reportPathFor } from '../jobs/batchReport';
import { type HeldLine, holdInterruptedLines } from '../jobs/heldLines';
import { readPathSetting, readSettings } from '../host/settings';
import { type Services } from '../services';
import { isArgsObject, toGenerateArgs } from './commandArgs';
import { confirmRun, refuseUnaffordable } from './confirmRun';
import { FILE_NAME_PATTERN_DEFAULT } from './generate';
import { resolveOutputFolder } from './outputFolder';
import { pickModel } from './pickers';
import { runCommandBody } from './showError';

export interface BatchArgs {
  /** Path or file URI of the .txt / .jsonl prompt file. */
  file: string | vscode.Uri;
  /** Model for lines that name none (required for .txt files run by arguments). */
  model?: string;
  concurrency?: number;
  outputDirectory?: string;
  /** API only: cancels like the progress notification's Cancel. */
  signal?: AbortSignal;
  /** API only: after each line. */
  onProgress?: (finished: number, total: number) => void;
  /**
   * Send again the lines that were in flight when the window closed (it is unknown whether they were
   * charged). From the UI the user is asked; by arguments they are held unless this is true.
   */
  resendInterrupted?: boolean;
}

export interface BatchResult {
  report: vscode.Uri;
  lines: LineOutcome[];
  done: number;
  skipped: number;
  failed: number;
  notSent: number;
  outcomeUnknown: number;
  spent: number;
}

export function registerBatchFromFile(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.generateFromFile', (first?: unknown) => generateFromFileCommand(services, first));
}

export function generateFromFileCommand(services: Services, first?: unknown): Promise<BatchResult | undefined> {
  if (isArgsObject(first)) return runCommandBody(services, true, () => generateFromFile(services, toBatchArgs(first), false));
  return runCommandBody(services, false, async () => {
    const file = await fileFromInvocation(first);
    return file ? generateFromFile(services, { file }, true) : undefined;
  });
}

export async function generateFromFile(services: Services, args: BatchArgs, interactive: boolean): Promise<BatchResult> {
  const file = typeof args.file === 'string' ? (args.file.startsWith('file:') ? vscode.Uri.parse(args.file) : vscode.Uri.file(args.file)) : args.file;
  const name = path.basename(file.fsPath);
  const kind = batchFileKind(file.fsPath);
  if (!kind)
    throw new ValidationError(
      'file',
      vscode.l10n.t('"{0}" is not a prompt file: use a .txt file (one prompt per line) or a .jsonl file (one request per line).', name),
      ['.txt', '.jsonl'],
    );
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
  const models = await services.catalog.get();
  let { lines, issues } = parseBatchFile(text, kind, { model: args.model });
  if (!lines.length && !issues.length)
    throw new ValidationError('file', vscode.l10n.t('{0} has no prompts (blank lines and lines starting with # are skipped).', name));
  // A .txt file names no model: ask for one (arguments must give it).
  if (interactive && !args.model && !issues.length && lines.some((l) => !l.request.model)) {
    const model = await pickModel(services, (m) => m.supports_generation, vscode.l10n.t('Generate Images from {0}', name));
    ({ lines, issues } = parseBatchFile(text, kind, { model: model.id }));
  }
  issues = [...issues, ...validateBatch(lines, models)];
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

  const history = services.history.list();
  const resume = planResume(file.fsPath, lines, history, existsSync);
  const { send, held } = holdInterruptedLines(file.fsPath, resume.todo, history);
  // Only a line whose outcome is unknown may go again, and only when the user says so; a charged one waits for recovery.
  const unknown = held.filter((h) => h.entry.outcomeUnknown);
  const resend = unknown.length > 0 && (interactive ? await askResend(name, unknown) : args.resendInterrupted === true);
  const again = new Set(resend ? unknown.map((h) => h.line) : []);
  const todo = resume.todo.filter((l) => send.includes(l) || again.has(l));
  const { skipped } = resume;
  const kept = held.filter((h) => !again.has(h.line)).map(heldOutcome);
  const report = vscode.Uri.file(reportPathFor(file.fsPath));
  if (!todo.length && kept.length) {
    await writeFile(report.fsPath, batchReport(file.fsPath, [...skipped, ...kept], new Date(), services.locale));
    const result = toResult(report, [...skipped, ...kept]);
    void presentBatch(services, name, result);
    return result;
  }
  if (!todo.length) {
    await writeFile(report.fsPath, batchReport(file.fsPath, skipped, new Date(), services.locale));
    void vscode.window.showInformationMessage(
      trPlural(
        skipped.length,
        { one: 'The {0} line of {1} already has results; nothing was sent.', other: 'All {0} lines of {1} already have results; nothing was sent.' },
        skipped.length,
        name,
      ),
    );
    return toResult(report, skipped);
  }
  const byId = new Map(models.map((m) => [m.id, m]));
  const estimates = todo.map((l) => estimateCost(byId.get(l.request.model)!, l.request.n ?? 1));
  const combined = combineEstimates(estimates);
  refuseUnaffordable(services, checkAffordable(asCostEstimate(combined), await services.account.currentFunds()), combined.requests);
  const skippedNote = skipped.length
    ? trPlural(skipped.length, { one: '{0} line already done is skipped.', other: '{0} lines already done are skipped.' }, skipped.length)
    : '';
  if (
    !(await confirmRun(
      services,
      combined,
      trPlural(todo.length, { one: 'Generate {0} line of {1}?', other: 'Generate {0} lines of {1}?' }, todo.length, name),
      skippedNote,
    ))
  ) {
    throw new CancelledError(vscode.l10n.t('Not sent: the cost was not confirmed.'));
  }

  const directory = await resolveOutputFolder(args.outputDirectory);
  const pattern = readPathSetting('fileNamePattern', FILE_NAME_PATTERN_DEFAULT, file).value;
  const concurrency = args.concurrency ?? readSettings().batchConcurrency;
  const outcomes = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Generating from {0}', name), cancellable: true },
    async (progress, token) => {
      const controller = new AbortController();
      const abort = () => controller.abort();
      const subscription = token.onCancellationRequested(abort);
      if (args.signal?.aborted) abort();
      args.signal?.addEventListener('abort', abort);
      if (skipped.length) progress.report({ message: skippedNote });
      try {
        return await runBatch(todo, {
          jobs: services.jobs,
          output: { directory, pattern },
          concurrency: Math.min(6, Math.max(1, Math.trunc(concurrency) || 1)),
          // Confirmed as a whole: the lines do not ask one by one, and none sends more than it showed.
          confirmedReservations: estimates.map((e) => e.reservation),
          signal: controller.signal,
          file: file.fsPath,
          record: (line, result) => record(services, file.fsPath, line, result),
          onProgress: (_outcome, p) => {
            progress.report({
              message: vscode.l10n.t('{0} of {1} · spent {2}', p.finished, p.total, formatRubles(p.spent, services.locale)),
              increment: 100 / p.total,
            });
            args.onProgress?.(p.finished, p.total);
          },
        });
      } finally {
        subscription.dispose();
        args.signal?.removeEventListener('abort', abort);
      }
    },
  );
  const all = [...skipped, ...kept, ...outcomes];
  await writeFile(report.fsPath, batchReport(file.fsPath, all, new Date(), services.locale));
  const result = toResult(report, all);
  void presentBatch(services, name, result);
  return result;
}

/** Asks whether the lines in flight when the window closed go again (they may have been charged). */
async function askResend(name: string, held: HeldLine[]): Promise<boolean> {
  const again = vscode.l10n.t('Send Again');
  const numbers = held.map((h) => h.line.line).join(', ');
  const answer = await vscode.window.showWarningMessage(
    trPlural(
      held.length,
      {
        one: '{0} line of {1} was in flight when the window closed (line {2}): it may have been charged. Send it again?',
        other: '{0} lines of {1} were in flight when the window closed (lines {2}): they may have been charged. Send them again?',
      },
      held.length,
      name,
      numbers,
    ),
    { modal: true, detail: vscode.l10n.t('Gateway Images: Recover Unsaved Images lists what arrived of them. The other lines are sent as usual.') },
    again,
  );
  return answer === again;
}

/** A held line in the report: its outcome is unknown, or it was charged and its images wait for recovery. */
function heldOutcome({ line, entry }: HeldLine): LineOutcome {
  return {
    line: line.line,
    prompt: line.request.prompt,
    model: entry.model,
    status: entry.outcomeUnknown ? 'outcome-unknown' : 'failed',
    files: entry.files.filter(existsSync),
    error: entry.outcomeUnknown
      ? vscode.l10n.t('in flight when the window closed: it may have been charged, so it was not sent again')
      : vscode.l10n.t('charged when the window closed: its images wait in the recovery folder (Recover Unsaved Images)'),
  };
}

async function record(
  services: Services,
  file: string,
  line: BatchLine,
  result: { files: string[]; model: string; usage?: { cost_rub?: number; balance?: number } },
): Promise<void> {
  if (!result.files.length) return;
  const { input_references: _refs, ...request } = line.request;
  await services.history.add({
    request,
    model: result.model,
    files: result.files,
    costRub: result.usage?.cost_rub,
    balanceAfter: result.usage?.balance,
    batch: { file, line: line.line, key: line.key },
  });
}

function toResult(report: vscode.Uri, lines: LineOutcome[]): BatchResult {
  const sum = summarize(lines);
  return {
    report,
    lines,
    done: sum.done,
    skipped: sum.skipped,
    failed: sum.failed,
    notSent: sum['not-sent'],
    outcomeUnknown: sum['outcome-unknown'],
    spent: sum.spent,
  };
}

async function presentBatch(services: Services, name: string, result: BatchResult): Promise<void> {
  const message = vscode.l10n.t(
    '{0}: {1} done, {2} skipped, {3} failed, {4} not sent. Spent {5}.',
    name,
    result.done,
    result.skipped,
    result.failed + result.outcomeUnknown,
    result.notSent,
    formatRubles(result.spent, services.locale),
  );
  if (result.outcomeUnknown) services.account.reconcileSoon();
  const open = vscode.l10n.t('Open Report');
  const show = result.failed || result.outcomeUnknown ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  if ((await show(message, open)) === open) await vscode.commands.executeCommand('markdown.showPreview', result.report);
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
  return {
    file,
    model: args.model as string | undefined,
    concurrency: args.concurrency as number | undefined,
    outputDirectory: args.outputDirectory,
    signal: args.signal instanceof AbortSignal ? args.signal : undefined,
    onProgress: typeof args.onProgress === 'function' ? (args.onProgress as BatchArgs['onProgress']) : undefined,
    resendInterrupted: args.resendInterrupted === true,
  };
}

/** The explorer and editor menus pass the file; the palette uses the active editor's file, else asks. */
async function fileFromInvocation(first: unknown): Promise<vscode.Uri | undefined> {
  if (first instanceof vscode.Uri) return first;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === 'file' && batchFileKind(active.fsPath)) return active;
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { [vscode.l10n.t('Prompt files')]: ['txt', 'jsonl'] },
    openLabel: vscode.l10n.t('Generate'),
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked?.[0];
}
