// Where the MCP server records its results when another agent (Claude Code, Cursor, Codex CLI)
// starts it, rather than VS Code (which passes the window's own journal). Outside the workspace, so
// it is never committed with the repository by accident: under the user's home, one file per
// workspace folder, named by a hash of the folder's real path. The extension reads the file of its
// folder and takes its results into the window's journal (history.ts: adopt). No vscode import.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { isRecord } from '../../core/common/json';
import type { JournalContents } from './journalFile';

/** `~/.gateway-images/results/<first 16 hex digits of sha256(real path of the workspace folder)>.jsonl`. */
export function agentJournalFile(workspaceRoot: string, home: string): string {
  const id = createHash('sha256').update(path.resolve(workspaceRoot)).digest('hex').slice(0, 16);
  return path.join(home, '.gateway-images', 'results', `${id}.jsonl`);
}

/** The last line of each finished result of a journal (it has its job's id: its cost or its failure is known), by id. */
export function finishedResults(read: JournalContents): Map<string, string> {
  const finished = new Map<string, string>();
  read.heads.forEach((head, i) => {
    const put = isRecord(head) ? head.put : undefined;
    if (isRecord(put) && typeof put.id === 'string' && typeof put.jobId === 'string')
      finished.set(put.id, `${JSON.stringify(head)}\t${read.text.slice(read.tailStarts[i], read.tailEnds[i])}`);
  });
  return finished;
}
