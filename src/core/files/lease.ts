// Every lock this extension takes across processes (a prompt file's run, the results journal) is a
// lease: a folder made atomically by proper-lockfile and refreshed while held. Its holder may stop
// between any two instructions (a debugger, another extension blocking the host, an overloaded
// machine); past LEASE_STALE_MS another process takes it over. So a holder never trusts that it
// still holds a lease: right before an act that only the holder may do, it calls `confirm()`, which
// looks at the lock on disk (the same folder, refreshed in time). The one rule for a lease found
// lost: it is marked lost, never thrown from a timer (proper-lockfile's default crashes the
// process), told once to `onLost`, and every later `confirm()` throws LeaseLostError. A lost lease
// is never released: its folder may be the new holder's. No vscode import.
import { promises as fs } from 'node:fs';
import * as lockfile from 'proper-lockfile';

/** A lease whose holder stopped refreshing it this long is taken over (it died, or hangs). */
export const LEASE_STALE_MS = 10_000;
/** How often a held lease is refreshed: a holder blocked for less than stale minus this keeps it. */
export const LEASE_UPDATE_MS = 2_000;

/** The lease is no longer this process's: another took it over, or it was not refreshed in time. */
export class LeaseLostError extends Error {
  readonly code = 'ELEASELOST';
  constructor(
    readonly lockPath: string,
    readonly why: string,
  ) {
    super(`the lock ${lockPath} is no longer held by this process: ${why}`);
    this.name = 'LeaseLostError';
  }
}

export interface Lease {
  /** Why the lease was lost, once it is known to be. */
  readonly lost: LeaseLostError | undefined;
  /**
   * Resolves when the lease is still this process's right now (its folder is the one it made, and was
   * refreshed within the stale time); otherwise marks it lost and rejects with LeaseLostError.
   */
  confirm(): Promise<void>;
  /** Gives the lease up; a lost one is left alone (its folder may be another holder's now). */
  release(): Promise<void>;
}

export interface LeaseOptions {
  /** The lock folder (proper-lockfile's lockfilePath). */
  lockPath: string;
  /** How long to wait for a held lease: 'no' fails at once with ELOCKED; 'briefly' waits past a stale holder's takeover. */
  wait: 'no' | 'briefly';
  /** Told once when the lease is found lost (the process goes on; later confirms throw). */
  onLost?: (error: LeaseLostError) => void;
  /** Tests shorten it; proper-lockfile takes no less than 2000 ms. */
  staleMs?: number;
}

/** Waits up to about 24 s: past a stale holder's takeover, which a dead holder allows after LEASE_STALE_MS. */
const BRIEF_WAIT = { retries: 400, factor: 1, minTimeout: 20, maxTimeout: 60, randomize: true };

/**
 * Takes the lease on `target` (a path that need not exist), or rejects: ELOCKED when another holds it
 * (after the wait), or the file system's own error.
 */
export async function takeLease(target: string, options: LeaseOptions): Promise<Lease> {
  const staleMs = Math.max(2000, options.staleMs ?? LEASE_STALE_MS);
  let lost: LeaseLostError | undefined;
  const markLost = (why: string): LeaseLostError => {
    if (!lost) {
      lost = new LeaseLostError(options.lockPath, why);
      options.onLost?.(lost);
    }
    return lost;
  };
  const release = await lockfile.lock(target, {
    realpath: false,
    lockfilePath: options.lockPath,
    stale: staleMs,
    update: Math.min(LEASE_UPDATE_MS, staleMs / 2),
    retries: options.wait === 'no' ? 0 : BRIEF_WAIT,
    onCompromised: (error) => void markLost(error.message),
  });
  // The folder this process made: a takeover removes it and makes another (another inode, birth time).
  const made = folderIdentity(await fs.stat(options.lockPath));
  return {
    get lost() {
      return lost;
    },
    async confirm() {
      if (lost) throw lost;
      let stat;
      try {
        stat = await fs.stat(options.lockPath);
      } catch (error) {
        throw markLost(`its folder is gone (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      }
      if (folderIdentity(stat) !== made) throw markLost('another process took it over');
      // Not refreshed within the stale time (this process was stopped): any other may take it now.
      if (stat.mtimeMs < Date.now() - staleMs) throw markLost(`it was not refreshed for ${Math.round((Date.now() - stat.mtimeMs) / 1000)} s`);
    },
    async release() {
      if (lost) return;
      try {
        const stat = await fs.stat(options.lockPath);
        if (folderIdentity(stat) !== made) {
          markLost('another process took it over');
          return;
        }
      } catch {
        markLost('its folder is gone');
        return;
      }
      await release().catch(() => undefined);
    },
  };
}

function folderIdentity(stat: { dev: number; ino: number; birthtimeMs: number }): string {
  return `${stat.dev}:${stat.ino}:${stat.birthtimeMs}`;
}
