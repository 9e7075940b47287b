// The results of this workspace, kept whole across sessions: what was asked, what it cost, where
// the images are. An append-only journal (journalFile.ts) in the workspace storage holds them and
// an in-memory index (resultsIndex.ts) answers the gallery, regenerate, provenance, the batch
// resume and the spend chart. Opened on first use, not at activation. No vscode import.
import { randomUUID } from 'node:crypto';
import { type FSWatcher, promises as fs, watch } from 'node:fs';
import * as path from 'node:path';
import { Emitter, type Event } from '../../core/common/emitter';
import { isRecord } from '../../core/common/json';
import { finishedResults } from './agentJournal';
import type { JournalContents, JournalPosition, SharedJournal } from './journalFile';
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
   * once the journal is open, and a change of the file is read (the gallery is told). Best effort: a
   * folder that cannot be watched is read at the next read instead.
   */
  private watch(): void {
    if (this.watcher || !this.options.watch) return;
    const name = path.basename(this.file);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      this.watcher = watch(path.dirname(this.file), (_event, changed) => {
        if (changed !== name || timer) return;
        timer = setTimeout(() => {
          timer = undefined;
          void this.index().catch(() => undefined);
        }, WATCH_SETTLE_MS);
        timer.unref?.();
      });
      this.watcher.unref();
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      // Not watchable here: reads catch up on their own.
    }
  }

  /** The agents' journal's results show without waiting for a read, as another window's do. Best effort. */
  private watchAgents(): void {
    const file = this.options.agentJournal;
    if (this.agentWatcher || !file || !this.options.watch) return;
    try {
      this.agentWatcher = watch(path.dirname(file), (_event, changed) => {
        if (changed === path.basename(file)) void this.index().catch(() => undefined);
      });
      this.agentWatcher.unref();
      this.agentWatcher.on('error', () => this.agentWatcher?.close());
    } catch {
      // No folder yet (no agent wrote): read at the next read.
    }
  }

  /**
   * One change, under the journal's lock: what the others wrote is read first, so `change` sees the
   * result as it is now, and the line goes after theirs. The index takes the line once it is in the file.
   */
  private commit(change: (index: ResultsIndex) => HistoryEntry | undefined): Promise<void> {
    return this.serially(async () => {
      const index = await this.opened();
      await this.journal!.exclusive(async () => {
        await this.catchUp(index, true);
        const entry = change(index);
        if (!entry) return;
        const line = this.code!.journalLine(entry);
        this.position = await this.journal!.append(line);
        this.lines++;
        this.apply(index, line);
        if (this.lines >= MIN_COMPACT_LINES && this.lines > 2 * index.size) await this.compact(index);
      });
    });
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
        await this.journal!.exclusive(async () => {
          await this.catchUp(index, true);
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

  /** A rewrite with one line per result, atomically; every writer's results are in the index by now (under the lock). */
  private async compact(index: ResultsIndex): Promise<void> {
    try {
      this.position = await this.journal!.rewrite(index.lines());
      this.lines = index.size;
    } catch (error) {
      // The line itself is written: the journal is only longer than it needs to be until next time.
      this.options.warn?.(`Results journal: compaction failed (${String(error)}); tried again later.`);
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
    const journal = (this.journal ??= new code.SharedJournal(this.file, (error) =>
      this.options.warn?.(`Results journal: the lock was taken over while held (${error.message}).`),
    ));
    const index = new code.ResultsIndex();
    // Under the lock: a torn last line is a crashed writer's, never one being written now.
    const { contents, moved, linesRead } = await journal.exclusive(async () => {
      let read = await journal.read(true);
      const linesRead = read.lines;
      const moved = this.legacyLines(read.heads).map(code.journalLine);
      // The old array is written (older results first) and synced before it is cleared: a crash in
      // between migrates again without duplicates (results keep their ids). Then the file is read as written.
      if (moved.length) {
        const kept = read.heads.map((head, i) => `${JSON.stringify(head)}\t${read.text.slice(read.tailStarts[i], read.tailEnds[i])}`);
        await journal.rewrite([...moved, ...kept]);
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
    this.watchAgents();
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

  /** The old workspace-state array's results (newest first there) not yet in the journal, oldest first. */
  private legacyLines(journal: readonly unknown[]): HistoryEntry[] {
    const old = this.options.legacy?.read();
    if (!Array.isArray(old) || !old.length) return [];
    const known = new Set(journal.map((head) => (isRecord(head) && isRecord(head.put) ? head.put.id : undefined)));
    return old
      .filter(
        (e): e is HistoryEntry =>
          isRecord(e) && !!toSummary(e) && isRecord(e.request) && isText(e.request.model) && isText(e.request.prompt) && !known.has(e.id as string),
      )
      .reverse();
  }
}

/** The summary of a journal line, when the line holds a result (another writer's line is checked before the index takes it). */
function summaryOfLine(line: string): ResultSummary | undefined {
  const tab = line.indexOf('\t');
  try {
    const head: unknown = JSON.parse(tab < 0 ? line : line.slice(0, tab));
    return isRecord(head) ? toSummary(head.put) : undefined;
  } catch {
    return undefined;
  }
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isTextList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);

/** A result's summary read from disk, when it has the shape of one (else the line is skipped). */
function toSummary(value: unknown): ResultSummary | undefined {
  if (!isRecord(value) || !isText(value.id) || !isText(value.createdAt) || !isText(value.model) || !isTextList(value.files)) return undefined;
  return value as unknown as ResultSummary;
}
