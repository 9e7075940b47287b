// An append-only file of JSON lines: read whole (a torn last line is cut off and reported, a bad
// line in the middle is skipped and reported), appended one synced line at a time, and rewritten
// atomically (a new file, synced, renamed over the old one). No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface JournalContents {
  /** The JSON value that starts each line. */
  heads: unknown[];
  /** What follows a tab after it, as text (read later, when needed); '' when nothing does. */
  tails: string[];
  /** Complete lines in the file (blank lines aside). */
  lines: number;
  /** 1-based numbers of lines that were not JSON (skipped). */
  badLines: number[];
  /** Bytes of an unfinished last line, cut off (a crash while appending). */
  tornBytes: number;
}

const NEWLINE = 0x0a;

/**
 * Reads the journal; a missing file is an empty one. Each line is a JSON value, optionally
 * followed by a tab and more text (JSON never holds a raw tab, so the first one ends the value).
 * A torn last line is removed from the file.
 */
export async function readJournal(file: string): Promise<JournalContents> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { heads: [], tails: [], lines: 0, badLines: [], tornBytes: 0 };
    throw error;
  }
  const end = bytes.lastIndexOf(NEWLINE) + 1;
  const complete = bytes.toString('utf8', 0, end).split('\n');
  complete.pop(); // after the last newline
  const tail = bytes.subarray(end);
  const contents = parseLines(complete);
  let tornBytes = 0;
  if (tail.length) {
    // Each append writes its line and newline together: a line without one was cut short,
    // unless it is whole (the newline alone was lost), and then it is kept.
    const last = parseLines([tail.toString('utf8')]);
    if (last.badLines.length) {
      tornBytes = tail.length;
      await fs.truncate(file, end);
    } else {
      contents.heads.push(...last.heads);
      contents.tails.push(...last.tails);
      await fs.appendFile(file, '\n');
    }
  }
  return { ...contents, lines: contents.heads.length + contents.badLines.length, tornBytes };
}

/** All heads in one parse when they are all valid (the usual case), else line by line. */
function parseLines(lines: string[]): { heads: unknown[]; tails: string[]; badLines: number[] } {
  const heads: string[] = [];
  const tails: string[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    const tab = line.indexOf('\t');
    heads.push(tab < 0 ? line : line.slice(0, tab));
    tails.push(tab < 0 ? '' : line.slice(tab + 1));
  }
  try {
    return { heads: JSON.parse(`[${heads.join(',')}]`) as unknown[], tails, badLines: [] };
  } catch {
    const parsed: { heads: unknown[]; tails: string[]; badLines: number[] } = { heads: [], tails: [], badLines: [] };
    let n = 0;
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        parsed.heads.push(JSON.parse(heads[n]!));
        parsed.tails.push(tails[n]!);
      } catch {
        parsed.badLines.push(i + 1);
      }
      n++;
    });
    return parsed;
  }
}

/** Appends lines, each written whole with its newline and synced before the next. */
export class JournalAppender {
  private handle?: fs.FileHandle;

  constructor(private readonly file: string) {}

  /** Appends one line of JSON text (without its newline). */
  async append(line: string): Promise<void> {
    this.handle ??= await openForAppend(this.file);
    await this.handle.write(`${line}\n`);
    await this.handle.datasync();
  }

  /** Replaces the file with these lines, atomically; later appends go to the new file. */
  async rewrite(lines: Iterable<string>): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`;
    const handle = await fs.open(temporary, 'w');
    try {
      let chunk = '';
      for (const line of lines) {
        chunk += `${line}\n`;
        if (chunk.length >= 1 << 20) {
          await handle.write(chunk);
          chunk = '';
        }
      }
      await handle.write(chunk);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await this.close();
    await fs.rename(temporary, this.file);
    await syncFolder(path.dirname(this.file));
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }
}

async function openForAppend(file: string): Promise<fs.FileHandle> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  return fs.open(file, 'a');
}

/** Makes a rename durable (POSIX); folders cannot be opened for syncing on Windows. */
async function syncFolder(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // not supported here: the rename itself is atomic
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
