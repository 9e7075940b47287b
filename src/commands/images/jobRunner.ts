// Runs an image job with the VS Code UI around it: progress with a real Cancel, the cost after,
// actions on the saved files, and errors that say what to do. Used by generate and edit alike.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatRubleRange, formatRubles } from '../../core/money/cost';
import { JobHistoryRecord } from '../../jobs/jobRecord';
import { recordedReferences } from '../../jobs/regionReferences';
import { settleBy } from '../../jobs/settle';
import type { ImageJob, JobEvent, JobResult, PaidFailure } from '../../jobs/jobTypes';
import type { ResultOrigin } from '../../jobs/results/resultOrigin';
import { type Services } from '../../services';
import { markOnboarding } from '../../host/onboarding';
import { readSettings } from '../../host/settings';
import type { ErrorActions } from '../common/showError';
import { trPlural } from '../../core/common/plural';
import { messageText } from '../../core/common/markdownText';

export interface RunOptions {
  title: string;
  /** Open the results; for edits, beside the original. */
  openBeside?: vscode.Uri;
  /** Fire-and-forget notifications instead of waiting for the user's choice (argument mode). */
  interactive: boolean;
  /** Confirm the cost whatever it is (a style of an untrusted workspace). */
  forceConfirm?: boolean;
  /** Sent again after an attempt that may have been charged: confirmed whatever the cost, saying so. */
  resend?: boolean;
  /** Cancels like the notification's Cancel button (the studio's Cancel). */
  signal?: AbortSignal;
  /** Offer "Insert Markdown Link" in the result message (off when the caller inserts it itself). */
  offerMarkdownLink?: boolean;
  /** Open the results per gatewayImages.openAfterGenerate (false: the caller shows them, as the studio's region editor does). */
  openResults?: boolean;
  /** Filled in for the caller that shows a failure: the retry and the balance before sending. */
  errorActions?: ErrorActions;
  /** Who started it (recorded in the results journal); generate and editImage give their own default. */
  origin?: ResultOrigin;
  /** What the result becomes before it is shown (a region edit pastes its answers into the original). */
  finish?: (result: JobResult) => Promise<JobResult>;
}

/** What callers of generate/editImage may add to a run. */
export type RunExtras = Pick<RunOptions, 'signal' | 'offerMarkdownLink' | 'openResults' | 'errorActions' | 'origin'>;

export interface CommandResult {
  files: vscode.Uri[];
  model: string;
  usage?: { cost_rub?: number; balance?: number };
  /** Saved files without alpha although a transparent background was asked for (kept). */
  opaque?: vscode.Uri[];
  /** A region edit: "region 412×300 of 2048×1536, sent as 3:2" (a JPEG result has no provenance that says it). */
  regionDescription?: string;
}

export async function runJob(services: Services, job: ImageJob, options: RunOptions): Promise<CommandResult> {
  const record = new JobHistoryRecord(services.history, {
    request: job.request,
    references: recordedReferences(job),
    model: job.request.model,
    style: job.style,
    ...(options.origin ? { origin: options.origin } : {}),
    ...(job.region ? { region: job.region } : {}),
  });
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: options.title, cancellable: true },
    async (progress, token) => {
      const controller = new AbortController();
      const subscription = token.onCancellationRequested(() => controller.abort());
      const abort = () => controller.abort();
      if (options.signal?.aborted) controller.abort();
      options.signal?.addEventListener('abort', abort);
      const onEvent = (event: JobEvent) => {
        reportProgress(services, progress, event);
        // Each image joins the history (and so the studio's gallery) as soon as it is saved.
        if (event.type === 'image-saved') void record.saved(event.file).catch((error: unknown) => services.log.warn(`History: ${String(error)}`));
      };
      try {
        // The result is in the results journal before the job's in-flight record goes (a crash then loses neither).
        const warn = (message: string) => services.log.warn(message);
        const settle = settleBy((done: JobResult) => record.finish(done), warn, 'The result');
        // A paid request without its images is recorded as paid too (and its unknown outcome checked later).
        const settleFailure = settleBy((failure: PaidFailure) => recordPaidFailure(services, record, failure), warn, 'The paid request');
        const done = await services.jobs.run(job, {
          signal: controller.signal,
          onEvent,
          forceConfirm: options.forceConfirm,
          resend: options.resend,
          settle,
          settleFailure,
        });
        if (!options.finish) return done;
        // A finish step that changed the files or the region record (a region edit's composite and mask) is recorded again.
        const finished = await options.finish(done);
        if (finished.files.join('\n') !== done.files.join('\n') || finished.region) {
          // Already recorded as paid with its answer; a failure here is logged by settle and the entry keeps that state.
          await settle(finished).catch(() => undefined);
        }
        return finished;
      } finally {
        subscription.dispose();
        options.signal?.removeEventListener('abort', abort);
      }
    },
  );
  const files = result.files.map((f) => vscode.Uri.file(f));
  if (result.files.length) {
    // An edit has a source; a generation's references are a style's.
    markOnboarding(job.output.sourceName !== undefined ? 'editedOnce' : 'generatedOnce');
    if (job.style) markOnboarding('styledOnce');
  }
  void presentResult(services, result, files, options);
  const opaque = result.opaque?.map((f) => vscode.Uri.file(f));
  const region = result.region?.description;
  return { files, model: result.model, usage: result.usage, ...(opaque ? { opaque } : {}), ...(region !== undefined ? { regionDescription: region } : {}) };
}

/**
 * Runs a job from a command. Errors are not shown here: they reject, and `options.errorActions`
 * gets what the caller that shows them may offer (an explicit retry, the balance before sending).
 */
export async function runJobCommand(services: Services, job: ImageJob, options: RunOptions): Promise<CommandResult> {
  const actions = options.errorActions;
  if (actions) {
    // What the account showed before sending: an unknown outcome is judged against it.
    actions.baseline = { balance: services.account.snapshot.balance, budget: services.account.snapshot.budget };
    const { errorActions: _actions, ...retryOptions } = options;
    // After an unknown outcome the confirmation says that this pays again; after a local refusal it only asks again.
    actions.retry = (resend) =>
      runJob(services, job, { ...retryOptions, interactive: true, ...(resend ? { resend } : { forceConfirm: true }), signal: undefined }).then(() => undefined);
  }
  return runJob(services, job, options);
}

/** A paid request without its images: in the journal as paid; an unknown outcome is checked again after its deadline. */
async function recordPaidFailure(services: Services, record: JobHistoryRecord, failure: PaidFailure): Promise<void> {
  await record.failed(failure);
  services.outcomes.watch(failure);
}

function reportProgress(services: Services, progress: vscode.Progress<{ message?: string }>, event: JobEvent): void {
  const locale = services.locale;
  switch (event.type) {
    case 'sending':
      progress.report({
        message: vscode.l10n.t(
          '{0}: reserved {1}, expected {2}',
          event.model.id,
          formatRubles(event.estimate.reservation, locale),
          formatRubleRange(event.estimate.expectedMin, event.estimate.expectedMax, locale),
        ),
      });
      break;
    case 'answered':
      progress.report({ message: vscode.l10n.t('The gateway answered; receiving the images…') });
      break;
    case 'image-received':
      progress.report({ message: vscode.l10n.t('Image {0} received ({1} KB)', event.index + 1, Math.round(event.bytes / 1024).toLocaleString(locale)) });
      break;
    case 'recovered':
      services.log.warn(`Kept ${event.files.length} paid image(s) in the recovery folder: ${event.reason}`);
      break;
    case 'outcome-unknown':
      services.log.warn(`Outcome unknown: ${event.error.message}`);
      break;
    case 'notice':
      // Told at once and not in the way: the request goes on (inputs normalised, a budget that looks short).
      services.log.info(event.message);
      void vscode.window.showInformationMessage(messageText(event.message));
      break;
    case 'cancel-after-charge':
      services.log.info('Cancel came after the gateway had answered (and charged): the images are received and saved whole.');
      break;
  }
}

async function presentResult(services: Services, result: JobResult, files: vscode.Uri[], options: RunOptions): Promise<void> {
  const locale = services.locale;
  if (options.openResults !== false && readSettings().openAfterGenerate) {
    for (const file of files.slice(0, 4)) {
      await vscode.commands.executeCommand('vscode.open', file, {
        viewColumn: options.openBeside ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active,
        preview: files.length === 1,
      });
    }
  }
  if (result.recovered) {
    void vscode.window
      .showWarningMessage(
        trPlural(
          result.recovered.files.length,
          {
            one: '{0} paid image could not be saved into the workspace ({1}). It is kept safe in the recovery folder: {2}',
            other: '{0} paid images could not be saved into the workspace ({1}). They are kept safe in the recovery folder: {2}',
          },
          result.recovered.files.length,
          result.recovered.reason,
          path.dirname(result.recovered.manifestPath),
        ),
        vscode.l10n.t('Recover Images'),
      )
      .then((choice) => choice && vscode.commands.executeCommand('gatewayImages.recoverImages'));
  }
  if (result.opaque?.length) void vscode.window.showWarningMessage(messageText(opaqueMessage(result.model, result.opaque)));
  const first = files[0];
  if (!first) return;
  const cost = result.usage?.cost_rub !== undefined ? formatRubles(result.usage.cost_rub, locale) : vscode.l10n.t('unknown');
  const balance = result.usage?.balance !== undefined ? formatRubles(result.usage.balance, locale) : vscode.l10n.t('unknown');
  const folder = vscode.workspace.asRelativePath(path.dirname(first.fsPath));
  const message = trPlural(
    files.length,
    { one: 'Saved {0} image to {1}. Cost {2}, balance {3}.', other: 'Saved {0} images to {1}. Cost {2}, balance {3}.' },
    files.length,
    folder,
    cost,
    balance,
  );
  const actions = [vscode.l10n.t('Open Folder'), vscode.l10n.t('Reveal in Explorer'), vscode.l10n.t('Copy Path')];
  const editor = vscode.window.activeTextEditor;
  const markdownEditor = options.offerMarkdownLink !== false && editor?.document.languageId === 'markdown' ? editor : undefined;
  if (markdownEditor) actions.push(vscode.l10n.t('Insert Markdown Link'));
  const choice = await vscode.window.showInformationMessage(messageText(message), ...actions);
  if (!choice) return;
  if (choice === actions[0]) await vscode.commands.executeCommand('revealFileInOS', files[0]);
  else if (choice === actions[1]) await vscode.commands.executeCommand('revealInExplorer', files[0]);
  else if (choice === actions[2]) await vscode.env.clipboard.writeText(files.map((f) => f.fsPath).join('\n'));
  else if (markdownEditor) await insertMarkdownLinks(markdownEditor, files, result);
}

export function opaqueMessage(model: string, files: string[]): string {
  const names = files.map((f) => path.basename(f)).join(', ');
  return vscode.l10n.t('{0} returned an opaque image (no alpha channel) although a transparent background was asked for: {1}. The file is kept.', model, names);
}

export async function insertMarkdownLinks(editor: vscode.TextEditor, files: vscode.Uri[], result: { model: string }): Promise<void> {
  const docDir = path.dirname(editor.document.uri.fsPath);
  const links = files.map((f) => {
    const relative = path.relative(docDir, f.fsPath).split(path.sep).join('/');
    return `![${result.model}](${encodeURI(relative)})`;
  });
  await editor.edit((edit) => edit.insert(editor.selection.active, links.join('\n')));
}
