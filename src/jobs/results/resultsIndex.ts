// The in-memory index of the results journal: every result by id, file, job, prompt-file line,
// comparison run and creation time, and the gallery's list (one item per saved file, newest first).
// A result's summary (what the lookups need) is read when the journal is opened; its details (the
// request with its prompt, references, balance) stay text until a result is asked for whole.
// A change reports the gallery splices it makes, so the studio posts only what changed. No vscode import.
import type { BatchTag, DetailField, GallerySlot, GallerySplice, HistoryEntry, ResultSummary } from './resultTypes';
import { matchesSummary, matchesWords, type ResultQuery, type SearchFields, searchFieldsOf } from './resultSearch';

export type { BatchTag, GallerySlot, GallerySplice, HistoryEntry, OutcomeCheck, ResultSummary } from './resultTypes';
type Details = Pick<HistoryEntry, DetailField>;

/** A result as the index holds it: its summary, and where its details are in the journal's text. */
interface Stored {
  summary: ResultSummary;
  /** The details are `source.slice(start, end)`: a journal line, or the whole file's text as read. */
  source: string;
  start: number;
  end: number;
  /** Position in the order of first writing. */
  order: number;
  /** The prompt in lower case, read from the details by the first search that needs it. */
  prompt?: string;
  /** What a search compares of the summary, in lower case, made by the first search. */
  fields?: SearchFields;
}

/** The gallery narrowed to the results that match a query: its slots, newest first, as of the call. */
export interface FilteredGallery {
  total: number;
  page(start: number, count: number): GallerySlot[];
}

export const batchKey = (tag: BatchTag) => `${tag.file}\0${tag.line}\0${tag.key}`;

/** A journal line of a result: its summary as JSON, a tab, its details as JSON. */
export function journalLine(entry: HistoryEntry): string {
  const { request, references, balanceAfter, ...summary } = entry;
  return `${JSON.stringify({ put: summary })}\t${JSON.stringify({ request, references, balanceAfter })}`;
}

function addTo<K>(map: Map<K, Stored[]>, key: K, stored: Stored): void {
  const list = map.get(key);
  if (list) list.push(stored);
  else map.set(key, [stored]);
}

export class ResultsIndex {
  /** By id, in the order results were first written (oldest first). */
  private readonly byId = new Map<string, Stored>();
  private readonly byFile = new Map<string, Stored>();
  private readonly byJob = new Map<string, Stored>();
  private readonly byBatch = new Map<string, Stored[]>();
  private readonly byComparison = new Map<string, Stored[]>();
  /** Oldest first by createdAt (ISO text in UTC sorts as time does). */
  private chronological: Stored[] = [];
  /** The gallery, newest result first, each result's files in their order: two parallel lists. */
  private slotResults: Stored[] = [];
  private slotFiles: string[] = [];

  /** Forgets everything (the journal is read again from the start). */
  clear(): void {
    for (const map of [this.byId, this.byFile, this.byJob, this.byBatch, this.byComparison]) map.clear();
    this.chronological = [];
    this.slotResults = [];
    this.slotFiles = [];
  }

  /**
   * Loads a journal's results at once: their summaries, and where their details are in `source`.
   * The lists are built once at the end.
   */
  load(summaries: readonly ResultSummary[], source: string, starts: readonly number[], ends: readonly number[]): void {
    summaries.forEach((summary, i) => this.index(summary, source, starts[i]!, ends[i]!));
    const all = [...this.byId.values()];
    this.chronological = isChronological(all) ? all : [...all].sort((a, b) => compareTime(a, b));
    for (let i = all.length - 1; i >= 0; i--) {
      const stored = all[i]!;
      for (const file of stored.summary.files) {
        this.slotResults.push(stored);
        this.slotFiles.push(file);
      }
    }
  }

  /** Adds or replaces the result with this id (as `line` holds it); returns the gallery splices it makes. */
  put(line: string): GallerySplice[] {
    const tab = line.indexOf('\t');
    const summary = (JSON.parse(line.slice(0, tab)) as { put: ResultSummary }).put;
    const before = this.byId.get(summary.id);
    const stored = this.index(summary, line, tab + 1, line.length);
    if (!before) this.insertChronologically(stored);
    const start = before?.summary.files.length ? this.slotResults.indexOf(before) : this.insertionPoint(stored);
    const deleteCount = before?.summary.files.length ?? 0;
    const files = summary.files;
    if (!deleteCount && !files.length) return [];
    this.slotResults.splice(start, deleteCount, ...files.map(() => stored));
    this.slotFiles.splice(start, deleteCount, ...files);
    const entry = this.entryOf(stored);
    return [{ start, deleteCount, items: files.map((file) => ({ entry, file })) }];
  }

  get size(): number {
    return this.byId.size;
  }

  /** Every result as a journal line, oldest first (what compaction writes). */
  *lines(): IterableIterator<string> {
    for (const { summary, source, start, end } of this.byId.values()) yield `${JSON.stringify({ put: summary })}\t${source.slice(start, end)}`;
  }

  /** Every result whole, oldest first by creation (the CSV export). */
  *entries(): IterableIterator<HistoryEntry> {
    for (const stored of this.chronological) yield this.entryOf(stored);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  find(id: string): HistoryEntry | undefined {
    const stored = this.byId.get(id);
    return stored && this.entryOf(stored);
  }

  /** The result that produced a file in the workspace. */
  findByFile(file: string): HistoryEntry | undefined {
    const stored = this.byFile.get(file);
    return stored && this.entryOf(stored);
  }

  /** The result of a job (settling a job a dead extension host left finds it by its in-flight record's id). */
  findByJob(jobId: string): HistoryEntry | undefined {
    const stored = this.byJob.get(jobId);
    return stored && this.entryOf(stored);
  }

  /** Results of one line of a prompt file (same file, line and request), oldest first. */
  findBatch(tag: BatchTag): ResultSummary[] {
    return (this.byBatch.get(batchKey(tag)) ?? []).map((s) => s.summary);
  }

  comparison(runId: string): HistoryEntry[] {
    return (this.byComparison.get(runId) ?? []).map((s) => this.entryOf(s));
  }

  /** Results created from `from` (included) to `to` (excluded), whatever became of their files. */
  createdBetween(from: Date, to: Date): ResultSummary[] {
    const [start, end] = [from.toISOString(), to.toISOString()];
    const first = this.firstAtOrAfter(start);
    const found: ResultSummary[] = [];
    for (let i = first; i < this.chronological.length && this.chronological[i]!.summary.createdAt < end; i++) found.push(this.chronological[i]!.summary);
    return found;
  }

  get galleryCount(): number {
    return this.slotFiles.length;
  }

  galleryPage(start: number, count: number): GallerySlot[] {
    const end = Math.min(this.slotFiles.length, start + count);
    const page: GallerySlot[] = [];
    for (let i = start; i < end; i++) page.push({ entry: this.entryOf(this.slotResults[i]!), file: this.slotFiles[i]! });
    return page;
  }

  /**
   * The gallery's slots of the results that match `query`, newest first. The summary is checked
   * first; the prompt (in the details' text) is read only for words, once per result, and kept.
   */
  filter(query: ResultQuery): FilteredGallery {
    const results: Stored[] = [];
    const files: string[] = [];
    let last: Stored | undefined;
    let lastMatched = false;
    for (let i = 0; i < this.slotResults.length; i++) {
      const stored = this.slotResults[i]!;
      // A result's files are next to each other: it is checked once.
      if (stored !== last) {
        last = stored;
        lastMatched =
          matchesSummary(stored.summary, query, (stored.fields ??= searchFieldsOf(stored.summary))) &&
          (!query.words.length || matchesWords(this.promptOf(stored), query));
      }
      if (lastMatched) {
        results.push(stored);
        files.push(this.slotFiles[i]!);
      }
    }
    return {
      total: files.length,
      page: (start, count) => results.slice(start, start + count).map((stored, i) => ({ entry: this.entryOf(stored), file: files[start + i]! })),
    };
  }

  private promptOf(stored: Stored): string {
    if (stored.prompt === undefined) {
      let prompt = '';
      try {
        prompt = (JSON.parse(stored.source.slice(stored.start, stored.end)) as Partial<Details>).request?.prompt ?? '';
      } catch {
        // A damaged line: no prompt to match.
      }
      stored.prompt = prompt.toLowerCase();
    }
    return stored.prompt;
  }

  private index(summary: ResultSummary, source: string, start: number, end: number): Stored {
    const before = this.byId.get(summary.id);
    for (const file of before?.summary.files ?? []) if (this.byFile.get(file) === before) this.byFile.delete(file);
    const stored: Stored = { summary, source, start, end, order: before?.order ?? this.byId.size };
    // A Map keeps the first insertion's place: a new state of a result stays where the result was.
    this.byId.set(summary.id, stored);
    for (const file of summary.files) this.byFile.set(file, stored);
    if (before?.summary.jobId !== undefined && this.byJob.get(before.summary.jobId) === before) this.byJob.delete(before.summary.jobId);
    if (summary.jobId !== undefined) this.byJob.set(summary.jobId, stored);
    this.replaceIn(this.byBatch, summary.batch && batchKey(summary.batch), before, stored);
    this.replaceIn(this.byComparison, summary.comparison, before, stored);
    const at = before ? this.chronological.indexOf(before) : -1;
    if (at >= 0) this.chronological[at] = stored;
    return stored;
  }

  private replaceIn(map: Map<string, Stored[]>, key: string | undefined, before: Stored | undefined, stored: Stored): void {
    if (key === undefined) return;
    const list = before && map.get(key);
    const at = list ? list.indexOf(before) : -1;
    if (at >= 0) list![at] = stored;
    else addTo(map, key, stored);
  }

  /** The whole result: its details are read from their text (once per call: pages are small). */
  private entryOf({ summary, source, start, end }: Stored): HistoryEntry {
    let parsed: Partial<Details> = {};
    try {
      parsed = JSON.parse(source.slice(start, end)) as Details;
    } catch {
      // A damaged line keeps what its summary says; its request is unknown.
    }
    return { ...summary, request: parsed.request ?? { model: summary.model, prompt: '' }, ...pick(parsed) };
  }

  private insertChronologically(stored: Stored): void {
    const list = this.chronological;
    // New results are the newest: the usual place is the end.
    if (!list.length || compareTime(list[list.length - 1]!, stored) <= 0) list.push(stored);
    else list.splice(this.firstAtOrAfter(stored.summary.createdAt), 0, stored);
  }

  private firstAtOrAfter(iso: string): number {
    let [low, high] = [0, this.chronological.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.chronological[mid]!.summary.createdAt < iso) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Where the files of a result not in the gallery go: before the first older result's files. */
  private insertionPoint(stored: Stored): number {
    for (let i = 0; i < this.slotResults.length; i++) if (this.slotResults[i]!.order < stored.order) return i;
    return this.slotResults.length;
  }
}

function pick(details: Partial<Details>): Partial<Details> {
  return {
    ...(details.references === undefined ? {} : { references: details.references }),
    ...(details.balanceAfter === undefined ? {} : { balanceAfter: details.balanceAfter }),
  };
}

const compareTime = (a: Stored, b: Stored) => (a.summary.createdAt < b.summary.createdAt ? -1 : a.summary.createdAt > b.summary.createdAt ? 1 : 0);

function isChronological(list: readonly Stored[]): boolean {
  for (let i = 1; i < list.length; i++) if (compareTime(list[i - 1]!, list[i]!) > 0) return false;
  return true;
}
