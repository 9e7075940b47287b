// The manifest a job writes beside what it leaves in the recovery folder (jobRecovery.ts), and
// Recover Unsaved Images reads (recoveryFolder.ts). Pure: no vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface RecoveryFile {
  path: string;
  suggestedName: string;
  /** 'answer': what the gateway sent that could not be read as images (Recover reads it again). Absent: an image. */
  kind?: 'answer';
  /** An answer Recover read again: 'whole' when every image in it came out clean (it is then not needed). */
  readAgain?: 'whole' | 'partly';
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
  const plain = files.map(({ path: at, suggestedName, kind, readAgain }) => ({
    path: at,
    suggestedName,
    ...(kind ? { kind } : {}),
    ...(readAgain ? { readAgain } : {}),
  }));
  await fs.writeFile(file, JSON.stringify({ ...record, files: plain }, null, 2));
  return file;
}
