// The host side of the studio's region editor (issue 41). It opens the editor on a workspace image
// (checked and measured, without decoding it), gives the editor its estimate line, runs the region
// edit through the shared editImage (the same confirmation, reservation, journal and recovery as
// every edit) with the mask the page painted, and keeps or discards a result. The page is untrusted:
// every path it names is checked again here.
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { editImage } from '../../commands/images/editImage';
import { type ErrorActions, showError } from '../../commands/common/showError';
import { isPngBytes } from '../../core/files/maskInput';
import { summarizeError } from '../../core/gateway/errors';
import { formatRubles } from '../../core/money/cost';
import { regionEditCode } from '../../jobs/regionEditChunk';
import { maskBesideOf } from '../../jobs/regionPending';
import type { Services } from '../../services';
import { checkReference } from '../model/files';
import { evaluateForm } from '../model/view';
import { trashResult } from '../gallery/galleryActions';
import type { ToWebviewMessage } from '../protocol/protocol';
import type { RegionDecisionMessage, RegionEditMessage, RegionFromWebviewMessage, RegionImageView } from '../protocol/regionProtocol';

export interface RegionEditorPage {
  post(message: ToWebviewMessage): void;
  /** webview.asWebviewUri of a file. */
  src(file: string): string;
}

export class RegionEditorHost {
  private running: AbortController | undefined;
  /** Results this editor made (the only files Discard may move to the trash), with their masks. */
  private readonly results = new Map<string, string[]>();

  constructor(
    private readonly services: Services,
    private readonly page: RegionEditorPage,
  ) {}

  /** Opens the editor on `file`, or tells the page why it cannot (not in the workspace, SVG, animated…). */
  async open(file: string): Promise<void> {
    try {
      this.page.post({ type: 'openRegionEditor', image: await this.imageView(file) });
    } catch (error) {
      this.page.post({ type: 'regionRefused', message: summarizeError(error).message });
    }
  }

  async handle(message: RegionFromWebviewMessage): Promise<void> {
    switch (message.type) {
      case 'regionOpen':
        return this.open(message.image);
      case 'regionEstimate':
        this.estimate(message.requestId, message.model, message.image);
        return;
      case 'regionEdit':
        return this.edit(message);
      case 'regionDecision':
        return this.decide(message);
    }
  }

  /** Aborting waits for nothing paid: a running edit finishes and saves its files (like the studio's Generate). */
  cancel(): void {
    this.running?.abort();
  }

  private async imageView(file: string): Promise<RegionImageView> {
    const check = await checkReference(file);
    if (!check.ok) throw new Error(check.reason);
    const { width, height } = await regionEditCode().regionOriginalInfo(check.path);
    return { path: check.path, name: path.basename(check.path), src: this.page.src(check.path), width, height };
  }

  private estimate(requestId: number, model: string, image: string): void {
    const { services } = this;
    const form = { model, prompt: 'region', n: 1, params: {}, references: [image] };
    const evaluation = evaluateForm(form, services.catalog.peek(), services.account.snapshot, services.locale, requestId);
    const issue = evaluation.issues.find((i) => i.field === 'model' || i.field === 'references' || i.field === 'images');
    this.page.post({
      type: 'regionEstimate',
      requestId,
      ...(evaluation.estimate ? { reservationText: evaluation.estimate.reservationText, expectedText: evaluation.estimate.expectedText } : {}),
      ...(issue ? { issue: issue.message } : {}),
    });
  }

  private async edit(message: RegionEditMessage): Promise<void> {
    const { services } = this;
    const { requestId } = message;
    if (this.running) {
      this.page.post({ type: 'regionDone', requestId, ok: false, error: vscode.l10n.t('A region edit is already running.') });
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    const errorActions: ErrorActions = {};
    let maskFile: string | undefined;
    try {
      const original = await this.imageView(message.image);
      // The format applies to the region edit only: the whole image's edit is saved as the model gives it.
      const args = {
        model: message.model,
        prompt: message.prompt,
        images: [original.path],
        feather: message.feather,
        ...(message.wholeImage ? {} : { format: message.format }),
      };
      // The editor shows the result against the original: it is not opened in another editor too.
      const extras = { signal: controller.signal, errorActions, openResults: false, origin: { kind: 'studio' as const } };
      let paintedMask;
      if (!message.wholeImage) {
        maskFile = await this.savePaintedMask(Buffer.from(message.maskBase64, 'base64'));
        paintedMask = { file: maskFile, shown: vscode.l10n.t('the painted region') };
      }
      const result = await editImage(services, args, true, { ...extras, ...(paintedMask ? { paintedMask } : {}) });
      // Done: the journal names the mask kept beside the result, so this copy was only the page's. After a
      // failure it stays (a paid answer's journal entry may name it, and finishing it at the next start
      // reads it); painted masks no result names go after seven days (regionPending.removeOldPaintedMasks).
      if (maskFile) await fs.rm(maskFile, { force: true }).catch(() => undefined);
      const file = result.files[0]?.fsPath;
      if (!file) throw new Error(vscode.l10n.t('The gateway answered without an image.'));
      this.results.set(file, [file, maskBesideOf(file)]);
      this.page.post({
        type: 'regionDone',
        requestId,
        ok: true,
        original,
        result: await this.imageView(file),
        ...(result.regionDescription !== undefined ? { description: result.regionDescription } : {}),
        ...(result.usage?.cost_rub !== undefined ? { costText: formatRubles(result.usage.cost_rub, services.locale) } : {}),
      });
    } catch (error) {
      const summary = summarizeError(error);
      if (summary.kind === 'cancelled') {
        this.page.post({ type: 'regionDone', requestId, ok: false, cancelled: true });
        return;
      }
      void showError(services, error, errorActions.retry, errorActions.baseline);
      this.page.post({ type: 'regionDone', requestId, ok: false, error: summary.message });
    } finally {
      this.running = undefined;
    }
  }

  /** The page's mask, a PNG by its bytes, kept where the extension keeps its own files (never the workspace). */
  private async savePaintedMask(bytes: Buffer): Promise<string> {
    if (!isPngBytes(bytes)) throw new Error(vscode.l10n.t('The painted region did not arrive as a PNG; paint it again.'));
    const folder = path.join(this.services.context.globalStorageUri.fsPath, 'painted-masks');
    await fs.mkdir(folder, { recursive: true });
    const file = path.join(folder, `${randomUUID()}.png`);
    await fs.writeFile(file, bytes, { mode: 0o600 });
    return file;
  }

  private async decide({ requestId, decision, result }: RegionDecisionMessage): Promise<void> {
    const name = path.basename(result);
    if (decision === 'keep') {
      this.page.post({ type: 'regionDecided', requestId, decision, ok: true, message: vscode.l10n.t('Kept {0}.', name) });
      return;
    }
    const files = this.results.get(result);
    if (!files) {
      this.page.post({
        type: 'regionDecided',
        requestId,
        decision,
        ok: false,
        message: vscode.l10n.t('{0} was not made by this editor: it is left as it is.', name),
      });
      return;
    }
    let useTrash = true;
    try {
      await trashResult(this.services, files[0]!);
    } catch (error) {
      // No trash here (a remote or web workbench): deleted for good only when the person says so.
      if (!(await confirmPermanentDelete(name, error))) {
        this.page.post({ type: 'regionDecided', requestId, decision, ok: false, message: vscode.l10n.t('{0} is kept.', name) });
        return;
      }
      useTrash = false;
      try {
        await trashResult(this.services, files[0]!, false);
      } catch (again) {
        this.page.post({
          type: 'regionDecided',
          requestId,
          decision,
          ok: false,
          message: vscode.l10n.t('{0} could not be deleted and is kept: {1}', name, summarizeError(again).message),
        });
        return;
      }
    }
    // Its mask is not a result, only a file beside it: it goes the same way.
    for (const mask of files.slice(1)) await vscode.workspace.fs.delete(vscode.Uri.file(mask), { useTrash }).then(undefined, () => undefined);
    this.results.delete(result);
    const message = useTrash ? vscode.l10n.t('{0} and its mask were moved to the trash.', name) : vscode.l10n.t('{0} and its mask were deleted.', name);
    this.page.post({ type: 'regionDecided', requestId, decision, ok: true, message });
  }
}

/** Asks before a paid result is deleted for good because it cannot go to the trash. */
async function confirmPermanentDelete(name: string, why: unknown): Promise<boolean> {
  const remove = vscode.l10n.t('Delete Permanently');
  const answer = await vscode.window.showWarningMessage(
    vscode.l10n.t('{0} cannot be moved to the trash. Delete it permanently?', name),
    { modal: true, detail: vscode.l10n.t('It was paid for, and a deleted file cannot be recovered. ({0})', summarizeError(why).message) },
    remove,
  );
  return answer === remove;
}
