// The results of this workspace, kept whole across sessions: what was asked, what it cost, where
// the images are. An append-only journal (journalFile.ts) in the workspace storage holds them and
// an in-memory index (resultsIndex.ts) answers the gallery, regenerate, provenance, the batch
// resume and the spend chart. Opened on first use, not at activation. No vscode import.
import { randomUUID } from 'node:crypto';
import { type FSWatcher, promises as fs } from 'node:fs';
import * as l10n from '@vscode/l10n';
import type { Lease } from '../../core/files/lease';
import { Emitter, type Event } from '../../core/common/emitter';
import { isRecord } from '../../core/common/json';
import { finishedResults } from './agentJournal';
import { watchFile } from './journalWatch';
import { legacyResults, summaryOfLine, toSummary } from './resultLines';
import type { JournalContents, JournalPosition, SharedJournal, SharedJournalOptions } from './journalFile';
import type { GallerySplice, HistoryEntry, journalLine, ResultsIndex, ResultSummary } from './resultsIndex';

/**
 * What of the journal's code the journal itself needs (dist/results.js in the extension, loaded on
 * first use; the MCP server bundles just this).
 */
export interface JournalCode {
  SharedJournal: typeof SharedJournal;
  ResultsIndex: typeof ResultsIndex;
  journalLine: typeof journalLine;
}

export type { BatchTag, GallerySlot, GallerySplice, HistoryEntry, ResultSummary } from './resultsIndex';

/** The array that held the history before the journal (workspaceState), read once and then cleared. */
export interface LegacyHistory {
  read(): unknown;
  clear(): PromiseLike<void>;
}

export interface ResultsOpenReport {
  file: string;
  entries: number;
  /** Lines of the journal as read (before any compaction). */
  lines: number;
  /** Lines that were not a readable result (skipped). */
  skippedLines: number;
  /** Bytes of a torn last line that was cut off (a crash while writing). */
  tornBytes: number;
  /** Results moved from the old workspace state. */
  migrated: number;
  ms: number;
}

export interface HistoryChange {
  /** The result that changed (absent when the whole history was read again). */
  entry?: HistoryEntry;
  /** What the change did to the gallery's list; `reset`: read the list again. */
  gallery: GallerySplice[] | 'reset';
  /** The gallery list's length after the change. */
  galleryTotal: number;
}

/** Changes of the file within this many ms are read once. */
const WATCH_SETTLE_MS = 150;

/** Compaction starts past this many lines, when they are more than twice the results. */
const MIN_COMPACT_LINES = 1000;
/** A change whose lease was lost before its line was written is made again under a new lease, this many times in all. */
const COMMIT_TRIES = 3;

type EntryChange = Partial<Omit<HistoryEntry, 'id' | 'createdAt'>>;

/**
 * The results journal of one workspace, as this process sees it. Other processes may write the same
 * file (windows without a folder share one, so may two windows of a workspace, or a reloaded window
 * and its old extension host): every change is made under the journal's lock after reading what the
 * others wrote, so the index holds exactly what the file holds, and a compaction writes every
 * writer's results. Reads catch up with the others' lines first.
 */
export class HistoryStore {
  private readonly changed = new Emitter<HistoryChange>();
  readonly onDidChange: Event<HistoryChange> = this.changed.event;
  private opening?: Promise<ResultsIndex>;
  private code?: JournalCode;
  private journal?: SharedJournal;
  /** What of the file the index holds. */
  private position?: JournalPosition;
  /** Lines in the file (all writers'), for the compaction rule. */
  private lines = 0;
  /** Catching up and changes, one after another. */
  private queue: Promise<unknown> = Promise.resolve();
  private lastReport?: ResultsOpenReport;
  private watcher?: FSWatcher;
  private agentWatcher?: FSWatcher;
  /** Size and time of the agents' journal when its results were last taken (unchanged: nothing to read). */
  private agentStamp?: string;
  /** The user was told that results cannot be written (once). */
  private toldUnwritable = false;

  constructor(
    readonly file: string,
    private readonly options: {
      /** The journal's code, loaded when the journal is first read. */
      load: () => JournalCode;
      legacy?: LegacyHistory;
      onOpened?: (report: ResultsOpenReport) => void;
      /** Something the log should say (another writer's torn line cut off, a lock taken over). */
      warn?: (message: string) => void;
      /** Follow other processes' changes as they happen (the window's journal; not a one-off reader). */
      watch?: boolean;
      /** The journal of the MCP server started by another agent (agentJournal.ts): its finished results are taken into this one. */
      agentJournal?: string;
      /**
       * Told once, the first time a result cannot be written (a full disk, a lock that cannot be had):
       * a sentence for the user. Each failure also goes to `warn`, and the caller writes the result again later.
       */
      onUnwritable?: (message: string) => void;
      /** The lease's stale time and the pause points (tests). */
      journal?: Pick<SharedJournalOptions, 'staleMs' | 'pause'>;
    },
  ) {}

  /** The index, with what other processes wrote since it was last read (the first call reads the journal). */
  async index(): Promise<ResultsIndex> {
    const index = await this.opened();
    await this.serially(() => this.catchUp(index, false));
    await this.serially(() => this.adoptAgentResults(index));
    return index;
  }

  /** What the last opening found (torn line, migration, counts). */
  async report(): Promise<ResultsOpenReport> {
    await this.opened();
    return this.lastReport!;
  }

  /** Reads the journal again, as a restart would (after the file was replaced or cleared by hand). */
  async reopen(): Promise<ResultsOpenReport> {
    await this.queue;
    this.opening = undefined;
    const index = await this.opened();
    this.changed.fire({ gallery: 'reset', galleryTotal: index.galleryCount });
    return this.lastReport!;
  }

  async add(entry: Omit<HistoryEntry, 'id' | 'createdAt'>): Promise<HistoryEntry> {
    const full: HistoryEntry = { ...entry, id: randomUUID(), createdAt: new Date().toISOString() };
    await this.commit(() => full);
    return full;
  }

  /**
   * Writes a result whole under its own id: added when the journal does not have it yet, else its
   * state replaced (what the journal holds and `entry` does not say is kept). A job's writes use it,
   * so a write that failed, or that landed although it reported a failure, is made good by the next one.
   */
  async put(entry: HistoryEntry): Promise<void> {
    await this.commit((index) => ({ ...index.find(entry.id), ...entry }));
  }

  /** Changes a result (its files as they are saved, then its cost); unknown ids are ignored. */
  async update(id: string, change: EntryChange): Promise<void> {
    await this.commit((index) => {
      const entry = index.find(id);
      return entry && { ...entry, ...change };
    });
  }

  /**
   * Forgets a file deleted from disk: it leaves the gallery and the lookups by file. The result
   * itself stays, so its cost still counts in the spend chart.
   */
  async removeFile(file: string): Promise<void> {
    await this.commit((index) => {
      const entry = index.findByFile(file);
      return entry && { ...entry, files: entry.files.filter((f) => f !== file) };
    });
  }

  /** Waits for the changes started so far. */
  async close(): Promise<void> {
    this.watcher?.close();
    this.agentWatcher?.close();
    this.watcher = this.agentWatcher = undefined;
    await this.queue;
  }

  /**
   * Another process's change shows here without waiting for a read: the journal's folder is watched
   * once the journal is open, and a change of the file is read (the gallery is told), as is one of
   * the agents' journal.
   */
  private watch(): void {
    if (!this.options.watch) return;
    const read = () => void this.index().catch(() => undefined);
    this.watcher ??= watchFile(this.file, read, WATCH_SETTLE_MS);
    if (this.options.agentJournal) this.agentWatcher ??= watchFile(this.options.agentJournal, read);
  }

  /**
   * One change, under the journal's lock: what the others wrote is read first, so `change` sees the
   * result as it is now, and the line goes after theirs. The index takes the line once it is in the file.
   */
  private commit(change: (index: ResultsIndex) => HistoryEntry | undefined): Promise<void> {
    return this.serially(async () => {
      try {
        const index = await this.opened();
        for (let tries = 1; ; tries++) {
          try {
            await this.journal!.exclusive(async (lease) => {
              await this.catchUp(index, true);
              const entry = change(index);
              if (!entry) return;
              const line = this.code!.journalLine(entry);
              // Still the holder: what was caught up with is all there is, and no one else writes now.
              await lease?.confirm();
              this.position = await this.journal!.append(line);
              this.lines++;
              this.apply(index, line);
              if (this.lines >= MIN_COMPACT_LINES && this.lines > 2 * index.size) await this.compact(index, lease);
            });
            return;
          } catch (error) {
            if (!isLeaseLost(error) || tries === COMMIT_TRIES) throw error;
          }
        }
      } catch (error) {
        this.tellUnwritable(error);
        throw error;
      }
    });
  }

  /** The first failure to write a result is told to the user, plainly, once; every one goes to the log. */
  private tellUnwritable(error: unknown): void {
    this.options.warn?.(`Results journal ${this.file}: a change could not be written (${String(error)}).`);
    if (this.toldUnwritable || !this.options.onUnwritable) return;
    this.toldUnwritable = true;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const why = error instanceof Error ? (code && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message) : String(error);
    this.options.onUnwritable(
      l10n.t('The results of this workspace could not be written ({0}). Your images are saved; their results will be written when possible.', why),
    );
  }

  /**
   * Takes the finished results (with their job's id: cost or failure known) of the agents' journal
   * that this journal does not hold, with their ids, under this journal's lock: two windows never
   * take one twice, and a result changed here later (a file deleted) is never taken again.
   */
  private async adoptAgentResults(index: ResultsIndex): Promise<void> {
    const file = this.options.agentJournal;
    if (!file) return;
    try {
      const stamp = await fs
        .stat(file)
        .then((s) => `${s.size}:${s.mtimeMs}`)
        .catch(() => 'none');
      if (stamp === this.agentStamp) return;
      const finished = finishedResults(await new this.code!.SharedJournal(file).read(false));
      if ([...finished.keys()].some((id) => !index.has(id)))
        await this.journal!.exclusive(async (lease) => {
          await this.catchUp(index, true);
          await lease?.confirm();
          for (const [id, line] of finished) {
            if (index.has(id)) continue;
            this.position = await this.journal!.append(line);
            this.lines++;
            this.apply(index, line);
          }
        });
      this.agentStamp = stamp;
    } catch (error) {
      this.options.warn?.(`Results journal: the agents' results in ${file} could not be read (${String(error)}); tried again at the next read.`);
    }
  }

  /** Runs one task after the others (catching up and changes never interleave); a failed one does not stop the next. */
  private serially<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The index takes one line of the journal and tells listeners what changed in the gallery. */
  private apply(index: ResultsIndex, line: string): void {
    const summary = summaryOfLine(line);
    if (!summary) return;
    const gallery = index.put(line);
    this.changed.fire({ entry: index.find(summary.id)!, gallery, galleryTotal: index.galleryCount });
  }

  /** Reads what other writers added since the index last read the file; a file replaced meanwhile is read whole. */
  private async catchUp(index: ResultsIndex, underLock: boolean): Promise<void> {
    const found = await this.journal!.readAfter(this.position!, underLock);
    if (found === 'replaced') {
      const contents = await this.journal!.read(underLock);
      this.load(index, contents);
      this.changed.fire({ gallery: 'reset', galleryTotal: index.galleryCount });
      return;
    }
    if (found.tornBytes)
      this.options.warn?.(`Results journal: an unfinished last line (${found.tornBytes} bytes, a writer that stopped mid-line) was cut off.`);
    for (const line of found.lines) {
      this.lines++;
      this.apply(index, line);
    }
    this.position = found.position;
  }

  /**
   * A rewrite with one line per result, atomically; every writer's results are in the index by now
   * (under the lease). Refused when the file is not the one the index holds, or another process is
   * compacting: the journal stays as it is, and the next change tries again.
   */
  private async compact(index: ResultsIndex, lease: Lease | undefined): Promise<void> {
    try {
      const written = await this.journal!.rewrite(index.lines(), { lease, read: this.position! });
      if (typeof written === 'string') return;
      this.position = written;
      this.lines = index.size;
    } catch (error) {
      // The line itself is written: the journal is only longer than it needs to be until next time.
      this.options.warn?.(`Results journal: compaction left the journal as it was (${String(error)}); tried again later.`);
    }
  }

  private opened(): Promise<ResultsIndex> {
    // A failed read (a folder that cannot be read) is tried again on the next call.
    this.opening ??= this.open().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  private async open(): Promise<ResultsIndex> {
    const started = performance.now();
    const code = (this.code ??= this.options.load());
    const journal = (this.journal ??= new code.SharedJournal(this.file, {
      ...this.options.journal,
      onLost: (error) => this.options.warn?.(`Results journal: the lock was taken over while held (${error.message}).`),
    }));
    const index = new code.ResultsIndex();
    // Under the lock: a torn last line is a crashed writer's, never one being written now.
    const { contents, moved, linesRead } = await journal.exclusive(async (lease) => {
      let read = await journal.read(true);
      const linesRead = read.lines;
      const moved = legacyResults(this.options.legacy?.read(), read.heads).map(code.journalLine);
      // The old array is written (older results first) and synced before it is cleared: a crash in
      // between migrates again without duplicates (results keep their ids). Then the file is read as written.
      if (moved.length) {
        const kept = read.heads.map((head, i) => `${JSON.stringify(head)}\t${read.text.slice(read.tailStarts[i], read.tailEnds[i])}`);
        const written = await journal.rewrite([...moved, ...kept], { lease, read: read.position });
        // Another process changed the journal or compacts it: the opening is tried again at the next read.
        if (typeof written === 'string') throw new Error(`the old history was not moved into ${this.file} (${written}); tried again at the next read`);
        read = { ...(await journal.read(true)), badLines: read.badLines, tornBytes: read.tornBytes };
      }
      return { contents: read, moved, linesRead };
    });
    const legacy = this.options.legacy;
    if (legacy?.read() !== undefined) {
      try {
        await legacy.clear();
      } catch {
        // Cleared next time: what is already in the journal is not moved twice.
      }
    }
    const summaries = this.load(index, contents);
    this.lastReport = {
      file: this.file,
      entries: index.size,
      lines: linesRead,
      skippedLines: contents.badLines.length + contents.heads.length - summaries,
      tornBytes: contents.tornBytes,
      migrated: moved.length,
      ms: performance.now() - started,
    };
    this.options.onOpened?.(this.lastReport);
    this.watch();
    return index;
  }

  /** Fills the index with the journal as read (the file and the index then agree); returns how many results it holds. */
  private load(index: ResultsIndex, contents: JournalContents & { position: JournalPosition }): number {
    const summaries: ResultSummary[] = [];
    const starts: number[] = [];
    const ends: number[] = [];
    contents.heads.forEach((head, i) => {
      const summary = isRecord(head) ? toSummary(head.put) : undefined;
      if (!summary) return;
      summaries.push(summary);
      starts.push(contents.tailStarts[i]!);
      ends.push(contents.tailEnds[i]!);
    });
    index.clear();
    index.load(summaries, contents.text, starts, ends);
    this.lines = contents.lines;
    this.position = contents.position;
    return summaries.length;
  }
}

/** LeaseLostError (core/files/lease.ts), known by its code: this file does not load the lease module. */
const isLeaseLost = (error: unknown): boolean => (error as { code?: unknown } | undefined)?.code === 'ELEASELOST';
