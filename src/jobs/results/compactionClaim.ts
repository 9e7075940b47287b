// Who is compacting the results journal: a small file `<journal>.compacting` that names its process.
// A compaction renames a new file over the journal, and no file system can rename "only if the
// file there is still the one I read". So while one writer is between its last check and its rename
// (where it may be stopped for any time), no other may compact: a second compaction would put a file
// there that the first one's rename then replaces unread. The claim holds while its process lives,
// however long it is stopped (unlike the lock, which is taken over once stale); a dead process's
// claim is taken over. Skipping a compaction costs only a longer file. No vscode import.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import { replaceFileWith } from '../../core/files/replaceFile';
import { processAlive } from '../inFlight';

interface ClaimRecord {
  pid: number;
  host: string;
  at: string;
  token: string;
}

/** A claim of another machine (a shared network folder) cannot be checked by its process: it holds this long. */
const FOREIGN_CLAIM_MS = 10 * 60_000;
/** A claim file without its record yet (made, not written) is its maker's this long. */
const UNWRITTEN_CLAIM_MS = 60_000;

/**
 * Claims the compaction of `journal` (under the journal's lock). Resolves to the function that gives
 * the claim up, or undefined when a live process holds it: then this writer does not compact now.
 */
export async function claimCompaction(journal: string, alive: (pid: number) => boolean = processAlive): Promise<(() => Promise<void>) | undefined> {
  const file = `${journal}.compacting`;
  const mine: ClaimRecord = { pid: process.pid, host: os.hostname(), at: new Date().toISOString(), token: randomBytes(8).toString('hex') };
  const text = JSON.stringify(mine);
  try {
    await fs.writeFile(file, text, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (await heldByLiveProcess(file, alive)) return undefined;
    // The claim of a process that died: this writer's now.
    await replaceFileWith(file, text, { durable: false });
  }
  return async () => {
    const now = await fs.readFile(file, 'utf8').catch(() => undefined);
    if (now === text) await fs.rm(file, { force: true }).catch(() => undefined);
  };
}

async function heldByLiveProcess(file: string, alive: (pid: number) => boolean): Promise<boolean> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file).then((s) => s.mtimeMs)]);
  } catch (error) {
    // Given up between the two looks: free.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  let claim: Partial<ClaimRecord> | undefined;
  try {
    claim = JSON.parse(text) as Partial<ClaimRecord>;
  } catch {
    return Date.now() - modified < UNWRITTEN_CLAIM_MS;
  }
  if (typeof claim.pid !== 'number') return Date.now() - modified < UNWRITTEN_CLAIM_MS;
  if (claim.host === os.hostname()) return alive(claim.pid);
  return Date.now() - modified < FOREIGN_CLAIM_MS;
}
