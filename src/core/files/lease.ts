// Every lock this extension takes across processes (a prompt file's run, the results journal) is a
// lease: a folder made atomically by proper-lockfile and refreshed while held. Its holder may stop
// between any two instructions (a debugger, another extension blocking the host, an overloaded
// machine); past LEASE_STALE_MS another process takes it over. So a holder never trusts that it
// still holds a lease: right before an act that only the holder may do, it calls `confirm()`, which
// looks at the lock on disk: the same folder, refreshed in time, and the holder's token beside it.
// The token (`<lockPath>.holder`) is written before takeLease resolves: a new holder has written its
// own before it reads what the lease guards, and a folder made again with the same inode (a file
// system without birth times) cannot pass for the old one. The one rule for a lease found lost: it
// is marked lost, never thrown from a timer (proper-lockfile's default crashes the process), told
// once to `onLost`, and every later `confirm()` throws LeaseLostError. A lost lease is released only
// while its folder and token are still its own (it went stale with nobody taking it over); never
// another holder's. No vscode import.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as lockfile from 'proper-lockfile';
import { fileIdentity } from './fileIdentity';

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
   * Resolves when the lease is still this process's right now (its folder is the one it made, the
   * token beside it is its own, and it was refreshed within the stale time); otherwise marks it lost
   * and rejects with LeaseLostError.
   */
  confirm(): Promise<void>;
  /** Gives the lease up; a lost one only while its folder and token are still its own. */
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

/** The file beside a lock folder that names its holder (a folder must stay empty: proper-lockfile removes it with rmdir). */
export const holderFileOf = (lockPath: string) => `${lockPath}.holder`;

/**
 * Takes the lease on `target` (a path that need not exist), or rejects: ELOCKED when another holds it
 * (after the wait), or the file system's own error.
 */
export async function takeLease(target: string, options: LeaseOptions): Promise<Lease> {
  const { lockPath } = options;
  const staleMs = Math.max(2000, options.staleMs ?? LEASE_STALE_MS);
  let lost: LeaseLostError | undefined;
  const markLost = (why: string): LeaseLostError => {
    if (!lost) {
      lost = new LeaseLostError(lockPath, why);
      options.onLost?.(lost);
    }
    return lost;
  };
  const release = await lockfile.lock(target, {
    realpath: false,
    lockfilePath: lockPath,
    stale: staleMs,
    update: Math.min(LEASE_UPDATE_MS, staleMs / 2),
    retries: options.wait === 'no' ? 0 : BRIEF_WAIT,
    onCompromised: (error) => void markLost(error.message),
  });
  const token = `${process.pid}-${randomBytes(12).toString('hex')}`;
  let made: string;
  try {
    // The folder this process made: a takeover removes it and makes another (another inode, birth time).
    made = fileIdentity(await fs.stat(lockPath));
    // Written in place, not replaced atomically (a third of a lease's cost): only this holder compares
    // the file with its own token, and anything else there, torn or another holder's, means not ours.
    await fs.writeFile(holderFileOf(lockPath), token);
  } catch (error) {
    await release().catch(() => undefined);
    throw error;
  }
  /** Why the lock on disk is not this lease's, or undefined when it is (the staleness aside). */
  const notOurs = async (): Promise<{ why: string; stat?: undefined } | { why?: undefined; stat: { mtimeMs: number } }> => {
    let stat;
    try {
      stat = await fs.stat(lockPath);
    } catch (error) {
      return { why: `its folder is gone (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
    }
    if (fileIdentity(stat) !== made) return { why: 'another process took it over' };
    const holder = await fs.readFile(holderFileOf(lockPath), 'utf8').catch(() => undefined);
    if (holder !== token) return { why: 'another process took it over (the holder token is not this one)' };
    return { stat };
  };
  return {
    get lost() {
      return lost;
    },
    async confirm() {
      if (lost) throw lost;
      const { why, stat } = await notOurs();
      if (why !== undefined) throw markLost(why);
      // Not refreshed within the stale time (this process was stopped): any other may take it now.
      const age = Date.now() - stat.mtimeMs;
      if (age > staleMs) throw markLost(`it was not refreshed for ${Math.round(age / 1000)} s`);
    },
    async release() {
      const { why } = await notOurs();
      if (why !== undefined) {
        markLost(why);
        return;
      }
      // Still this lease's folder (also one found lost by its age): removing it ends the refresh.
      // proper-lockfile refuses when it gave the lease up itself (ERELEASED): the folder is removed here.
      await release().catch(() => fs.rmdir(lockPath).catch(() => undefined));
    },
  };
}
