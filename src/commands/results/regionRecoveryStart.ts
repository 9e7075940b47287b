// At start-up, after the interrupted jobs: region edits whose process stopped between saving the
// paid answer and pasting it into the original are finished (jobs/regionRecovery.ts), without
// sending anything. Only in the days after a region edit was sent (a stamp beside the journal), only the
// recent results, and by their files alone (jobs/regionPending.ts);
// dist/regionEdit.js is loaded only when one is not finished. Old painted masks left by crashes go.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { interruptedRegionEdits, removeOldPaintedMasks } from '../../jobs/regionPending';
import { regionEditCode } from '../../jobs/regionEditChunk';
import { agentJournalOf, type Services } from '../../services';
import { messageText } from '../../core/common/markdownText';

export async function finishInterruptedRegionEdits(services: Services, now = new Date()): Promise<void> {
  const paintedMasksDir = path.join(services.context.globalStorageUri.fsPath, 'painted-masks');
  // The journal is read only in the days after a region edit was sent into it (or into the agents' journal it takes results from).
  const pending = await interruptedRegionEdits(services.history, [services.history.file, agentJournalOf(vscode.workspace.workspaceFolders?.[0])], now);
  if (!pending) {
    await removeOldPaintedMasks(paintedMasksDir, [], now);
    return;
  }
  const removed = await removeOldPaintedMasks(paintedMasksDir, pending, now);
  if (removed) services.log.info(`Removed ${removed} painted mask(s) older than a week that no result needs`);
  if (!pending.length) return;
  const report = await regionEditCode().recoverRegionEdits(services.history, pending, { paintedMasksDir });
  for (const done of report.finished) services.log.warn(`Interrupted region edit ${done.id} finished: ${done.files.join(', ')}`);
  for (const kept of report.kept) services.log.warn(`Interrupted region edit ${kept.id} kept as the gateway gave it: ${kept.reason}`);
  if (report.busy.length) services.log.info(`Region edits another window is finishing: ${report.busy.join(', ')}`);
  const names = (files: string[]) => files.map((f) => path.basename(f)).join(', ');
  const parts = [
    ...report.finished.map((f) =>
      vscode.l10n.t('The window closed before a region edit was pasted into its original; it is finished now: {0}.', names(f.files)),
    ),
    ...report.kept.map((k) =>
      vscode.l10n.t('A region edit interrupted by a closed window was kept as the gateway gave it ({0}): {1}', names(k.files), k.reason),
    ),
  ];
  if (parts.length) void vscode.window.showInformationMessage(messageText(parts.join(' ')));
}
