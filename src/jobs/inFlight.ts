// Paid requests in flight, on disk. Before a paid request is sent its job writes a small record
// (synced) here; the record is removed when the job ends, whatever the outcome, once the caller has
// recorded it. A record found at start-up belongs to a job whose extension host died (a crash, a
// reload, a killed process): see interrupted.ts. No vscode import.
import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GenerationRequest } from '../core/types';

/** A line of a prompt file (Generate Images from File). */
export interface BatchOrigin {
  file: string;
  line: number;
  key: string;
}

export interface InFlightRecord {
  /** The job's staging id: its images are `<id>-<index>.img|part` in `stagingDir`. */
  id: string;
  /** A digest of the request as sent (model, fields, references): the same request has the same one. */
  fingerprint: string;
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
  batch?: BatchOrigin;
  /** When it was written, just before the request was sent. */
  startedAt: string;
  /** The extension host (or server) process that sends it: a record of a live process is a running job. */
  pid: number;
  /** When the gateway's success answer arrived: it has charged. */
  answeredAt?: string;
  /** The gateway's id of the request, from its answer's headers. */
  requestId?: string;
  /** Files placed into the workspace so far. */
  placed?: string[];
  /**
   * The job ended with a result, which its caller recorded in the history. The record stays a few
   * minutes more (FINISHED_KEPT_MS): a history write is not on disk at once (VS Code flushes its
   * workspace state later), and a crash or reload meanwhile must not lose what was paid for.
   */
  finishedAt?: string;
  /** What the finished job cost, when the answer said so. */
  costRub?: number;
}

/** How long a finished job's record is kept, so that the next start can restore a history entry lost with a crash. */
export const FINISHED_KEPT_MS = 5 * 60_000;

export type InFlightStart = Omit<InFlightRecord, 'fingerprint' | 'startedAt' | 'pid' | 'answeredAt' | 'requestId' | 'placed' | 'finishedAt' | 'costRub'>;

/** One job's record: changes are written one after another, each synced; `end` removes it. */
export interface InFlightHandle {
  readonly record: InFlightRecord;
  /** Notes what happened (the request id, a placed file); a failure to write is ignored (the record stays as it was). */
  note(change: Pick<InFlightRecord, 'answeredAt' | 'requestId'> | { placedFile: string }): Promise<void>;
  /** The job ended with a result (recorded by its caller): the record says so and stays a while (FINISHED_KEPT_MS). */
  finish(result: { files: string[]; costRub?: number }): Promise<void>;
  /** The job ended without a result to remember (it failed, the outcome is known or was told): the record goes. */
  end(): Promise<void>;
}

export function requestFingerprint(request: GenerationRequest, references: readonly string[] = []): string {
  const { input_references: urls, ...fields } = request;
  const asked = { ...fields, input_references: urls?.map((r) => r.image_url.url.slice(0, 256)), references };
  return createHash('sha256').update(JSON.stringify(asked)).digest('hex').slice(0, 32);
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
      fingerprint: requestFingerprint(start.request, start.references),
      startedAt: new Date().toISOString(),
      pid: this.pid,
    };
    await fs.mkdir(this.dir, { recursive: true });
    void this.prune().catch(() => undefined);
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
      finish: async ({ files, costRub }) => {
        Object.assign(record, { placed: files, finishedAt: new Date().toISOString(), ...(costRub !== undefined ? { costRub } : {}) });
        await write();
      },
      end: async () => {
        await queue;
        await fs.rm(file, { force: true });
      },
    };
  }

  /** Removes this process's records of jobs that finished more than FINISHED_KEPT_MS ago. */
  async prune(now = Date.now()): Promise<void> {
    for (const record of await this.list()) {
      if (record.pid === this.pid && record.finishedAt && now - Date.parse(record.finishedAt) > FINISHED_KEPT_MS) await this.remove(record.id);
    }
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

/**
 * Writes `value` as JSON so that the file is either the old one or the new one, on disk: a temporary
 * file, synced, renamed over it, and the folder synced (where a folder can be opened for that).
 */
async function writeSynced(file: string, value: unknown): Promise<void> {
  const temporary = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  const handle = await fs.open(temporary, 'w');
  try {
    await handle.writeFile(JSON.stringify(value));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  // Syncing a folder is what makes the rename itself durable; where a folder cannot be opened (Windows) it is skipped.
  const folder = await fs.open(path.dirname(file), 'r').catch(() => undefined);
  if (!folder) return;
  try {
    await folder.sync();
  } catch {
    // Not supported here.
  } finally {
    await folder.close().catch(() => undefined);
  }
}
