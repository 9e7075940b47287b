// Replacing a file whole: a temporary file beside it, renamed over it, so that a reader finds the
// old file or the new one, never a part of either. On any failure (a full disk, a folder made
// read-only, a refused rename) the temporary file is removed: nothing `.tmp` is left behind.
//
// Not write-file-atomic: it writes with one fs.write and ignores the count written, so on a disk
// that fills during the write it syncs and renames a cut file over the good one without an error
// (seen with 7.0.1, the last for Node 20, and the same code in 8.0.0, on a full tmpfs). Pure: no vscode import.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface ReplaceOptions {
  /**
   * Synced before the rename, and the folder after it, so that the new file survives a power cut:
   * for records that money depends on. Thumbnails and the like need not be.
   */
  durable: boolean;
  /**
   * The last check before the rename (the results journal confirms its lease and that the file is
   * still the one it read): when it throws, nothing is replaced and the temporary file is removed.
   */
  beforeRename?: () => Promise<void>;
}

/**
 * Replaces `file` with what `write` writes into the temporary file's handle. `write` must use
 * `handle.writeFile` (it carries on after a short write until the disk refuses with an error);
 * `handle.write` returns a short count without one. Returns what `write` returned.
 */
export async function replaceFile<T>(file: string, write: (handle: fs.FileHandle) => Promise<T>, { durable, beforeRename }: ReplaceOptions): Promise<T> {
  const temporary = temporaryName(file);
  let handle: fs.FileHandle | undefined;
  try {
    // The new file keeps the permissions of the one it replaces (a journal kept 0600 stays 0600).
    const mode = await fs.stat(file).then(
      (s) => s.mode & 0o777,
      () => undefined,
    );
    handle = await fs.open(temporary, 'wx', mode ?? 0o666);
    if (mode !== undefined && process.platform !== 'win32') await handle.chmod(mode);
    const result = await write(handle);
    if (durable) await handle.datasync();
    const closing = handle;
    handle = undefined;
    await closing.close();
    await beforeRename?.();
    await fs.rename(temporary, file);
    if (durable) await syncFolder(path.dirname(file));
    return result;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await fs.rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** Replaces `file` with `data` (see replaceFile). */
export function replaceFileWith(file: string, data: string | Uint8Array, options: ReplaceOptions): Promise<void> {
  return replaceFile(file, (handle) => handle.writeFile(data), options);
}

/** Beside the file (a rename does not cross file systems), unique per process and call. */
function temporaryName(file: string): string {
  return `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** Makes a rename durable (POSIX); a folder cannot be opened for syncing on Windows, where it is skipped. */
export async function syncFolder(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported here: the rename itself is atomic.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
