// The results of this workspace, kept across sessions: what was asked, what it cost, where the
// files are. The studio's gallery, "regenerate" and provenance of non-PNG files read it.
import { randomUUID } from 'node:crypto';
import { type GenerationRequest } from '../core/types';
import { Emitter, type Event } from '../core/emitter';

export interface HistoryEntry {
  id: string;
  createdAt: string;
  /** The request as sent (no reference data). */
  request: GenerationRequest;
  /** Source images of an edit. */
  references?: string[];
  model: string;
  files: string[];
  costRub?: number;
  balanceAfter?: number;
  /** A line of a prompt file (Generate Images from File): how a re-run finds what is done. */
  batch?: { file: string; line: number; key: string };
  /** A run of Compare Models: the runs' shared id. */
  comparison?: string;
  /** The request was in flight when the extension host died (a crash, a reload): see jobs/interrupted.ts. */
  interrupted?: true;
  /** Interrupted before the gateway's answer arrived: it is unknown whether it charged. */
  outcomeUnknown?: true;
  /** The gateway's id of the request, from its answer's headers. */
  requestId?: string;
  /** The job's staging id: its files in the recovery folder are `<jobId>-…`. */
  jobId?: string;
}

/** A Memento-like store (workspaceState in the extension, a Map in tests). */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const STATE_KEY = 'gatewayImages.history';
const MAX_ENTRIES = 500;

export class HistoryStore {
  private readonly changed = new Emitter<void>();
  readonly onDidChange: Event<void> = this.changed.event;

  constructor(private readonly store: KeyValueStore) {}

  list(): HistoryEntry[] {
    return this.store.get<HistoryEntry[]>(STATE_KEY) ?? [];
  }

  async add(entry: Omit<HistoryEntry, 'id' | 'createdAt'>): Promise<HistoryEntry> {
    const full: HistoryEntry = { ...entry, id: randomUUID(), createdAt: new Date().toISOString() };
    await this.store.update(STATE_KEY, [full, ...this.list()].slice(0, MAX_ENTRIES));
    this.fire();
    return full;
  }

  /** Changes an entry in place (its files as they are saved, then its cost); unknown ids are ignored. */
  async update(id: string, change: Partial<Omit<HistoryEntry, 'id' | 'createdAt'>>): Promise<void> {
    const list = this.list();
    if (!list.some((e) => e.id === id)) return;
    await this.store.update(
      STATE_KEY,
      list.map((e) => (e.id === id ? { ...e, ...change } : e)),
    );
    this.fire();
  }

  find(id: string): HistoryEntry | undefined {
    return this.list().find((e) => e.id === id);
  }

  /** The entry that produced a file, for "regenerate" and provenance. */
  findByFile(file: string): HistoryEntry | undefined {
    return this.list().find((e) => e.files.includes(file));
  }

  /** Forgets one file of an entry (deleted from disk); the entry goes when it has no files left. */
  async removeFile(file: string): Promise<void> {
    const next = this.list()
      .map((e) => (e.files.includes(file) ? { ...e, files: e.files.filter((f) => f !== file) } : e))
      .filter((e) => e.files.length > 0);
    await this.store.update(STATE_KEY, next);
    this.fire();
  }

  private fire(): void {
    this.changed.fire();
  }
}

type JobDetails = Omit<HistoryEntry, 'id' | 'createdAt' | 'files'>;

/**
 * The history entry of one job, kept up to date while its images are saved one by one, so the
 * gallery shows each image as soon as it is in the workspace (also those of a job that then failed).
 */
export class JobHistoryRecord {
  private entry?: HistoryEntry;
  private files: string[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: HistoryStore,
    private details: JobDetails,
  ) {}

  saved(file: string): Promise<void> {
    if (!this.files.includes(file)) this.files.push(file);
    return this.write();
  }

  /** The job's final files, model and cost. */
  finish(files: string[], details: Partial<JobDetails>): Promise<void> {
    this.files = [...files];
    this.details = { ...this.details, ...details };
    return this.write();
  }

  /** Writes one after another, so an early update never overtakes a later one. */
  private write(): Promise<void> {
    this.queue = this.queue.then(async () => {
      const files = [...this.files];
      if (this.entry) await this.store.update(this.entry.id, { ...this.details, files });
      else if (files.length) this.entry = await this.store.add({ ...this.details, files });
    });
    return this.queue;
  }
}
