// Lines of a prompt file whose request was in flight when the extension host died (their history
// entry is `interrupted`, see interrupted.ts): a re-run holds them until the user says. No vscode import.
import type { BatchLine } from '../core/batchFile';
import type { HistoryEntry } from './history';

/** A prompt-file line whose last request was in flight when the extension host died. */
export interface HeldLine {
  line: BatchLine;
  entry: HistoryEntry;
}

/**
 * Splits the lines to send into those that may go and those held: a line whose newest result in the
 * history is an interrupted one is not sent again without the user's say (it may have been charged).
 */
export function holdInterruptedLines(file: string, lines: readonly BatchLine[], history: readonly HistoryEntry[]): { send: BatchLine[]; held: HeldLine[] } {
  const send: BatchLine[] = [];
  const held: HeldLine[] = [];
  for (const line of lines) {
    const newest = history
      .filter((e) => e.batch?.file === file && e.batch.line === line.line && e.batch.key === line.key)
      .reduce<HistoryEntry | undefined>((a, b) => (!a || b.createdAt > a.createdAt ? b : a), undefined);
    if (newest?.interrupted) held.push({ line, entry: newest });
    else send.push(line);
  }
  return { send, held };
}
