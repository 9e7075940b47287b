// The manifest a job writes beside what it leaves in the recovery folder (jobRecovery.ts), and
// Recover Unsaved Images reads (recoveryFolder.ts). Pure: no vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { replaceFileWith } from './replaceFile';

export interface RecoveryFile {
  path: string;
  suggestedName: string;
  /**
   * 'answer': what the gateway sent that could not be read as images (Recover reads it again).
   * 'url': an image the gateway gave as an address, not downloaded yet (`download`; Recover tries
   * again); `path` is where it is staged once it is. Absent: an image.
   */
  kind?: 'answer' | 'url';
  /** An answer Recover read again: 'whole' when every image in it came out clean (it is then not needed). */
  readAgain?: 'whole' | 'partly';
  /** kind 'url': where the image is, and why it is not here yet. */
  download?: WaitingDownload;
}

/** An image at an address (data[i].url of a paid answer) that could not be downloaded yet. */
export interface WaitingDownload {
  url: string;
  /** Its place in the answer's `data`: it is staged as `<jobId>-<index>.img`. */
  index: number;
  /** data[i].media_type: the kind of image expected there, when the answer said. */
  mediaType?: string;
  /** Why the last try failed. */
  failure: string;
}

/** What the recovery folder says about one job's files. */
export interface RecoveryManifest {
  jobId: string;
  createdAt: string;
  prompt: string;
  model: string;
  intendedDirectory: string;
  reason: string;
  files: RecoveryFile[];
  /** The gateway's id of the paid request, when its answer carried one. */
  requestId?: string;
  /** What the request cost in rubles, when the answer said so. */
  costRub?: number;
  /** The results journal that has the job's entry (Recover writes there where the images went). */
  journal?: string;
  /** Where this manifest was read from (filled by listRecoverable). */
  manifestPath?: string;
}

export async function writeRecoveryManifest(dir: string, manifest: RecoveryManifest): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${manifest.jobId}.json`);
  const { manifestPath: _read, files, ...record } = manifest;
  const plain = files.map(({ path: at, suggestedName, kind, readAgain, download }) => ({
    path: at,
    suggestedName,
    ...(kind ? { kind } : {}),
    ...(readAgain ? { readAgain } : {}),
    ...(kind === 'url' && download ? { download } : {}),
  }));
  // Replaced whole and synced: a manifest cut by a full disk would hide paid images from Recover.
  await replaceFileWith(file, JSON.stringify({ ...record, files: plain }, null, 2), { durable: true });
  return file;
}
