// One run per prompt file, across windows and processes: a run of Generate Images from File claims
// its file for the whole run (planning, confirmation and every line) with a lease (core/files/lease.ts)
// in the extension's global storage, which every window of this user shares. A second start is
// refused at once and names the run in progress (where, since when, how far), so a double click, a
// second window or an agent beside a person never pays a line twice. A claim whose holder died, or
// was paused past the lease's stale time, is taken over: so the run confirms its claim right before
// each line is sent (`confirm()`), and beside the claim it keeps the state of each line
// (lineMarks.ts) that a window taking the run over reads. No vscode import.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { GatewayError } from '../../core/gateway/errors';
import { LEASE_STALE_MS, type LeaseLostError, takeLease } from '../../core/files/lease';
import { replaceFileWith } from '../../core/files/replaceFile';
import { LineMarks, marksFileOf } from './lineMarks';

/** Who runs a prompt file, as the second start is told. */
export interface RunOwner {
  /** The window: its workspace's name, or that it has no folder. */
  window: string;
  /** How it was started: from the UI, or by arguments (an agent, a task, another extension). */
  startedBy: 'ui' | 'arguments';
  pid: number;
  startedAt: string;
  /** Lines finished of the lines it sends, once it sends. */
  progress?: { finished: number; total: number };
}

export interface PromptFileClaim {
  /** Why the claim was lost, once it is known to be (another run took it over, or it went stale). */
  readonly lost: LeaseLostError | undefined;
  /**
   * Resolves while the claim is still this run's; rejects with LeaseLostError when it was taken over
   * or not refreshed in time. Called right before each line is sent, after the line is marked.
   */
  confirm(): Promise<void>;
  /** The state of each line as every window that can claim the file sees it. */
  readonly lines: LineMarks;
  /** The run that holds it now, when it is another's (a claim taken over names the run that took it). */
  holder(): Promise<RunOwner | undefined>;
  /** Tells later starts how far the run is. */
  progress(finished: number, total: number): Promise<void>;
  release(): Promise<void>;
}

/** A run of this prompt file is in progress: nothing of this start was sent. */
export class RunInProgressError extends GatewayError {
  readonly kind = 'run-in-progress';
  constructor(
    readonly file: string,
    readonly owner: RunOwner | undefined,
    message: string,
  ) {
    super(message);
  }
}

export class PromptFileClaims {
  constructor(
    private readonly dir: string,
    /** Logged by the window; the run itself reacts by confirming its claim before each line. */
    private readonly onLost: (file: string, error: Error) => void = () => undefined,
    /** Tests shorten it (no less than 2000 ms); every window must use the same. */
    private readonly staleMs = LEASE_STALE_MS,
  ) {}

  /** Claims `promptFile` for a run, or throws RunInProgressError naming the run that holds it. */
  async claim(promptFile: string, who: Pick<RunOwner, 'window' | 'startedBy'>, locale = 'en'): Promise<PromptFileClaim> {
    await fs.mkdir(this.dir, { recursive: true });
    const base = path.join(this.dir, await keyOf(promptFile));
    const ownerFile = `${base}.json`;
    let lease;
    try {
      lease = await takeLease(base, { lockPath: `${base}.lock`, wait: 'no', staleMs: this.staleMs, onLost: (error) => this.onLost(promptFile, error) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
      const owner = await ownerOf(ownerFile);
      throw new RunInProgressError(promptFile, owner, describeRun(promptFile, owner, locale));
    }
    const owner: RunOwner = { ...who, pid: process.pid, startedAt: new Date().toISOString() };
    // Whole or not at all (a refused start reads it); never once the claim is another run's.
    const writeOwner = (value: RunOwner) =>
      lease.lost ? Promise.resolve() : replaceFileWith(ownerFile, JSON.stringify(value), { durable: false }).catch(() => undefined);
    await writeOwner(owner);
    const lines = new LineMarks(marksFileOf(base), { id: randomBytes(8).toString('hex'), window: who.window });
    lines.begin();
    return {
      get lost() {
        return lease.lost;
      },
      confirm: () => lease.confirm(),
      lines,
      holder: async () => {
        const now = await readOwner(ownerFile);
        return now && (now.pid !== owner.pid || now.startedAt !== owner.startedAt) ? now : undefined;
      },
      // Confirmed first: a run that woke after a takeover does not write over the new run's record.
      progress: (finished, total) =>
        lease.confirm().then(
          () => writeOwner({ ...owner, progress: { finished, total } }),
          () => undefined,
        ),
      release: async () => {
        lines.end();
        // The record of who runs it goes only while the claim is still this run's.
        await lease.confirm().then(
          () => fs.rm(ownerFile, { force: true }).catch(() => undefined),
          () => undefined,
        );
        await lease.release();
      },
    };
  }
}

/** The lock's name: the prompt file's real path, hashed (the same file by any path, a link included). */
async function keyOf(promptFile: string): Promise<string> {
  const real = await fs.realpath(promptFile).catch(() => path.resolve(promptFile));
  const key = process.platform === 'win32' || process.platform === 'darwin' ? real.toLowerCase() : real;
  return `run-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

/** How long a refused start waits for the holder to write who it is (it does so right after taking the lock). */
const OWNER_WAIT_MS = 2000;

/** The run that holds the claim: its record, waited for a moment when the holder has just taken the lock. */
async function ownerOf(file: string): Promise<RunOwner | undefined> {
  for (const until = Date.now() + OWNER_WAIT_MS; ;) {
    const owner = await readOwner(file);
    if (owner || Date.now() > until) return owner;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function readOwner(file: string): Promise<RunOwner | undefined> {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as RunOwner;
    return typeof value.window === 'string' && typeof value.startedAt === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** "prompts.txt is already being run: started 14:02:11 in "site" (3 of 6 lines done). Nothing was sent by this start." */
export function describeRun(promptFile: string, owner: RunOwner | undefined, locale: string): string {
  const name = path.basename(promptFile);
  if (!owner)
    return l10n.t('{0} is already being run in this or another window. Nothing was sent by this start: wait for that run to end, or cancel it there.', name);
  const at = new Date(owner.startedAt).toLocaleTimeString(locale);
  const how = owner.startedBy === 'arguments' ? l10n.t('by a command with arguments (an agent, a task or another extension)') : l10n.t('from the menu');
  const progress = owner.progress
    ? l10n.t('{0} of {1} lines done', owner.progress.finished, owner.progress.total)
    : l10n.t('planning or waiting for the confirmation of the cost');
  return l10n.t(
    '{0} is already being run: started at {1} in {2}, {3} ({4}). Nothing was sent by this start: wait for that run to end, or cancel it there.',
    name,
    at,
    owner.window,
    how,
    progress,
  );
}
