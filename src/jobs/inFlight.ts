// Paid requests in flight, on disk. Before a paid request is sent its job writes a small record
// (synced) here; the record is removed when the job ends, whatever the outcome, and a job with a
// result first has it recorded in the results journal (RunOptions.settle). A record found at
// start-up belongs to a job whose extension host died (a crash, a reload, a killed process): see
// interrupted.ts. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { replaceFileWith } from '../core/files/replaceFile';
import type { GenerationRequest } from '../core/gateway/types';
import type { JobResult } from './jobResult';
import type { BatchTag } from './results/resultsIndex';

export interface InFlightRecord {
  /** The job's staging id: its images are `<id>-<index>.img|part` in `stagingDir`. */
  id: string;
  /** The request as sent, without reference data. */
  request: GenerationRequest;
  references?: string[];
  outputDirectory: string;
  /** The output file name pattern, and the first source's name for `{name}` (edits). */
  namePattern: string;
  sourceName?: string;
  /** Where the job stages its images (the recovery folder). */
  stagingDir: string;
  /** The gateway's reservation for it, in rubles. */
  reservation: number;
  /** The line of a prompt file the job is (ImageJob.batch). */
  batch?: BatchTag;
  /** When it was written, just before the request was sent. */
  startedAt: string;
  /** The extension host (or server) process that sends it: a record of a live process is a running job. */
  pid: number;
  /** When the gateway's success answer arrived: it has charged. */
  answeredAt?: string;
  /** The gateway's id of the request, from its answer's headers. */
  requestId?: string;
  /** The gateway and key it was sent with, noted with its answer. */
  identity?: string;
  /** Files placed into the workspace so far. */
  placed?: string[];
  /**
   * The job ended with this result (its files are `placed`), noted just before its caller records
   * it in the results journal: a crash in between leaves this, and the next start records it.
   */
  finished?: FinishedJob;
  /** The job failed after it was paid for (or perhaps), noted just before its caller records that: a failure to record leaves this for the next start. */
  failed?: FailedJob;
}

export interface FinishedJob {
  at: string;
  model: string;
  costRub?: number;
  balanceAfter?: number;
  /** Paid images that could not be placed: they wait in the recovery folder. */
  recovered?: { manifestPath: string; files: string[] };
  /** The gateway and key it was paid with (the ledger compares it with that key's figures). */
  identity?: string;
}

/** What the results journal keeps of a paid failure (jobTypes.ts: PaidFailure; jobRecord.ts), kept here until it is recorded there. */
export interface FailedJob extends FailureNote {
  at: string;
}

/** The parts of a PaidFailure (jobTypes.ts) the record keeps. */
export interface FailureNote {
  model: string;
  /** true: the gateway's success answer arrived; 'unknown': it may have charged. */
  charged: true | 'unknown';
  files: string[];
  reason: string;
  costRub?: number;
  identity?: string;
  recovered?: { manifestPath: string; files: string[]; answer?: string };
}

export type InFlightStart = Omit<InFlightRecord, 'startedAt' | 'pid' | 'answeredAt' | 'requestId' | 'identity' | 'placed' | 'finished' | 'failed'>;

/** One job's record: changes are written one after another, each synced; `end` removes it. */
export interface InFlightHandle {
  readonly record: InFlightRecord;
  /** Notes what happened (the request id, a placed file); a failure to write is ignored (the record stays as it was). */
  note(change: Pick<InFlightRecord, 'answeredAt' | 'requestId' | 'identity'> | { placedFile: string }): Promise<void>;
  /** The job ended with this result, about to be recorded in the results journal: the record says so (synced). */
  finish(result: Pick<JobResult, 'files' | 'model' | 'usage' | 'recovered' | 'identity'>): Promise<void>;
  /** The job failed after it was paid for (or perhaps), about to be recorded as paid: the record says so (synced; a failure to write is ignored). */
  fail(failure: FailureNote): Promise<void>;
  /** The record goes: the job failed, or its result is in the results journal. */
  end(): Promise<void>;
}

export class InFlightJournal {
  constructor(
    readonly dir: string,
    private readonly pid = process.pid,
  ) {}

  /** Writes the record and syncs it (rejects when it cannot: the request must then not be sent). */
  async begin(start: InFlightStart): Promise<InFlightHandle> {
    const record: InFlightRecord = {
      ...start,
      startedAt: new Date().toISOString(),
      pid: this.pid,
    };
    await fs.mkdir(this.dir, { recursive: true });
    const file = this.fileOf(record.id);
    await writeSynced(file, record);
    let queue = Promise.resolve();
    const write = () => (queue = queue.then(() => writeSynced(file, record)).catch(() => undefined));
    return {
      record,
      note: (change) => {
        if ('placedFile' in change) record.placed = [...(record.placed ?? []), change.placedFile];
        else Object.assign(record, change);
        return write();
      },
      finish: async ({ files, model, usage, recovered, identity }) => {
        record.placed = [...files];
        record.finished = {
          at: new Date().toISOString(),
          model,
          ...(usage?.cost_rub !== undefined ? { costRub: usage.cost_rub } : {}),
          ...(usage?.balance !== undefined ? { balanceAfter: usage.balance } : {}),
          ...(recovered?.files.length ? { recovered: { manifestPath: recovered.manifestPath, files: [...recovered.files] } } : {}),
          ...(identity ? { identity } : {}),
        };
        await write();
      },
      fail: async ({ model, charged, files, costRub, identity, reason, recovered }) => {
        record.failed = {
          at: new Date().toISOString(),
          model,
          charged,
          files: [...files],
          reason,
          ...(costRub !== undefined ? { costRub } : {}),
          ...(identity ? { identity } : {}),
          ...(recovered
            ? { recovered: { manifestPath: recovered.manifestPath, files: [...recovered.files], ...(recovered.answer ? { answer: recovered.answer } : {}) } }
            : {}),
        };
        await write();
      },
      end: async () => {
        await queue;
        await fs.rm(file, { force: true });
      },
    };
  }

  /** Every record in the folder (unreadable ones are skipped). */
  async list(): Promise<InFlightRecord[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch {
      return [];
    }
    const records: InFlightRecord[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        const value = JSON.parse(await fs.readFile(path.join(this.dir, name), 'utf8')) as InFlightRecord;
        if (typeof value.id === 'string' && typeof value.request?.prompt === 'string' && typeof value.pid === 'number') records.push(value);
      } catch {
        // A record cut short by a crash while it was written: its request was never sent (the record comes first).
        await fs.rm(path.join(this.dir, name), { force: true }).catch(() => undefined);
      }
    }
    return records.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /** Records of jobs whose process is gone: the extension host died while their request was in flight. */
  async leftBehind(alive: (pid: number) => boolean = processAlive): Promise<InFlightRecord[]> {
    return (await this.list()).filter((r) => r.pid !== this.pid && !alive(r.pid));
  }

  /** Removes a record once what it says has been settled (interrupted.ts). */
  remove(id: string): Promise<void> {
    return fs.rm(this.fileOf(id), { force: true });
  }

  private fileOf(id: string): string {
    return path.join(this.dir, `${id.replace(/[^\w.-]/g, '_')}.json`);
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes `value` as JSON so that the file is either the old one or the new one, on disk (synced); nothing is left behind when it fails. */
function writeSynced(file: string, value: unknown): Promise<void> {
  return replaceFileWith(file, JSON.stringify(value), { durable: true });
}
