// Recover Unsaved Images: paid images that could not be saved into the workspace, paid answers that
// could not be read, images that wait at an address the gateway gave, and files a stopped job left
// behind wait in the recovery folder. This lists them with what is known, reads kept answers again,
// downloads addresses again, and moves or removes what the user picks.
// The reading of the recovery folder (core/files/recoveryFolder.ts) is loaded with dist/gateway.js; this
// command's own code is dist/recover.js, loaded by recoverCommand.ts when it first runs.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { FALLBACK_RECOVERY_DIR } from '../../core/files/imageStore';
import type { WaitingFile, WaitingJob } from '../../core/files/recoveryFolder';
import { loadBundle as folder } from '../../host/gatewayConnection';
import { HistoryStore } from '../../jobs/results/history';
import { recordRecovered } from '../../jobs/jobRecord';
import { type Services } from '../../services';
import { resolveOutputFolder } from '../common/outputFolder';
import { trPlural } from '../../core/common/plural';
import { shownAddress } from '../../core/answers/shownAddress';
import { messageText } from '../../core/common/markdownText';

export async function recoverImages(services: Services): Promise<WaitingJob[]> {
  const waiting = await listWaiting(services);
  if (!waiting.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No images are waiting in the recovery folder.'));
    return [];
  }
  const picked = await vscode.window.showQuickPick(
    waiting.map((job) => ({
      label: `$(file-media) ${title(job)}`,
      description: `${new Date(job.createdAt).toLocaleString(services.locale)} · ${megabytes(job.files.reduce((sum, f) => sum + f.bytes, 0))}`,
      detail: job.unrecorded ? `${job.files.map((f) => describeFile(f)).join(', ')} — ${job.reason}` : `${job.prompt.slice(0, 120)} — ${job.reason}`,
      job,
    })),
    { title: vscode.l10n.t('Images Waiting for Recovery'), placeHolder: vscode.l10n.t('Choose images to move into the workspace') },
  );
  if (!picked) return waiting;
  let job = picked.job;
  let note = '';
  if (job.files.some((f) => f.kind === 'answer' && !f.readAgain)) {
    const before = job;
    const again = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Reading what the gateway sent again…') },
      () => folder().readAnswersAgain(before, path.dirname(before.manifestPath ?? before.files[0]!.path)),
    );
    job = again.job;
    note = readAgainNote(again.found, job.files);
  }
  if (job.files.some((f) => f.kind === 'url')) {
    const again = await downloadFromAddresses(services, job);
    job = again.job;
    note = [note, again.note].filter(Boolean).join(' ');
  }
  if (job.files.every((f) => f.kind === 'url')) {
    // Nothing here to move yet: the images still wait at their addresses.
    if ((await vscode.window.showWarningMessage(messageText(note), vscode.l10n.t('Remove…'))) !== undefined) await removeFiles(job);
    return listWaiting(services);
  }
  const count = job.files.filter((f) => f.kind !== 'answer' && f.kind !== 'url').length;
  const moveToWorkspace = vscode.l10n.t('Move into Workspace');
  const moveElsewhere = vscode.l10n.t('Choose Folder…');
  const reveal = vscode.l10n.t('Reveal in File Manager');
  const remove = vscode.l10n.t('Remove…');
  const question = job.intendedDirectory
    ? trPlural(
        count,
        { one: 'Where should the {0} image go? It was meant for {1}.', other: 'Where should these {0} images go? They were meant for {1}.' },
        count,
        job.intendedDirectory,
      )
    : trPlural(count, { one: 'Where should the {0} image go?', other: 'Where should these {0} images go?' }, count);
  const choice = await vscode.window.showInformationMessage(
    messageText([question, note].filter(Boolean).join(' ')),
    moveToWorkspace,
    moveElsewhere,
    reveal,
    remove,
  );
  const first = job.files[0];
  if (choice === reveal) {
    if (first) await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(first.path));
  } else if (choice === remove) {
    await removeFiles(job);
  } else if (choice === moveToWorkspace || choice === moveElsewhere) {
    const intended = job.intendedDirectory;
    const target = choice === moveElsewhere ? await askFolder() : await resolveOutputFolder().catch(() => intended);
    if (target) await moveFiles(services, job, target);
  }
  return listWaiting(services);
}

/**
 * Downloads the job's images that wait at an address again, through the client of the current
 * connection settings (proxy, certificates, deadline; the key only to the gateway's own origin).
 */
async function downloadFromAddresses(services: Services, job: WaitingJob): Promise<{ job: WaitingJob; note: string }> {
  const waiting = job.files.filter((f) => f.kind === 'url').length;
  let client: Awaited<ReturnType<typeof services.connection.clientForCatalog>>;
  try {
    // The key is read when one is set: an address on another origin needs none.
    client = await services.connection.clientForCatalog();
  } catch (error) {
    return {
      job,
      note: vscode.l10n.t('The images that wait at an address could not be downloaded: {0}', error instanceof Error ? error.message : String(error)),
    };
  }
  const {
    job: after,
    downloaded,
    failures,
  } = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: trPlural(waiting, { one: 'Downloading {0} image from its address…', other: 'Downloading {0} images from their addresses…' }, waiting),
      cancellable: true,
    },
    (_progress, token) => {
      const cancel = new AbortController();
      token.onCancellationRequested(() => cancel.abort());
      return folder().downloadAgain(job, client, cancel.signal);
    },
  );
  const notes = [
    downloaded
      ? trPlural(downloaded, { one: '{0} image was downloaded from its address.', other: '{0} images were downloaded from their addresses.' }, downloaded)
      : '',
    failures.length
      ? trPlural(
          failures.length,
          {
            one: '{0} image could not be downloaded ({1}); its address stays in the recovery folder.',
            other: '{0} images could not be downloaded ({1}); their addresses stay in the recovery folder.',
          },
          failures.length,
          failures.join('; '),
        )
      : '',
  ];
  return { job: after, note: notes.filter(Boolean).join(' ') };
}

async function listWaiting(services: Services): Promise<WaitingJob[]> {
  const { listRecoverable } = folder();
  return [...(await listRecoverable(services.recoveryDir)), ...(await listRecoverable(FALLBACK_RECOVERY_DIR))];
}

function title(job: WaitingJob): string {
  const images = job.files.filter((f) => f.kind !== 'answer').length;
  if (job.unrecorded) return trPlural(job.files.length, { one: '{0} file left behind', other: '{0} files left behind' }, job.files.length);
  if (!images) return vscode.l10n.t('An answer from {0} that could not be read', job.model);
  const text = trPlural(images, { one: '{0} image from {1}', other: '{0} images from {1}' }, images, job.model);
  return images < job.files.length ? vscode.l10n.t('{0}, and an answer that could not be read', text) : text;
}

function describeFile(file: WaitingFile): string {
  if (file.kind === 'url') return `${file.download ? shownAddress(file.download.url) : file.suggestedName} (${vscode.l10n.t('not downloaded yet')})`;
  const type = file.kind === 'answer' ? vscode.l10n.t('answer') : (file.mediaType?.replace('image/', '').toUpperCase() ?? vscode.l10n.t('unknown type'));
  const state = file.incomplete ? `, ${vscode.l10n.t('incomplete')}` : '';
  return `${path.basename(file.path)} (${megabytes(file.bytes)}, ${type}${state})`;
}

function megabytes(bytes: number): string {
  return vscode.l10n.t('{0} MB', (bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 1));
}

/** What reading the answer again gave, for the question. */
function readAgainNote(found: number, files: WaitingFile[]): string {
  const unread = files.find((f) => f.kind === 'answer' && f.readAgain === 'partly');
  const foundText = found
    ? trPlural(found, { one: '{0} image was read again from what the gateway sent.', other: '{0} images were read again from what the gateway sent.' }, found)
    : vscode.l10n.t('No image could be read from what the gateway sent.');
  return unread ? `${foundText} ${vscode.l10n.t('The rest of it goes along as it came ({0}).', unread.suggestedName)}` : foundText;
}

async function askFolder(): Promise<string | undefined> {
  const folder = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: vscode.l10n.t('Move Here') });
  return folder?.[0]?.fsPath;
}

async function moveFiles(services: Services, job: WaitingJob, directory: string): Promise<void> {
  try {
    const { images, answers } = await folder().moveRecoverable(job, directory);
    await recordMoves(services, job, images, answers);
    const where = vscode.workspace.asRelativePath(directory);
    const text = trPlural(images.length, { one: 'Moved {0} image to {1}.', other: 'Moved {0} images to {1}.' }, images.length, where);
    const raw = answers.map((file) => vscode.l10n.t('What the gateway sent is there too, as it came: {0}.', path.basename(file)));
    void vscode.window.showInformationMessage(messageText([text, ...raw].join(' ')));
    const first = images[0] ?? answers[0];
    if (first) await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(first));
  } catch (error) {
    // The manifest stays: whatever was not moved is still listed next time.
    void vscode.window.showErrorMessage(
      messageText(vscode.l10n.t('Could not move the images ({0}). They stay in the recovery folder.', error instanceof Error ? error.message : String(error))),
    );
  }
}

/**
 * The job's entry in the results journal learns where its files went: this window's journal, or the
 * one its manifest names (a job of another workspace; the journal takes several writers).
 */
async function recordMoves(services: Services, job: WaitingJob, images: string[], answers: string[]): Promise<void> {
  const sources = job.files.filter((f) => !(f.kind === 'answer' && f.readAgain === 'whole'));
  const [imageSources, answerSources] = [sources.filter((f) => f.kind !== 'answer'), sources.filter((f) => f.kind === 'answer')];
  const moves = [
    ...images.map((to, i) => ({ from: imageSources[i]!.path, to, image: true, whole: !imageSources[i]!.incomplete })),
    ...answers.map((to, i) => ({ from: answerSources[i]!.path, to, image: false, whole: false })),
  ];
  const ours = !job.journal || path.resolve(job.journal) === path.resolve(services.history.file);
  const store = ours ? services.history : new HistoryStore(job.journal!, { load: () => services.results(), warn: (m) => services.log.warn(m) });
  try {
    const known = await recordRecovered(store, job.jobId, moves);
    if (!known) services.log.info(`Recover: job ${job.jobId} has no entry in ${store.file}; its moved files are not recorded there.`);
  } catch (error) {
    services.log.warn(`Recover: where the files of job ${job.jobId} went could not be written to ${store.file}: ${String(error)}`);
  } finally {
    if (!ours) await store.close();
  }
}

async function removeFiles(job: WaitingJob): Promise<void> {
  const remove = vscode.l10n.t('Remove');
  const sure = await vscode.window.showWarningMessage(
    trPlural(job.files.length, { one: 'Remove {0} file of a paid request for good?', other: 'Remove {0} files of a paid request for good?' }, job.files.length),
    { modal: true, detail: job.files.map((f) => describeFile(f)).join('\n') },
    remove,
  );
  if (sure !== remove) return;
  await folder().removeRecoverable(job);
  void vscode.window.showInformationMessage(
    trPlural(job.files.length, { one: 'Removed {0} file from the recovery folder.', other: 'Removed {0} files from the recovery folder.' }, job.files.length),
  );
}
