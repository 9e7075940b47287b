// A disk that is really full: small tmpfs mounts (the tests run as root here). Without the rights to
// mount (not root, or a container without CAP_SYS_ADMIN) the test is skipped, and says why.
import { execFileSync } from 'node:child_process';
import { mkdir, statfs, writeFile } from 'node:fs/promises';
import * as path from 'node:path';

/** Mounts a tmpfs of `megabytes` at `dir`; the reason it cannot when it cannot. */
export function mountTmpfs(dir: string, megabytes: number): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (error instanceof Error ? error.message : String(error));
  }
}

/** Thrown by TmpfsMounts.mount where no tmpfs can be mounted: `orSkip` turns it into a skipped test. */
export class CannotMount extends Error {}

/** The tmpfs mounts of a suite: made by mount(), all unmounted by unmountAll() (in afterEach). */
export class TmpfsMounts {
  private readonly mounted: string[] = [];

  async mount(dir: string, megabytes: number): Promise<string> {
    await mkdir(dir, { recursive: true });
    const refused = mountTmpfs(dir, megabytes);
    if (refused) {
      console.log(`      skipped: cannot mount a tmpfs here (${refused}); run as root with the right to mount to test a full disk`);
      throw new CannotMount(refused);
    }
    this.mounted.push(dir);
    return dir;
  }

  unmountAll(): void {
    for (const dir of this.mounted.splice(0).reverse()) execFileSync('umount', ['-l', dir]);
  }
}

/** A mocha test body that is skipped (not failed) when its tmpfs cannot be mounted. */
export const orSkip = (test: () => Promise<void>) =>
  async function (this: Mocha.Context) {
    try {
      await test();
    } catch (error) {
      if (error instanceof CannotMount) this.skip();
      throw error;
    }
  };

/** Takes every free byte of the file system at `dir` with one file: the next write there fails with ENOSPC. */
export async function fillUp(dir: string): Promise<void> {
  const { bavail, bsize } = await statfs(dir);
  await writeFile(path.join(dir, 'filler'), Buffer.alloc(bavail * bsize));
}
