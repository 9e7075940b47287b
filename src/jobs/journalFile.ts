// An append-only file of JSON lines: read whole (a torn last line is cut off and reported, a bad
// line in the middle is skipped and reported), appended one synced line at a time, and rewritten
// atomically (a new file, synced, renamed over the old one). No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

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

const NEWLINE = 0x0a;

/**
 * Reads the journal; a missing file is an empty one. Each line is a JSON value, optionally
 * followed by a tab and more text (JSON never holds a raw tab, so the first one ends the value),
 * which stays unread text. A torn last line is removed from the file.
 */
export async function readJournal(file: string): Promise<JournalContents> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ...parseText(''), lines: 0, tornBytes: 0 };
    throw error;
  }
  let end = bytes.lastIndexOf(NEWLINE) + 1;
  let tornBytes = 0;
  if (end < bytes.length) {
    // Each append writes its line and newline together: a line without one was cut short,
    // unless it is whole (the newline alone was lost), and then it is kept.
    if (isWholeLine(bytes.toString('utf8', end))) {
      await fs.appendFile(file, '\n');
      bytes = Buffer.concat([bytes, Buffer.from('\n')]);
      end = bytes.length;
    } else {
      tornBytes = bytes.length - end;
      await fs.truncate(file, end);
    }
  }
  const contents = parseText(bytes.toString('utf8', 0, end));
  return { ...contents, lines: contents.heads.length + contents.badLines.length, tornBytes };
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
