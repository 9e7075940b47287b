// An append-only file of JSON lines: read whole (a torn last line is cut off and reported, a bad
// line in the middle is skipped and reported), appended one synced line at a time, and rewritten
// atomically (a new file, synced, renamed over the old one). No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface JournalContents {
  values: unknown[];
  /** Complete lines in the file (blank lines aside). */
  lines: number;
  /** 1-based numbers of lines that were not JSON (skipped). */
  badLines: number[];
  /** Bytes of an unfinished last line, cut off (a crash while appending). */
  tornBytes: number;
}

const NEWLINE = 0x0a;

/** Reads the journal; a missing file is an empty one. A torn last line is removed from the file. */
export async function readJournal(file: string): Promise<JournalContents> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { values: [], lines: 0, badLines: [], tornBytes: 0 };
    throw error;
  }
  const end = bytes.lastIndexOf(NEWLINE) + 1;
  const complete = bytes.toString('utf8', 0, end).split('\n');
  complete.pop(); // after the last newline
  const tail = bytes.subarray(end);
  const { values, badLines } = parseLines(complete);
  let tornBytes = 0;
  if (tail.length) {
    // Each append writes its line and newline together: a line without one was cut short,
    // unless it is whole (the newline alone was lost), and then it is kept.
    const whole = parseLine(tail.toString('utf8'));
    if (whole === undefined) {
      tornBytes = tail.length;
      await fs.truncate(file, end);
    } else {
      values.push(whole);
      await fs.appendFile(file, '\n');
    }
  }
  return { values, lines: values.length + badLines.length, badLines, tornBytes };
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** All lines in one parse when they are all valid (the usual case), else line by line. */
function parseLines(lines: string[]): { values: unknown[]; badLines: number[] } {
  const nonBlank = lines.filter((line) => line.trim() !== '');
  try {
    return { values: JSON.parse(`[${nonBlank.join(',')}]`) as unknown[], badLines: [] };
  } catch {
    const values: unknown[] = [];
    const badLines: number[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const value = parseLine(line);
      if (value === undefined) badLines.push(i + 1);
      else values.push(value);
    });
    return { values, badLines };
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

  /** Replaces the file with these values, atomically; later appends go to the new file. */
  async rewrite(values: Iterable<unknown>): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`;
    const handle = await fs.open(temporary, 'w');
    try {
      let chunk = '';
      for (const value of values) {
        chunk += `${JSON.stringify(value)}\n`;
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
