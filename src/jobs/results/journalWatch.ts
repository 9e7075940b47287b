// Another process's change of a file shows without waiting for a read: its folder is watched, and a
// change of the file is told (after `settleMs`, once for changes that come together). Best effort:
// a folder that cannot be watched (none yet, or not watchable here) is read at the next read instead.
// No vscode import.
import { type FSWatcher, watch } from 'node:fs';
import * as path from 'node:path';

export function watchFile(file: string, changed: () => void, settleMs = 0): FSWatcher | undefined {
  const name = path.basename(file);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const watcher = watch(path.dirname(file), (_event, what) => {
      if (what !== name || timer) return;
      if (!settleMs) return changed();
      timer = setTimeout(() => {
        timer = undefined;
        changed();
      }, settleMs);
      timer.unref?.();
    });
    watcher.unref();
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return undefined;
  }
}
