// A real failing fsync, without mocking the file system: the process's descriptor of a file is
// pointed at /dev/null, where fsync fails with EINVAL as a failing disk's would. The bytes written
// before stay in the file. Linux only (/proc/self/fd); callers skip elsewhere. A failing close is
// made the same way: the descriptor is gone when its owner closes it.
import * as assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import type { StagingSink } from '../../../src/core/files/imageStore';

const FD_DIR = '/proc/self/fd';

export const canFailSync = existsSync(FD_DIR) && existsSync('/dev/null');

/** From now on, fsync of `file`'s open descriptor fails (and further writes go nowhere). */
export function makeSyncFail(file: string): void {
  const target = realpathSync(file);
  const fd = readdirSync(FD_DIR)
    .map(Number)
    .find((n) => {
      try {
        return readlinkSync(`${FD_DIR}/${n}`) === target;
      } catch {
        return false;
      }
    });
  assert.ok(fd !== undefined, `no open descriptor for ${file}`);
  closeSync(fd);
  // The lowest free number is the one just closed: the owner's handle now writes to /dev/null.
  const replacement = openSync('/dev/null', 'w');
  assert.equal(replacement, fd, 'another file took the descriptor number meanwhile');
}

/**
 * From now on, the close of every file that `sink` stages fails after its fsync succeeded: the
 * descriptor is closed underneath just before the owner's close, which then fails with EBADF from the
 * kernel (a close that reports a lost write, as NFS does, cannot be made on a local disk).
 */
export function makeCloseFail(sink: Pick<StagingSink, 'createFile'>): void {
  const create = sink.createFile.bind(sink);
  sink.createFile = async (name) => {
    const created = await create(name);
    const { handle } = created;
    const close = handle.close.bind(handle);
    handle.close = () => {
      closeSync(handle.fd);
      return close();
    };
    return created;
  };
}
