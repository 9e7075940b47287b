// A claimed run of a prompt file (batchFromFile.ts claims it): the resume planned from the results
// journal, the lines paid without their images held (the user says), one estimate and confirmation,
// the lines sent a few at a time (each checked again right before it goes), a Markdown report.
import { trPlural } from '../../core/common/plural';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BatchLine } from '../../core/requests/batchFile';
import { asCostEstimate, combineEstimates } from '../../core/money/combinedEstimate';
import { checkAffordable, estimateCost, formatRubles } from '../../core/money/cost';
import type { ImageModel } from '../../core/gateway/types';
import type { BatchProgress, LineOutcome } from '../../jobs/promptFiles/batch';
import { readPathSetting, readSettings } from '../../host/settings';
import { type Services } from '../../services';
import { describeLineStyles } from './batchStyles';
import { decideHeldLines } from './batchHeldLines';
import { confirmRun, refuseUnaffordable } from '../common/confirmRun';
import { FILE_NAME_PATTERN_DEFAULT } from '../images/generate';
import { messageText } from '../../core/common/markdownText';
import { coalesce } from '../../core/common/coalesce';

/** The least time between two redraws of a prompt file's progress notification. */
const PROGRESS_INTERVAL_MS = 250;

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
  /**
   * Set when this window was paused while it ran the file and another window took the run over: it
   * stopped sending (nothing was sent twice). What the user is told.
   */
  takenOver?: string;
}

/** A prompt file run from the command: its file, how it was started, and how its lines are prepared (under the claim). */
export interface PromptFileRun {
  file: vscode.Uri;
  args: BatchArgs;
  interactive: boolean;
  /** The lines checked against the catalog, where they go, and whether the cost is asked for whatever it is. */
  prepare(): Promise<{ lines: BatchLine[]; directory: string; confirm: boolean; models: ImageModel[] }>;
}

/** Generate Images from File from the UI or by arguments: the run (jobs/promptFiles/promptFileRun.ts) with VS Code's questions, progress and report. */
export async function runPromptFileCommand(services: Services, run: PromptFileRun): Promise<BatchResult> {
  const { file, args, interactive } = run;
  const name = path.basename(file.fsPath);
  const { reportPathFor, batchReport, skippedSummary, runPromptFile } = services.results();
  let prepared: Awaited<ReturnType<PromptFileRun['prepare']>> | undefined;
  const skippedNote = (skipped: LineOutcome[]) =>
    skipped.length
      ? `${trPlural(skipped.length, { one: '{0} line already done is skipped.', other: '{0} lines already done are skipped.' }, skipped.length)} ${skippedSummary(skipped)}`
      : '';
  const outcome = await runPromptFile(file.fsPath, {
    claims: services.promptFileClaims(),
    who: { window: windowName(), startedBy: interactive ? 'ui' : 'arguments' },
    locale: services.locale,
    history: services.history,
    inFlight: services.inFlight,
    jobs: services.jobs,
    log: (message) => services.log.info(message),
    warn: (message) => services.log.warn(message),
    prepare: async () => {
      prepared = await run.prepare();
      const pattern = readPathSetting('fileNamePattern', FILE_NAME_PATTERN_DEFAULT, file).value;
      return { lines: prepared.lines, output: { directory: prepared.directory, pattern }, concurrency: args.concurrency ?? readSettings().batchConcurrency };
    },
    decideHeld: (send, held) => decideHeldLines(services, name, send, held, interactive ? 'ask' : args.resendInterrupted === true),
    confirm: async (todo, skipped) => {
      const byId = new Map(prepared!.models.map((m) => [m.id, m]));
      const estimates = todo.map((l) => estimateCost(byId.get(l.request.model)!, l.request.n ?? 1));
      const combined = combineEstimates(estimates);
      refuseUnaffordable(services, checkAffordable(asCostEstimate(combined), await services.account.currentFunds()), combined.requests);
      const question = trPlural(todo.length, { one: 'Generate {0} line of {1}?', other: 'Generate {0} lines of {1}?' }, todo.length, name);
      // A style of an untrusted workspace never sends on its own.
      const go = await confirmRun(services, combined, question, [skippedNote(skipped), describeLineStyles(todo)].filter(Boolean).join('\n'), prepared!.confirm);
      return go ? estimates.map((e) => e.reservation) : undefined;
    },
    sending: async (send) =>
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Generating from {0}', name), cancellable: true },
        async (progress, token) => {
          const controller = new AbortController();
          const abort = () => controller.abort();
          const subscription = token.onCancellationRequested(abort);
          if (args.signal?.aborted) abort();
          args.signal?.addEventListener('abort', abort);
          // At most four redraws of the notification a second, however fast the lines end.
          const shown = coalesce<BatchProgress>(
            (p, lines) =>
              progress.report({
                message: vscode.l10n.t('{0} of {1} · spent {2}', p.finished, p.total, formatRubles(p.spent, services.locale)),
                increment: (100 * lines) / p.total,
              }),
            PROGRESS_INTERVAL_MS,
          );
          try {
            return await send({
              signal: controller.signal,
              onProgress: (_outcome, p) => {
                shown.push(p);
                args.onProgress?.(p.finished, p.total);
              },
            });
          } finally {
            shown.dispose();
            subscription.dispose();
            args.signal?.removeEventListener('abort', abort);
          }
        },
      ),
    onPaidFailure: (failure) => services.outcomes.watch(failure),
  });
  const report = vscode.Uri.file(reportPathFor(file.fsPath));
  await writeFile(report.fsPath, batchReport(file.fsPath, outcome.lines, new Date(), services.locale, outcome.takenOver?.message));
  const result = { ...toResult(services, report, outcome.lines), ...(outcome.takenOver ? { takenOver: outcome.takenOver.message } : {}) };
  const skipped = outcome.lines.filter((l) => l.status === 'skipped');
  if (!outcome.sent && skipped.length === outcome.lines.length) {
    const allDone = trPlural(
      skipped.length,
      { one: 'The {0} line of {1} already has results; nothing was sent.', other: 'All {0} lines of {1} already have results; nothing was sent.' },
      skipped.length,
      name,
    );
    void vscode.window.showInformationMessage(messageText(`${allDone} ${skippedSummary(skipped)}`));
  } else {
    void presentBatch(services, name, result);
  }
  return result;
}

/** The window, as a second start is told where the run is. */
function windowName(): string {
  return vscode.workspace.name ? vscode.l10n.t('the window of "{0}"', vscode.workspace.name) : vscode.l10n.t('a window without a folder');
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
  const show =
    result.failed || result.outcomeUnknown || recovered || result.takenOver ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  const choice = await show(messageText([result.takenOver, message, recoveredNote].filter(Boolean).join(' ')), open, ...(recovered ? [recover] : []));
  if (choice === open) await vscode.commands.executeCommand('markdown.showPreview', result.report);
  else if (choice === recover) await vscode.commands.executeCommand('gatewayImages.recoverImages');
}
