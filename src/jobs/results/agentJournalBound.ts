// The agents' journal (agentJournal.ts) kept small: the newest results only. It is a hand-over, not
// the record: every window opened on the workspace takes its finished results into the workspace's
// own journal, which keeps them, so only the results no window has taken yet wait here, and those are
// the newest. Past AGENT_JOURNAL_LIMITS it is cut to three quarters of them (so it is not rewritten at
// every check), the newest results kept whole, by the journal's own fenced rewrite (journalFile.ts):
// under its lease, only over the file it read, with what another writer appended meanwhile carried
// over. The server's store and the windows that read it find another file there and read it whole
// again. Used by the MCP server only (it loads the journal's lock). No vscode import.
import { isRecord } from '../../core/common/json';
import type { JournalContents, SharedJournal } from './journalFile';

export interface JournalLimits {
  /** Results (a result's later lines are states of it, not more results). */
  results: number;
  bytes: number;
}

/**
 * 2,000 results or 4 MiB: weeks of an agent's work, far more than is made between two openings of a
 * window, and small enough for a window to read whole at each change (it does, to take new results).
 */
export const AGENT_JOURNAL_LIMITS: JournalLimits = { results: 2000, bytes: 4 * 1024 * 1024 };

/** What is kept of the limits when the journal is cut. */
const KEPT_SHARE = 0.75;

/** Each result's last line (its latest state), in the order results were first written: oldest first. */
function latestLines(contents: JournalContents): string[] {
  const bySubject = new Map<string, string>();
  contents.heads.forEach((head, i) => {
    const tail = contents.text.slice(contents.tailStarts[i], contents.tailEnds[i]);
    const line = tail ? `${JSON.stringify(head)}\t${tail}` : JSON.stringify(head);
    const put = isRecord(head) ? head.put : undefined;
    // A Map keeps a key where it was first set: a result stays where it was first written.
    bySubject.set(isRecord(put) && typeof put.id === 'string' ? `put:${put.id}` : line, line);
  });
  return [...bySubject.values()];
}

/** The lines of the newest results within `limits` (the newest one always), oldest first. */
export function newestResults(contents: JournalContents, limits: JournalLimits): string[] {
  const lines = latestLines(contents).slice(-Math.max(1, limits.results));
  let bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
  let first = 0;
  while (first < lines.length - 1 && bytes > limits.bytes) bytes -= Buffer.byteLength(lines[first++]!) + 1;
  return lines.slice(first);
}

/**
 * Cuts the journal to three quarters of `limits`, newest results kept, when it is past them. Returns
 * how many results it dropped (0: within the limits, or left as it is because another writer changed
 * it or compacts it, or no lock could be had: the next check tries again).
 */
export async function boundJournal(journal: SharedJournal, limits: JournalLimits = AGENT_JOURNAL_LIMITS): Promise<number> {
  return journal.exclusive(async (lease) => {
    if (!lease) return 0;
    const read = await journal.read(true);
    const results = latestLines(read).length;
    if (read.position.offset <= limits.bytes && results <= limits.results) return 0;
    const kept = newestResults(read, { results: Math.floor(limits.results * KEPT_SHARE), bytes: Math.floor(limits.bytes * KEPT_SHARE) });
    const written = await journal.rewrite(kept, { lease, read: read.position });
    return typeof written === 'string' ? 0 : results - kept.length;
  });
}
