// Generate Images from File: every line of a .txt or .jsonl prompt file through the one job
// service. All lines are checked before money moves; one estimate, one confirmation, a refusal
// when the known funds cannot cover it; lines run a few at a time; Cancel stops lines not yet
// started; a Markdown report lands next to the file; a re-run skips lines already done.
import { trPlural } from '../core/plural';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BatchLine } from '../core/batchFile';
import { validateBatch } from '../core/batchValidation';
import { asCostEstimate, combineEstimates } from '../core/combinedEstimate';
import { checkAffordable, estimateCost, formatRubles } from '../core/cost';
import { CancelledError, ValidationError } from '../core/errors';
import type { LineOutcome, ResumePlan } from '../jobs/batch';
import type { HeldLine } from '../jobs/heldLines';
import { recordResult } from '../jobs/history';
import { readPathSetting, readSettings } from '../host/settings';
import { type Services } from '../services';
import { isArgsObject, toGenerateArgs } from './commandArgs';
import { describeLineStyles, styleLines } from './batchStyles';
import { decideHeldLines } from './batchHeldLines';
import { confirmRun, refuseUnaffordable } from './confirmRun';
import { FILE_NAME_PATTERN_DEFAULT } from './generate';
import { resolveOutputFolder } from './outputFolder';
import { pickModel } from './pickers';
import { runCommandBody } from './showError';
import { askStyle } from './styles';

export interface BatchArgs {
  /** Path or file URI of the .txt / .jsonl prompt file. */
  file: string | vscode.Uri;
  /** Model for lines that name none, nor their style (required for .txt files run by arguments without a style). */
  model?: string;
  /** Style for lines that name none (a .txt file's one style); .jsonl lines may name their own. */
  style?: string;
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
    const file = await fileFromInvocation(services, first);
    return file ? generateFromFile(services, { file }, true) : undefined;
  });
}

export async function generateFromFile(services: Services, args: BatchArgs, interactive: boolean): Promise<BatchResult> {
  const file = typeof args.file === 'string' ? (args.file.startsWith('file:') ? vscode.Uri.parse(args.file) : vscode.Uri.file(args.file)) : args.file;
  const name = path.basename(file.fsPath);
  // Prompt files, their resume and report are code of the results chunk, loaded here on first use.
  const { batchFileKind, parseBatchFile, describeBatchIssues, reportPathFor, batchReport, skippedSummary, runBatch } = services.results();
  const kind = batchFileKind(file.fsPath);
  if (!kind)
    throw new ValidationError(
      'file',
      vscode.l10n.t('"{0}" is not a prompt file: use a .txt file (one prompt per line) or a .jsonl file (one request per line).', name),
      ['.txt', '.jsonl'],
    );
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
  if (interactive) for (const note of styled.notes) void vscode.window.showInformationMessage(note);
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

  const directory = await resolveOutputFolder(args.outputDirectory);
  const { send, held, skipped } = await planBatchResume(services, file.fsPath, lines, directory);
  const { todo, kept } = await decideHeldLines(services, name, send, held, interactive ? 'ask' : args.resendInterrupted === true);
  const report = vscode.Uri.file(reportPathFor(file.fsPath));
  if (!todo.length) {
    const all = [...skipped, ...kept];
    await writeFile(report.fsPath, batchReport(file.fsPath, all, new Date(), services.locale));
    const result = toResult(services, report, all);
    if (kept.length) {
      void presentBatch(services, name, result);
      return result;
    }
    const allDone = trPlural(
      skipped.length,
      { one: 'The {0} line of {1} already has results; nothing was sent.', other: 'All {0} lines of {1} already have results; nothing was sent.' },
      skipped.length,
      name,
    );
    void vscode.window.showInformationMessage(`${allDone} ${skippedSummary(skipped)}`);
    return result;
  }
  const byId = new Map(models.map((m) => [m.id, m]));
  const estimates = todo.map((l) => estimateCost(byId.get(l.request.model)!, l.request.n ?? 1));
  const combined = combineEstimates(estimates);
  refuseUnaffordable(services, checkAffordable(asCostEstimate(combined), await services.account.currentFunds()), combined.requests);
  const skippedNote = skipped.length
    ? `${trPlural(skipped.length, { one: '{0} line already done is skipped.', other: '{0} lines already done are skipped.' }, skipped.length)} ${skippedSummary(skipped)}`
    : '';
  if (
    !(await confirmRun(
      services,
      combined,
      trPlural(todo.length, { one: 'Generate {0} line of {1}?', other: 'Generate {0} lines of {1}?' }, todo.length, name),
      [skippedNote, describeLineStyles(todo)].filter(Boolean).join('\n'),
      // A style of an untrusted workspace never sends on its own.
      styled.confirm,
    ))
  ) {
    throw new CancelledError(vscode.l10n.t('Not sent: the cost was not confirmed.'));
  }

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
          history: {
            promptFile: file.fsPath,
            record: (details, result) => recordResult(services.history, details, result),
            warn: (message) => services.log.warn(message),
          },
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
  const result = toResult(services, report, all);
  void presentBatch(services, name, result);
  return result;
}

/**
 * Lines already paid for: from the results journal, then from the provenance of unknown PNGs in the
 * output folder. Of the rest, the lines in flight when a window closed, or in flight now, are held.
 */
async function planBatchResume(
  services: Services,
  promptFile: string,
  lines: BatchLine[],
  directory: string,
): Promise<Pick<ResumePlan, 'skipped'> & { send: BatchLine[]; held: HeldLine[] }> {
  const index = await services.history.index();
  const { existsWith, filesIn, findLinesByProvenance, holdInterruptedLines, planResume, skipFoundByProvenance } = services.results();
  const listing = await filesIn(directory);
  const plan = planResume(promptFile, lines, index, existsWith(directory, listing, existsSync));
  const found = await findLinesByProvenance(listing, promptFile, plan.todo, (f) => !!index.findByFile(f));
  if (found.size) services.log.info(`${found.size} line(s) of ${path.basename(promptFile)} were found done by the provenance of their PNGs in ${directory}.`);
  const { todo, skipped } = skipFoundByProvenance(plan, found);
  const inFlight = (await services.inFlight.list()).flatMap((r) => (r.batch ? [r.batch] : []));
  return { skipped, ...holdInterruptedLines(promptFile, todo, index, inFlight) };
}

function toResult(services: Services, report: vscode.Uri, lines: LineOutcome[]): BatchResult {
  const sum = services.results().summarize(lines);
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
  const recovered = result.lines.filter((l) => l.recovered).length;
  const recoveredNote = recovered
    ? trPlural(
        recovered,
        {
          one: 'The images of {0} line could not be saved into the workspace and wait in the recovery folder.',
          other: 'The images of {0} lines could not be saved into the workspace and wait in the recovery folder.',
        },
        recovered,
      )
    : '';
  const open = vscode.l10n.t('Open Report');
  const recover = vscode.l10n.t('Recover Images');
  const show = result.failed || result.outcomeUnknown || recovered ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  const choice = await show([message, recoveredNote].filter(Boolean).join(' '), open, ...(recovered ? [recover] : []));
  if (choice === open) await vscode.commands.executeCommand('markdown.showPreview', result.report);
  else if (choice === recover) await vscode.commands.executeCommand('gatewayImages.recoverImages');
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
