// The recovery folder as Recover Unsaved Images sees it: paid images that could not be placed, paid
// answers that could not be read and images that wait at an address, each job with a manifest
// (recoveryManifest.ts); and the staged files a job left behind without one (a crash, a closed
// window). Lists them all with what is known, reads kept answers again, downloads addresses again,
// and moves or removes them. In the lazily loaded chunk (gatewayBundle.ts).
// Pure: no vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { salvageAnswer } from '../answers/answerSalvage';
import { extensionForMediaType, type ImageKind, readImageHead, sniffImage } from '../images/imageSniff';
import type { ImageSink } from '../gateway/imageSink';
import { placeWithoutOverwrite, StagingSink } from './imageStore';
import { answerExtension } from '../answers/keptAnswer';
import { type RecoveryFile, type RecoveryManifest, type WaitingDownload, writeRecoveryManifest } from './recoveryManifest';

/** A file waiting in the recovery folder, with what is known about it. */
export interface WaitingFile extends RecoveryFile {
  bytes: number;
  modifiedAt: string;
  /** From the file's first bytes. */
  mediaType?: string;
  /** Cut short: a `.part` that its job did not finish. */
  incomplete?: boolean;
}

export interface WaitingJob extends RecoveryManifest {
  files: WaitingFile[];
  /** No manifest: files a job left behind when it was stopped before writing one. */
  unrecorded?: boolean;
}

/**
 * A staged file untouched this long is taken as left behind. A running job writes its files as the
 * answer arrives, and a request's deadline is 10 minutes unless the user sets another.
 */
export const LEFT_BEHIND_AFTER_MS = 15 * 60_000;

/** `<jobId>-<index>.img|part`, `<jobId>-answer.<ext>` (and `.part`), `<jobId>-answer-<k>.<ext>`: what StagingSink and Recover write. */
const STAGED_NAME = /^(.+?)-(?:(\d+)\.(img|part)|answer(?:-(\d+))?\.([a-z0-9]+))$/;

/** Every job whose files are still in `dir` (with a manifest, or left behind without one), oldest first. */
export async function listRecoverable(dir: string): Promise<WaitingJob[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const jobs: WaitingJob[] = [];
  const recorded = new Set<string>();
  for (const name of names.filter((n) => n.endsWith('.json') && !STAGED_NAME.test(n))) {
    try {
      const manifestPath = path.join(dir, name);
      const manifest = JSON.parse(await fs.readFile(manifestPath, 'utf8')) as RecoveryManifest;
      for (const file of manifest.files) recorded.add(path.resolve(file.path));
      const files = (
        await Promise.all(
          manifest.files.map((file) => (file.kind === 'url' ? describeAddress(file, manifest.createdAt) : describe(file, file.path.endsWith('.part')))),
        )
      ).filter((f) => f !== undefined);
      if (files.length) jobs.push({ ...manifest, manifestPath, files });
    } catch {
      // A damaged manifest hides nothing: its files are listed as left behind.
    }
  }
  jobs.push(...(await leftBehind(dir, names, recorded)));
  return jobs.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.jobId.localeCompare(b.jobId));
}

/**
 * Reads a job's kept answers again (answerSalvage.ts): the images found join the job as files of
 * their own, and so do the images it gives as addresses (kind 'url', downloaded by downloadAgain:
 * an answer left by a crash while they downloaded); the manifest (written now for a job that had
 * none) records it, so it is done once. Returns the job as it now is, and how many images were found.
 */
export async function readAnswersAgain(job: WaitingJob, dir: string): Promise<{ job: WaitingJob; found: number }> {
  const files: WaitingFile[] = [];
  let found = 0;
  for (const file of job.files) {
    if (file.kind !== 'answer' || file.readAgain) {
      files.push(file);
      continue;
    }
    const stem = path.basename(file.suggestedName, path.extname(file.suggestedName));
    const result = await salvageAnswer(file.path, path.dirname(file.path), path.basename(file.path, path.extname(file.path)));
    for (const [k, image] of result.images.entries()) {
      if (image.path === file.path) continue; // the answer is an image itself (a body cut short)
      const suggestedName = `${stem}-${k + 1}${image.cut ? '-incomplete' : ''}.${image.kind.extension}`;
      files.push((await describe({ path: image.path, suggestedName })) ?? { path: image.path, suggestedName, bytes: image.bytes, modifiedAt: '' });
      found++;
    }
    for (const address of await addressesIn(file.path)) {
      const staged = path.join(path.dirname(file.path), `${job.jobId}-${address.index}.img`);
      // An image downloaded before the crash is in the job already.
      if (job.files.some((f) => path.resolve(f.path) === path.resolve(staged)) || (await describe({ path: staged, suggestedName: '' }))) continue;
      const suggestedName = `${stem}-${address.index + 1}.${extensionForMediaType(address.mediaType) ?? 'png'}`;
      files.push({ path: staged, suggestedName, kind: 'url', download: address, bytes: 0, modifiedAt: job.createdAt });
      found++;
    }
    const itself = result.images.some((image) => image.path === file.path);
    files.push({
      ...file,
      ...(itself ? { kind: undefined, suggestedName: `${stem}.${result.images[0]!.kind.extension}` } : {}),
      readAgain: result.complete ? 'whole' : 'partly',
    });
  }
  const manifestPath = await writeRecoveryManifest(dir, { ...job, files });
  const { unrecorded: _none, ...recorded } = job;
  return { job: { ...recorded, files, manifestPath }, found };
}

/**
 * Downloads again the images of a job that wait at an address, through `client` (made from the
 * current connection settings: its proxy, certificates, deadline and key rule, imageDownload.ts).
 * Each that arrives whole is staged where its entry said (`<jobId>-<index>.img`) and becomes an image
 * of the job; the others keep their address with the new reason. The manifest records it. Returns
 * the job as it now is, how many arrived, and why the others did not.
 */
/** What downloadAgain needs of the client (GatewayClient.downloadImage), named here so files/ stays below the client. */
export interface ImageDownloader {
  downloadImage(address: string, sink: ImageSink, index: number, options?: { mediaType?: string; signal?: AbortSignal }): Promise<ImageKind>;
}

export async function downloadAgain(
  job: WaitingJob,
  client: ImageDownloader,
  signal?: AbortSignal,
): Promise<{ job: WaitingJob; downloaded: number; failures: string[] }> {
  const files: WaitingFile[] = [];
  const failures: string[] = [];
  let downloaded = 0;
  for (const file of job.files) {
    const download = file.kind === 'url' ? file.download : undefined;
    if (!download) {
      files.push(file);
      continue;
    }
    const staging = new StagingSink(path.dirname(file.path), { jobId: job.jobId, fallbackDir: path.dirname(file.path) });
    // What an earlier try that was cut off left (a crash mid-download) is no image.
    await fs.rm(path.join(staging.dir, `${job.jobId}-${download.index}.part`), { force: true });
    try {
      const kind = await client.downloadImage(download.url, staging, download.index, {
        ...(download.mediaType ? { mediaType: download.mediaType } : {}),
        ...(signal ? { signal } : {}),
      });
      await staging.durable();
      const staged = staging.images[0]!; // downloadImage closed it
      const suggestedName = file.suggestedName.replace(/\.[a-z0-9]+$/i, '') + `.${kind.extension}`;
      files.push((await describe({ path: staged.path, suggestedName })) ?? { path: staged.path, suggestedName, bytes: staged.bytes, modifiedAt: '' });
      downloaded++;
    } catch (error) {
      const failure = error instanceof Error ? error.message : String(error);
      failures.push(failure);
      files.push({ ...file, download: { ...download, failure } });
    }
  }
  const { unrecorded: _none, ...recorded } = job;
  const manifestPath = await writeRecoveryManifest(path.dirname(job.manifestPath ?? files[0]!.path), { ...recorded, files });
  return { job: { ...recorded, files, manifestPath }, downloaded, failures };
}

/**
 * Moves a job's images (and an answer not read whole: the raw bytes) into `directory` under their
 * suggested names, never overwriting; an answer read whole is removed (its images are moved). The
 * manifest goes once all moved; images that still wait at an address stay in it. On a failure, what
 * was not moved stays listed.
 */
export async function moveRecoverable(job: WaitingJob, directory: string): Promise<{ images: string[]; answers: string[] }> {
  const moved = { images: [] as string[], answers: [] as string[] };
  const waiting = job.files.filter((file) => file.kind === 'url');
  for (const file of job.files) {
    if (file.kind === 'url') continue;
    if (file.kind === 'answer' && file.readAgain === 'whole') {
      await fs.rm(file.path, { force: true });
      continue;
    }
    const ext = path.extname(file.suggestedName);
    const placed = await placeWithoutOverwrite(file.path, directory, path.basename(file.suggestedName, ext), ext.slice(1) || 'bin');
    (file.kind === 'answer' ? moved.answers : moved.images).push(placed);
  }
  if (job.manifestPath && waiting.length) {
    const { unrecorded: _none, ...recorded } = job;
    await writeRecoveryManifest(path.dirname(job.manifestPath), { ...recorded, files: waiting });
  } else if (job.manifestPath) await fs.rm(job.manifestPath, { force: true });
  return moved;
}

/** Removes a job's files and its manifest (the user chose to). */
export async function removeRecoverable(job: WaitingJob): Promise<void> {
  for (const file of job.files) await fs.rm(file.path, { force: true });
  if (job.manifestPath) await fs.rm(job.manifestPath, { force: true });
}

async function leftBehind(dir: string, names: string[], recorded: Set<string>): Promise<WaitingJob[]> {
  const byJob = new Map<string, WaitingFile[]>();
  const now = Date.now();
  for (const name of names.sort()) {
    const match = STAGED_NAME.exec(name);
    const file = path.join(dir, name);
    if (!match || recorded.has(path.resolve(file))) continue;
    const [, jobId = '', index, imageState, found, answerExt] = match;
    const isAnswer = answerExt !== undefined && found === undefined;
    const incomplete = imageState === 'part' || (isAnswer && answerExt === 'part');
    const waiting = await describe({ path: file, suggestedName: '', ...(isAnswer ? { kind: 'answer' as const } : {}) }, incomplete);
    if (!waiting || now - Date.parse(waiting.modifiedAt) < LEFT_BEHIND_AFTER_MS) continue;
    const ext = extensionForMediaType(waiting.mediaType) ?? 'bin';
    waiting.suggestedName = isAnswer
      ? `${jobId}-answer.${answerExt === 'part' ? answerExtension(undefined, await readImageHead(file, 64)) : answerExt}`
      : index !== undefined
        ? `${jobId}-${Number(index) + 1}${incomplete ? '-incomplete' : ''}.${ext}`
        : name.replace(/\.[a-z0-9]+$/, `.${ext}`);
    byJob.set(jobId, [...(byJob.get(jobId) ?? []), waiting]);
  }
  return [...byJob].map(([jobId, files]) => ({
    jobId,
    createdAt: files.map((f) => f.modifiedAt).sort()[0]!, // a group has a file
    prompt: '',
    model: '',
    intendedDirectory: '',
    reason: l10n.t('left in the recovery folder without a record: the job was stopped before it could finish'),
    files,
    unrecorded: true,
  }));
}

/** Largest kept answer read for addresses: an answer that gives its images as addresses is a few KB of JSON. */
const MAX_ADDRESS_ANSWER_BYTES = 1024 * 1024;

/** The images a kept answer gives as addresses (data[i].url without b64_json, not a data URL), not yet downloaded. */
async function addressesIn(file: string): Promise<WaitingDownload[]> {
  let answer: unknown;
  try {
    if ((await fs.stat(file)).size > MAX_ADDRESS_ANSWER_BYTES) return [];
    answer = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch {
    return []; // not JSON (or cut short): salvage reads what it can
  }
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return [];
  const found: WaitingDownload[] = [];
  for (const [index, element] of data.entries()) {
    const { url, b64_json: base64, media_type: mediaType } = (element ?? {}) as Record<string, unknown>;
    if (typeof url !== 'string' || !url.trim() || typeof base64 === 'string' || /^data:/i.test(url.trim())) continue;
    found.push({ url: url.trim(), index, ...(typeof mediaType === 'string' ? { mediaType } : {}), failure: l10n.t('not downloaded yet') });
  }
  return found;
}

/**
 * An image that waits at an address: listed with the manifest's date and no bytes yet, or as the image
 * itself when a download again staged it whole but could not record it (a crash right after).
 */
async function describeAddress(file: RecoveryFile, createdAt: string): Promise<WaitingFile> {
  const staged = await describe({ path: file.path, suggestedName: file.suggestedName });
  if (staged?.mediaType && file.path.endsWith('.img')) return staged;
  return { ...file, bytes: 0, modifiedAt: createdAt };
}

/** A recovery file with its size, date and sniffed type; undefined when it is gone. */
async function describe(file: RecoveryFile, incomplete = false): Promise<WaitingFile | undefined> {
  try {
    const stat = await fs.stat(file.path);
    if (!stat.isFile()) return undefined;
    const kind = file.kind === 'answer' ? undefined : sniffImage(await readImageHead(file.path));
    return {
      ...file,
      bytes: stat.size,
      modifiedAt: stat.mtime.toISOString(),
      ...(kind ? { mediaType: kind.mediaType } : {}),
      ...(incomplete ? { incomplete } : {}),
    };
  } catch {
    return undefined;
  }
}
