// An append-only file of JSON lines that several processes share (windows without a folder, two
// windows of one workspace, a reloaded window beside its old extension host still flushing). Every
// change of the file (an append, a rewrite, cutting off a torn last line) happens under one lease
// (core/files/lease.ts), so a writer never cuts or replaces a line another one is writing. A holder
// may be stopped between any two instructions and lose its lease meanwhile, so the acts that could
// destroy another writer's lines are fenced: a rewrite renames over the journal only with its lease
// confirmed and the file unchanged since it was read, one compaction at a time (compactionClaim.ts);
// what another writer appended to the old file in the last instant before the rename is copied into
// the new one; and an append that finds it wrote into a file replaced meanwhile writes its line again
// into the file there now. A line written twice is harmless: the later state of a result wins.
// Readers follow the file by its identity and the offset they have read: a reader that finds another
// file there (a rewrite by another writer) reads it whole again. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type Lease, type LeaseLostError, takeLease } from '../../core/files/lease';
import { replaceFile } from '../../core/files/replaceFile';
import { fileIdentity } from '../../core/files/fileIdentity';
import { claimCompaction } from './compactionClaim';
import { completeLines, isWholeLine, type JournalContents, parseText, subjectOf } from './journalText';

export type { JournalContents } from './journalText';

/** Which file a reader has read, and how far: `identity` changes when the file is replaced. */
export interface JournalPosition {
  identity: string;
  offset: number;
}

/** Where a test stops a writer (SIGSTOP) to show what a pause there does. */
export type JournalPausePoint = 'compaction-written' | 'compaction-checked' | 'append-opened';

export interface SharedJournalOptions {
  /** Told once per lease found lost while held (another process took the lock over). */
  onLost?: (error: LeaseLostError) => void;
  /** The lease's stale time (tests shorten it; the lease module's own otherwise). */
  staleMs?: number;
  /** A test seam: awaited at each point, where the test stops this process. */
  pause?: (at: JournalPausePoint) => Promise<void>;
}

/** How a rewrite ended without replacing the file: it changed since it was read, or another process is compacting. */
export type RewriteRefusal = 'changed' | 'busy';

/** No file yet: whatever appears is read from its start. */
const NO_FILE = 'none';
const NEWLINE = 0x0a;
/** An append whose file keeps being replaced under it gives up after this many tries (it then fails, and is written again later). */
const APPEND_TRIES = 4;

class NotAsRead extends Error {}

export class SharedJournal {
  /** The lease of the task running under `exclusive` (a repair confirms it before cutting anything). */
  private held: Lease | undefined;
  /** Why the task running under `exclusive` has no lease (a read-only folder, a full disk): it reads, and writes nothing. */
  private refused: unknown;
  /** Lines of other writers that a rewrite could not copy into its new file yet (no lock to be had): copied at the next `exclusive`. */
  private uncopied: string[] = [];

  constructor(
    readonly file: string,
    private readonly options: SharedJournalOptions = {},
  ) {}

  /**
   * Runs `task` holding the journal's lease, across processes; `task` confirms it right before an act
   * only the holder may do. Where no lock can be made (a read-only folder, a full disk) it runs
   * without one (`undefined`), so the journal can still be read: then nothing is mended, and a write
   * fails with the reason no lock could be made.
   */
  async exclusive<T>(task: (lease: Lease | undefined) => Promise<T>): Promise<T> {
    await fs.mkdir(path.dirname(this.file), { recursive: true }).catch(() => undefined);
    let lease: Lease | undefined;
    let refused: unknown;
    try {
      lease = await this.takeLease();
    } catch (error) {
      if (!isUnwritable(error)) throw error;
      refused = error;
    }
    const outer = { held: this.held, refused: this.refused };
    [this.held, this.refused] = [lease, refused];
    try {
      if (lease && this.uncopied.length) await this.copyUncopied().catch(() => undefined);
      return await task(lease);
    } finally {
      [this.held, this.refused] = [outer.held, outer.refused];
      await lease?.release().catch(() => undefined);
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
      const identity = fileIdentity(await opened.stat());
      let bytes: Buffer = await opened.readFile();
      const { end, tornBytes, fixed } = repair ? await this.repairTail(opened, bytes, 0) : { end: bytes.lastIndexOf(NEWLINE) + 1, tornBytes: 0, fixed: bytes };
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
      const identity = fileIdentity(stat);
      const from = position.identity === NO_FILE ? 0 : position.offset;
      if ((position.identity !== NO_FILE && identity !== position.identity) || stat.size < from) return 'replaced';
      if (stat.size === from) return { lines: [], position: { identity, offset: from }, tornBytes: 0 };
      const got = await bytesAfter(opened, from, stat.size);
      const { end, tornBytes, fixed } = repair ? await this.repairTail(opened, got, from) : { end: got.lastIndexOf(NEWLINE) + 1, tornBytes: 0, fixed: got };
      return { lines: completeLines(fixed.toString('utf8', 0, end)), position: { identity, offset: from + end }, tornBytes };
    } finally {
      await opened.close();
    }
  }

  /**
   * Appends one line of JSON text (without its newline), written whole and synced; under the lock.
   * Returns the position after it. When the file it wrote into was replaced meanwhile (a rewrite by a
   * writer that took the lock over while this one was stopped), the line is written again into the
   * file there now, and the position returned is the first file's: the reader then reads the new one whole.
   */
  async append(line: string): Promise<JournalPosition> {
    if (this.refused !== undefined) throw this.refused as Error;
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    let first: JournalPosition | undefined;
    for (let tries = 1; ; tries++) {
      const written = await this.appendOnce(line, tries === 1);
      if (await this.isAtPath(written.identity)) return first ?? written;
      first ??= written;
      if (tries === APPEND_TRIES) throw new Error(`the journal ${this.file} was replaced while each of ${tries} appends was written`);
    }
  }

  /**
   * Replaces the file with these lines, atomically (a new file, synced, renamed over it; removed when
   * that fails); under the lease, with `read` the position the lines were made from (all of the file).
   * Refused ('changed') when the file is no longer that one, whole and no longer, and ('busy') while
   * another live process compacts; rejects with LeaseLostError when the lease is lost. Each of these
   * leaves the file as it is. Returns the position after the new lines.
   */
  async rewrite(lines: Iterable<string>, { lease, read }: { lease: Lease | undefined; read: JournalPosition }): Promise<JournalPosition | RewriteRefusal> {
    if (this.refused !== undefined) throw this.refused as Error;
    await lease?.confirm();
    const unclaim = await claimCompaction(this.file);
    if (!unclaim) return 'busy';
    // Kept open across the rename: what another writer appends to it in the last instant is copied from it.
    let old: fs.FileHandle | undefined;
    try {
      old = await openExisting(this.file, false);
      if (!sameAsRead(old && (await old.stat()), read)) return 'changed';
      const written = await replaceFile(this.file, (handle) => writeLines(handle, lines), {
        durable: true,
        beforeRename: async () => {
          await this.options.pause?.('compaction-written');
          await lease?.confirm();
          if (!sameAsRead(await fs.stat(this.file).catch(() => undefined), read)) throw new NotAsRead();
          await this.options.pause?.('compaction-checked');
        },
      });
      if (old) await this.copyLate(old, read.offset, written, lease);
      return written;
    } catch (error) {
      if (error instanceof NotAsRead) return 'changed';
      throw error;
    } finally {
      await old?.close();
      await unclaim();
    }
  }

  private takeLease(): Promise<Lease> {
    return takeLease(this.file, {
      lockPath: `${this.file}.lock`,
      wait: 'briefly',
      ...(this.options.onLost ? { onLost: this.options.onLost } : {}),
      ...(this.options.staleMs !== undefined ? { staleMs: this.options.staleMs } : {}),
    });
  }

  private async appendOnce(line: string, mayPause: boolean): Promise<JournalPosition> {
    // Opened for each append: a rewrite by another writer replaces the file, and a kept handle would write into the old one.
    const handle = await fs.open(this.file, 'a');
    try {
      if (mayPause) await this.options.pause?.('append-opened');
      // writeFile, not write: a disk that fills cuts a write short without an error; writeFile carries on until it fails.
      await handle.writeFile(`${line}\n`);
      await handle.datasync();
      const stat = await handle.stat();
      return { identity: fileIdentity(stat), offset: stat.size };
    } finally {
      await handle.close();
    }
  }

  private async isAtPath(identity: string): Promise<boolean> {
    const stat = await fs.stat(this.file).catch(() => undefined);
    return stat !== undefined && fileIdentity(stat) === identity;
  }

  /**
   * After a rewrite's rename: the lines another writer appended to the old file past `from` go into
   * the new one, under the lease (taken again when it was lost: the lines' order needs it). A result
   * written into the new file since the rename is newer there: its older line is not copied.
   */
  private async copyLate(old: fs.FileHandle, from: number, written: JournalPosition, lease: Lease | undefined): Promise<void> {
    const late = completeLines((await bytesAfter(old, from, (await old.stat()).size)).toString('utf8'));
    if (!late.length) return;
    let again: Lease | undefined;
    try {
      if (
        lease &&
        !(await lease.confirm().then(
          () => true,
          () => false,
        ))
      )
        again = await this.takeLease();
    } catch {
      // No lock to be had now: copied at the next `exclusive`.
      this.uncopied.push(...late);
      return;
    }
    let copied = 0;
    try {
      const since = await this.readAfter(written, false);
      const newer = new Set(since === 'replaced' ? [] : since.lines.map(subjectOf));
      for (const line of late) {
        if (!newer.has(subjectOf(line))) await this.append(line);
        copied++;
      }
    } catch (error) {
      // Those not copied yet (a full disk) are copied at the next `exclusive`; the rename stands.
      this.uncopied.push(...late.slice(copied));
      throw error;
    } finally {
      await again?.release().catch(() => undefined);
    }
  }

  /** Lines a rewrite could not copy when it ran: each one not in the file yet is appended (under the lease); those that fail wait for the next time. */
  private async copyUncopied(): Promise<void> {
    const present = new Set(completeLines((await this.read(false)).text));
    while (this.uncopied.length) {
      if (!present.has(this.uncopied[0]!)) await this.append(this.uncopied[0]!);
      this.uncopied.shift();
    }
  }

  /**
   * A last line without its newline, found under the lock, was cut short by a crash: it is cut off,
   * unless it is whole (only the newline was lost), and then it gets one. `bytes` start at `from`.
   * Nothing is cut without the lease, or once it is lost: the line may be another writer's, being written.
   */
  private async repairTail(handle: fs.FileHandle, bytes: Buffer, from: number): Promise<{ end: number; tornBytes: number; fixed: Buffer }> {
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    const asRead = { end, tornBytes: 0, fixed: bytes };
    if (end === bytes.length || !this.held) return asRead;
    try {
      await this.held.confirm();
      if (isWholeLine(bytes.toString('utf8', end))) {
        await handle.write('\n', from + bytes.length);
        return { end: bytes.length + 1, tornBytes: 0, fixed: Buffer.concat([bytes, Buffer.from('\n')]) };
      }
      await handle.truncate(from + end);
    } catch {
      // Opened read-only, or the lease is lost: the tail stays unread, and is mended by a writer.
      return asRead;
    }
    return { end, tornBytes: bytes.length - end, fixed: bytes };
  }
}

/** Whether the file found (its stat, absent when there is none) is the one read, whole and no longer. */
function sameAsRead(stat: { dev: number; ino: number; birthtimeMs: number; size: number } | undefined, read: JournalPosition): boolean {
  if (!stat) return read.identity === NO_FILE;
  return fileIdentity(stat) === read.identity && stat.size === read.offset;
}

/** writeFile, not write: it carries on after a short write (a disk that fills) until it fails with ENOSPC. */
async function writeLines(handle: fs.FileHandle, lines: Iterable<string>): Promise<JournalPosition> {
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
  return { identity: fileIdentity(stat), offset: stat.size };
}

async function bytesAfter(handle: fs.FileHandle, from: number, size: number): Promise<Buffer> {
  if (size <= from) return Buffer.alloc(0);
  const bytes = Buffer.alloc(size - from);
  const { bytesRead } = await handle.read(bytes, 0, bytes.length, from);
  return bytes.subarray(0, bytesRead);
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

/** Errors of a folder where nothing can be written now (no lock can be made there either). */
function isUnwritable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOENT' || code === 'ENOSPC' || code === 'EDQUOT';
}
