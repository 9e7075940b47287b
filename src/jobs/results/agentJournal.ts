// Where the MCP server records its results when another agent (Claude Code, Cursor, Codex CLI)
// starts it, rather than VS Code (which passes the window's own journal). Outside the workspace, so
// it is never committed with the repository by accident: under the user's home, one file per
// workspace folder, named by a hash of the folder's real path. The extension reads the file of its
// folder and takes its results into the window's journal (history.ts: adopt). It holds prompts: only
// its owner may read it (the file 0600, its folders 0700). No vscode import.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isRecord } from '../../core/common/json';
import type { JournalContents } from './journalFile';

/** `~/.gateway-images/results/<first 16 hex digits of sha256(real path of the workspace folder)>.jsonl`. */
export function agentJournalFile(workspaceRoot: string, home: string): string {
  const id = createHash('sha256').update(path.resolve(workspaceRoot)).digest('hex').slice(0, 16);
  return path.join(agentJournalFolder(home), `${id}.jsonl`);
}

/** `~/.gateway-images/results`: the agents' journals, one per workspace folder. */
export function agentJournalFolder(home: string): string {
  return path.join(home, '.gateway-images', 'results');
}

/** Whether `file` is one of the agents' journals (not the window's journal VS Code passes, nor one set by hand). */
export function isAgentJournal(file: string, home: string): boolean {
  return path.dirname(path.resolve(file)) === agentJournalFolder(home) && file.endsWith('.jsonl');
}

/**
 * Makes the agents' journals private, the existing ones too: `~/.gateway-images` and its `results`
 * folder 0700 (made so when missing), the journal 0600 (made empty when missing, so that the first
 * append does not make it readable by others). Not on Windows, where the folders inherit the
 * profile's own access list and the mode bits mean nothing.
 */
export async function secureAgentJournal(file: string, home: string, platform: NodeJS.Platform = process.platform): Promise<void> {
  const folder = agentJournalFolder(home);
  // Another journal (the window's, passed by VS Code, or one set by hand) is left as it is.
  if (platform === 'win32' || !isAgentJournal(file, home)) return;
  for (const dir of [path.dirname(folder), folder]) {
    await fs.mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await fs.chmod(dir, 0o700);
  }
  await (await fs.open(file, 'a', 0o600)).close();
  await fs.chmod(file, 0o600);
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
