// The state of each line of a prompt file as every window that can claim the file sees it: a JSON
// Lines file beside the claim (`run-<hash>.lines.jsonl` in the global storage), keyed like the claim
// by the file's real path. A workspace's results journal and in-flight records are its own; this is
// what a window of another workspace needs before it sends a line: that the line is in flight in
// another run (its job, process and window), or ended there (done with its files, paid without its
// images, or not charged). Appended, one record per change, each synced before the request it guards
// goes; a newline before and after each record, so that a record cut by a crash stands on a line of
// its own, which readers skip. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isRecord } from '../../core/common/json';
import { fileIdentity } from '../../core/files/fileIdentity';
import { replaceFileWith, syncFolder } from '../../core/files/replaceFile';
import { processAlive } from '../inFlight';

export type LineState = 'in-flight' | 'done' | 'paid-without-images' | 'not-charged';

/** A line of the file: its number and its request's key (an edited line is a new line). */
export interface MarkedLine {
  line: number;
  key: string;
}

export interface LineMark extends MarkedLine {
  state: LineState;
  /** The run that wrote it (a random id per run), its process and window. */
  run: string;
  pid: number;
  window: string;
  at: string;
  /** In flight: the job's staging id (its images wait as `<job>-<index>` in that window's recovery folder). */
  job?: string;
  /** Done: its images (in that workspace, or in the recovery folder). */
  files?: string[];
  /** Paid without images: it may have been charged (true), or was (absent). */
  outcomeUnknown?: boolean;
  /** Paid without images: why. */
  error?: string;
}

export type MarkChange = Pick<LineMark, 'state'> & Partial<Pick<LineMark, 'job' | 'files' | 'outcomeUnknown' | 'error'>>;

/** Who writes: one run. */
export interface MarkingRun {
  id: string;
  window: string;
  pid?: number;
}

/** A request in flight longer than this has ended or hangs, and its process id may be another's now. */
export const LIVE_IN_FLIGHT_MS = 60 * 60_000;

/** Rewritten with the newest mark of each line once larger than this. */
const COMPACT_ABOVE_BYTES = 256 * 1024;

/** The runs of this process that are going on now (a mark of this process by another run is of a run that ended). */
const runsHere = new Set<string>();

export const markKey = (line: MarkedLine) => `${line.line}\0${line.key}`;

export const marksFileOf = (claimBase: string) => `${claimBase}.lines.jsonl`;

export class LineMarks {
  private cache?: { identity: string; offset: number; marks: Map<string, LineMark> };

  constructor(
    readonly file: string,
    readonly run: MarkingRun,
  ) {}

  /** While the run goes on: its marks in flight are live. */
  begin(): void {
    runsHere.add(this.run.id);
  }

  end(): void {
    runsHere.delete(this.run.id);
  }

  /** The newest mark of each line (markKey), read on from where the last read stopped. */
  async read(): Promise<Map<string, LineMark>> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw error;
    }
    try {
      const stat = await handle.stat();
      const identity = fileIdentity(stat);
      // Replaced by a compaction (another file), or cut: read from the start.
      if (!this.cache || this.cache.identity !== identity || stat.size < this.cache.offset) this.cache = { identity, offset: 0, marks: new Map() };
      const cache = this.cache;
      if (stat.size > cache.offset) {
        const bytes = Buffer.alloc(stat.size - cache.offset);
        const { bytesRead } = await handle.read(bytes, 0, bytes.length, cache.offset);
        // Up to the last whole record: one being written is read next time.
        const end = bytes.subarray(0, bytesRead).lastIndexOf(0x0a);
        if (end >= 0) {
          for (const text of bytes.subarray(0, end).toString('utf8').split('\n')) {
            const mark = parseMark(text);
            if (mark) cache.marks.set(markKey(mark), mark);
          }
          cache.offset += end + 1;
        }
      }
      return new Map(cache.marks);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /** Appends this run's mark of a line and syncs it (rejects when it cannot: the line must then not be sent). */
  async write(line: MarkedLine, change: MarkChange): Promise<LineMark> {
    const mark: LineMark = {
      line: line.line,
      key: line.key,
      ...change,
      run: this.run.id,
      pid: this.run.pid ?? process.pid,
      window: this.run.window,
      at: new Date().toISOString(),
    };
    const text = Buffer.from(`\n${JSON.stringify(mark)}\n`);
    const handle = await fs.open(this.file, 'a');
    try {
      await handle.writeFile(text);
      await handle.datasync();
      // Made by this write: its name in the folder must survive a power cut too.
      if ((await handle.stat()).size === text.length) await syncFolder(path.dirname(this.file));
    } finally {
      await handle.close().catch(() => undefined);
    }
    return mark;
  }

  /**
   * Keeps the file small: once it is large, rewrites it with the newest mark of each line of `lines`
   * (and every line still in flight). Only the claim's holder calls it, and only when no run that
   * could still append (one with a line live in flight) is left: a mark appended meanwhile by a run
   * without one is of a line it cannot send (its claim is lost), so nothing that holds a line is lost.
   */
  async compact(lines: readonly MarkedLine[]): Promise<boolean> {
    const size = await fs.stat(this.file).then(
      (s) => s.size,
      () => 0,
    );
    if (size <= COMPACT_ABOVE_BYTES) return false;
    const marks = await this.read();
    if ([...marks.values()].some((m) => isLive(m, this.run.id))) return false;
    const wanted = new Set(lines.map(markKey));
    const kept = [...marks.values()].filter((m) => wanted.has(markKey(m)) || m.state === 'in-flight');
    await replaceFileWith(this.file, kept.map((m) => `\n${JSON.stringify(m)}\n`).join(''), { durable: true });
    return true;
  }
}

/**
 * Whether a mark in flight is of another run that may still be going on: its process lives (this
 * process: the run is not over), and it is not older than LIVE_IN_FLIGHT_MS. A run that lost its
 * claim while paused still ends its requests in flight and records them; one whose process died
 * left a line that may have been charged.
 */
export function isLive(mark: LineMark, ownRun: string, now = Date.now()): boolean {
  if (mark.state !== 'in-flight' || mark.run === ownRun) return false;
  if (now - Date.parse(mark.at) > LIVE_IN_FLIGHT_MS) return false;
  if (mark.pid === process.pid) return runsHere.has(mark.run);
  return processAlive(mark.pid);
}

const STATES: readonly string[] = ['in-flight', 'done', 'paid-without-images', 'not-charged'] satisfies LineState[];

/** A record, or undefined for a blank line, one cut by a crash, or one not of this form. */
function parseMark(text: string): LineMark | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { line, key, state, run, pid, window, at } = value;
  if (typeof line !== 'number' || typeof key !== 'string' || typeof state !== 'string' || !STATES.includes(state)) return undefined;
  if (typeof run !== 'string' || typeof pid !== 'number' || typeof window !== 'string' || typeof at !== 'string') return undefined;
  const files = Array.isArray(value.files) ? value.files.filter((f): f is string => typeof f === 'string') : undefined;
  return {
    line,
    key,
    state: state as LineState,
    run,
    pid,
    window,
    at,
    ...(typeof value.job === 'string' ? { job: value.job } : {}),
    ...(files ? { files } : {}),
    ...(value.outcomeUnknown === true ? { outcomeUnknown: true } : {}),
    ...(typeof value.error === 'string' ? { error: value.error } : {}),
  };
}
