// An append-only file of JSON lines that several processes share (windows without a folder, two
// windows of one workspace, a reloaded window beside its old extension host still flushing). Every
// change of the file (an append, a rewrite, cutting off a torn last line) happens under one lock
// taken with proper-lockfile (a folder beside the file, made atomically, taken over once stale), so a
// writer never cuts or replaces a line another one is writing. Readers follow the file by its
// identity and the offset they have read: a reader that finds another file there (a rewrite by
// another writer) reads it whole again. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { replaceFile } from '../../core/files/replaceFile';

export interface JournalContents {
  /** The JSON value that starts each line. */
  heads: unknown[];
  /** The file's text: what follows each head's tab is `text.slice(tailStarts[i], tailEnds[i])` (empty without a tab). */
  text: string;
  tailStarts: number[];
  tailEnds: number[];
  /** Complete lines in the file (blank lines aside). */
  lines: number;
  /** 1-based numbers of lines that were not JSON (skipped). */
  badLines: number[];
  /** Bytes of an unfinished last line, cut off (a crash while appending). */
  tornBytes: number;
}

/** Which file a reader has read, and how far: `identity` changes when the file is replaced. */
export interface JournalPosition {
  identity: string;
  offset: number;
}

/** No file yet: whatever appears is read from its start. */
const NO_FILE = 'none';
const NEWLINE = 0x0a;

/** How long a lock whose holder stopped refreshing it counts as held (its holder died or hangs). */
const STALE_MS = 10_000;

export class SharedJournal {
  constructor(
    readonly file: string,
    private readonly onCompromised: (error: Error) => void = () => undefined,
  ) {}

  /**
   * Runs `task` holding the journal's lock, across processes. A folder where no lock can be made
   * (read-only) runs it without one: nothing can be written there anyway.
   */
  async exclusive<T>(task: () => Promise<T>): Promise<T> {
    await fs.mkdir(path.dirname(this.file), { recursive: true }).catch(() => undefined);
    let release: (() => Promise<void>) | undefined;
    try {
      release = await lockfile.lock(this.file, {
        realpath: false,
        lockfilePath: `${this.file}.lock`,
        stale: STALE_MS,
        // Waits past a stale lock's takeover: a holder that died frees it after STALE_MS.
        retries: { retries: 400, factor: 1, minTimeout: 20, maxTimeout: 60, randomize: true },
        onCompromised: this.onCompromised,
      });
    } catch (error) {
      if (!isUnwritable(error)) throw error;
    }
    try {
      return await task();
    } finally {
      await release?.().catch(() => undefined);
    }
  }

  /**
   * Reads the whole journal; a missing file is an empty one. Each line is a JSON value, optionally
   * followed by a tab and more text (JSON never holds a raw tab, so the first one ends the value),
   * which stays unread text. With `repair` (only under the lock) a torn last line is cut off, or
   * given its newline when it is whole; without it, it is left for its writer and not read.
   */
  async read(repair: boolean): Promise<JournalContents & { position: JournalPosition }> {
    const opened = await openExisting(this.file, repair);
    if (!opened) return { ...parseText(''), lines: 0, tornBytes: 0, position: { identity: NO_FILE, offset: 0 } };
    try {
      const identity = identityOf(await opened.stat());
      let bytes: Buffer = await opened.readFile();
      const { end, tornBytes, fixed } = repair ? await repairTail(opened, bytes, 0) : { end: bytes.lastIndexOf(NEWLINE) + 1, tornBytes: 0, fixed: bytes };
      bytes = fixed;
      const contents = parseText(bytes.toString('utf8', 0, end));
      return { ...contents, lines: contents.heads.length + contents.badLines.length, tornBytes, position: { identity, offset: end } };
    } finally {
      await opened.close();
    }
  }

  /**
   * The complete lines written after `position`, and the position after them; 'replaced' when the
   * file is not the one read before (rewritten by another writer, or cleared by hand). With `repair`
   * (under the lock) a torn last line is mended as `read` does, and `tornBytes` says how much was cut.
   */
  async readAfter(position: JournalPosition, repair: boolean): Promise<{ lines: string[]; position: JournalPosition; tornBytes: number } | 'replaced'> {
    const opened = await openExisting(this.file, repair);
    if (!opened) return position.identity === NO_FILE ? { lines: [], position, tornBytes: 0 } : 'replaced';
    try {
      const stat = await opened.stat();
      const identity = identityOf(stat);
      const from = position.identity === NO_FILE ? 0 : position.offset;
      if ((position.identity !== NO_FILE && identity !== position.identity) || stat.size < from) return 'replaced';
      if (stat.size === from) return { lines: [], position: { identity, offset: from }, tornBytes: 0 };
      const bytes = Buffer.alloc(stat.size - from);
      const { bytesRead } = await opened.read(bytes, 0, bytes.length, from);
      const got = bytes.subarray(0, bytesRead);
      const { end, tornBytes, fixed } = repair ? await repairTail(opened, got, from) : { end: got.lastIndexOf(NEWLINE) + 1, tornBytes: 0, fixed: got };
      const lines = fixed
        .toString('utf8', 0, end)
        .split('\n')
        .filter((line) => line.trim() !== '');
      return { lines, position: { identity, offset: from + end }, tornBytes };
    } finally {
      await opened.close();
    }
  }

  /** Appends one line of JSON text (without its newline), written whole and synced; under the lock. Returns the position after it. */
  async append(line: string): Promise<JournalPosition> {
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    // Opened for each append: a rewrite by another writer replaces the file, and a kept handle would write into the old one.
    const handle = await fs.open(this.file, 'a');
    try {
      // writeFile, not write: a disk that fills cuts a write short without an error; writeFile carries on until it fails.
      await handle.writeFile(`${line}\n`);
      await handle.datasync();
      const stat = await handle.stat();
      return { identity: identityOf(stat), offset: stat.size };
    } finally {
      await handle.close();
    }
  }

  /** Replaces the file with these lines, atomically (a new file, synced, renamed over it; removed when that fails); under the lock. */
  rewrite(lines: Iterable<string>): Promise<JournalPosition> {
    return replaceFile(
      this.file,
      async (handle) => {
        // writeFile, not write: it carries on after a short write (a disk that fills) until it fails with ENOSPC.
        let chunk = '';
        for (const line of lines) {
          chunk += `${line}\n`;
          if (chunk.length >= 1 << 20) {
            await handle.writeFile(chunk);
            chunk = '';
          }
        }
        await handle.writeFile(chunk);
        const stat = await handle.stat();
        return { identity: identityOf(stat), offset: stat.size };
      },
      { durable: true },
    );
  }
}

/** A file is the same file while its device, inode and birth time are (an inode number alone may come back). */
function identityOf(stat: { dev: number; ino: number; birthtimeMs: number }): string {
  return `${stat.dev}:${stat.ino}:${stat.birthtimeMs}`;
}

async function openExisting(file: string, writable: boolean): Promise<fs.FileHandle | undefined> {
  try {
    return await fs.open(file, writable ? 'r+' : 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // A read-only file or folder: read it, mend nothing.
    if (writable && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')) return openExisting(file, false);
    throw error;
  }
}

/**
 * A last line without its newline, found under the lock, was cut short by a crash: it is cut off,
 * unless it is whole (only the newline was lost), and then it gets one. `bytes` start at `from`.
 */
async function repairTail(handle: fs.FileHandle, bytes: Buffer, from: number): Promise<{ end: number; tornBytes: number; fixed: Buffer }> {
  const end = bytes.lastIndexOf(NEWLINE) + 1;
  if (end === bytes.length) return { end, tornBytes: 0, fixed: bytes };
  try {
    if (isWholeLine(bytes.toString('utf8', end))) {
      await handle.write('\n', from + bytes.length);
      return { end: bytes.length + 1, tornBytes: 0, fixed: Buffer.concat([bytes, Buffer.from('\n')]) };
    }
    await handle.truncate(from + end);
  } catch {
    // Opened read-only: the tail stays unread, and is mended by a writer.
    return { end, tornBytes: 0, fixed: bytes };
  }
  return { end, tornBytes: bytes.length - end, fixed: bytes };
}

type Parsed = Omit<JournalContents, 'lines' | 'tornBytes'>;

/** Whether a line without its newline holds all it should: its head and the tail after its tab are JSON. */
function isWholeLine(line: string): boolean {
  const tab = line.indexOf('\t');
  try {
    JSON.parse(tab < 0 ? line : line.slice(0, tab));
    if (tab >= 0) JSON.parse(line.slice(tab + 1));
    return true;
  } catch {
    return false;
  }
}

/**
 * The usual case in one parse and no object per line: every line is a head, a tab and its tail;
 * the heads become one JSON array (the tails cut out by one regular expression) and the tails are
 * kept as positions. Anything else (a blank line, a line without a tab, a bad line) goes line by line.
 */
function parseText(text: string): Parsed {
  const tailStarts: number[] = [];
  const tailEnds: number[] = [];
  for (let at = 0; at < text.length;) {
    const newline = text.indexOf('\n', at);
    const tab = text.indexOf('\t', at);
    if (tab < 0 || tab > newline) return lineByLine(text);
    tailStarts.push(tab + 1);
    tailEnds.push(newline);
    at = newline + 1;
  }
  try {
    const heads = JSON.parse(`[${text.replace(/\t[^\n]*\n/g, ',').slice(0, -1)}]`) as unknown[];
    if (heads.length === tailStarts.length) return { heads, text, tailStarts, tailEnds, badLines: [] };
  } catch {
    // a bad line: found line by line
  }
  return lineByLine(text);
}

function lineByLine(text: string): Parsed {
  const parsed: Parsed = { heads: [], text, tailStarts: [], tailEnds: [], badLines: [] };
  let at = 0;
  text.split('\n').forEach((line, i, all) => {
    const start = at;
    at += line.length + 1;
    if (i === all.length - 1 || line.trim() === '') return; // after the last newline; blank lines
    const tab = line.indexOf('\t');
    try {
      parsed.heads.push(JSON.parse(tab < 0 ? line : line.slice(0, tab)));
      parsed.tailStarts.push(tab < 0 ? start + line.length : start + tab + 1);
      parsed.tailEnds.push(start + line.length);
    } catch {
      parsed.badLines.push(i + 1);
    }
  });
  return parsed;
}

/** Errors of a folder where nothing can be written (no lock can be made there either). */
function isUnwritable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOENT';
}
