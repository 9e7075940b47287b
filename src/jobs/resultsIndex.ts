// The in-memory index of the results journal: every result by id, file, prompt-file line,
// comparison run and local day, and the gallery's list (one item per saved file, newest first).
// A change reports the gallery splices it makes, so the studio posts only what changed. No vscode import.
import { localDay } from '../core/spendChart';
import type { GenerationRequest } from '../core/types';

export interface HistoryEntry {
  id: string;
  createdAt: string;
  /** The request as sent (no reference data). */
  request: GenerationRequest;
  /** Source images of an edit. */
  references?: string[];
  model: string;
  /** Images in the workspace (a file deleted from the gallery leaves this list). */
  files: string[];
  costRub?: number;
  balanceAfter?: number;
  /** A line of a prompt file (Generate Images from File): how a re-run finds what is done. */
  batch?: BatchTag;
  /** A run of Compare Models: the runs' shared id. */
  comparison?: string;
  /** Paid images that could not be placed into the workspace: they wait in the recovery folder. */
  recovered?: { manifestPath?: string; files: string[] };
}

/** Where a result came from, when it was a line of a prompt file. */
export interface BatchTag {
  file: string;
  line: number;
  /** requestKey() of the line's request: an edited line is a new line. */
  key: string;
}

/** One card of the gallery: a saved file of a result. */
export interface GallerySlot {
  entry: HistoryEntry;
  file: string;
}

/** `items` replace `deleteCount` items at `start` (indexes of the gallery list, newest first). */
export interface GallerySplice {
  start: number;
  deleteCount: number;
  items: GallerySlot[];
}

export const batchKey = (tag: BatchTag) => `${tag.file}\0${tag.line}\0${tag.key}`;

function addTo<K>(map: Map<K, string[]>, key: K, id: string): void {
  const list = map.get(key);
  if (!list) map.set(key, [id]);
  else if (!list.includes(id)) list.push(id);
}

export class ResultsIndex {
  /** By id, in the order results were first written (oldest first). */
  private readonly byId = new Map<string, HistoryEntry>();
  private readonly order = new Map<string, number>();
  private readonly byFile = new Map<string, string>();
  private readonly byBatch = new Map<string, string[]>();
  private readonly byComparison = new Map<string, string[]>();
  private readonly byDay = new Map<string, string[]>();
  /** The gallery, newest result first, each result's files in their order. */
  private gallery: GallerySlot[] = [];

  /** Loads many entries at once (opening the journal): the gallery is built once at the end. */
  load(entries: Iterable<HistoryEntry>): void {
    for (const entry of entries) this.index(entry);
    this.gallery = [...this.byId.values()].reverse().flatMap((entry) => entry.files.map((file) => ({ entry, file })));
  }

  /** Adds or replaces the entry with this id; returns the gallery splices it makes. */
  put(entry: HistoryEntry): GallerySplice[] {
    const before = this.byId.get(entry.id);
    this.index(entry);
    const start = before?.files.length ? this.gallery.findIndex((slot) => slot.entry.id === entry.id) : this.insertionPoint(entry.id);
    const deleteCount = before?.files.length ?? 0;
    const items = entry.files.map((file) => ({ entry, file }));
    if (!deleteCount && !items.length) return [];
    this.gallery.splice(start, deleteCount, ...items);
    return [{ start, deleteCount, items }];
  }

  get size(): number {
    return this.byId.size;
  }

  /** Every entry, oldest first (what compaction writes). */
  entries(): IterableIterator<HistoryEntry> {
    return this.byId.values();
  }

  find(id: string): HistoryEntry | undefined {
    return this.byId.get(id);
  }

  /** The result that produced a file in the workspace. */
  findByFile(file: string): HistoryEntry | undefined {
    const id = this.byFile.get(file);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** Results of one line of a prompt file (same file, line and request), oldest first. */
  findBatch(tag: BatchTag): HistoryEntry[] {
    return (this.byBatch.get(batchKey(tag)) ?? []).map((id) => this.byId.get(id)!);
  }

  comparison(runId: string): HistoryEntry[] {
    return (this.byComparison.get(runId) ?? []).map((id) => this.byId.get(id)!);
  }

  /** Results created on these local days (YYYY-MM-DD), whatever became of their files. */
  onDays(days: readonly string[]): HistoryEntry[] {
    return days.flatMap((day) => (this.byDay.get(day) ?? []).map((id) => this.byId.get(id)!));
  }

  get galleryCount(): number {
    return this.gallery.length;
  }

  galleryPage(start: number, count: number): GallerySlot[] {
    return this.gallery.slice(start, start + count);
  }

  private index(entry: HistoryEntry): void {
    const before = this.byId.get(entry.id);
    for (const file of before?.files ?? []) if (this.byFile.get(file) === entry.id) this.byFile.delete(file);
    if (!before) {
      this.order.set(entry.id, this.order.size);
      const created = new Date(entry.createdAt);
      if (!Number.isNaN(created.getTime())) addTo(this.byDay, localDay(created), entry.id);
    }
    this.byId.set(entry.id, entry);
    for (const file of entry.files) this.byFile.set(file, entry.id);
    if (entry.batch) addTo(this.byBatch, batchKey(entry.batch), entry.id);
    if (entry.comparison) addTo(this.byComparison, entry.comparison, entry.id);
  }

  /** Where the files of an entry not in the gallery go: before the first older entry's files. */
  private insertionPoint(id: string): number {
    const position = this.order.get(id)!;
    const index = this.gallery.findIndex((slot) => this.order.get(slot.entry.id)! < position);
    return index === -1 ? this.gallery.length : index;
  }
}
