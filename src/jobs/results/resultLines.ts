// What the results store (history.ts) reads of a journal line, or of the history kept before the
// journal: a result's summary, when the value has the shape of one. No vscode import.
import { isRecord } from '../../core/common/json';
import type { HistoryEntry, ResultSummary } from './resultTypes';

const isText = (value: unknown): value is string => typeof value === 'string';
const isTextList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);

/** A result's summary read from disk, when it has the shape of one (else the line is skipped). */
export function toSummary(value: unknown): ResultSummary | undefined {
  if (!isRecord(value) || !isText(value.id) || !isText(value.createdAt) || !isText(value.model) || !isTextList(value.files)) return undefined;
  return value as unknown as ResultSummary;
}

/** The summary of a journal line, when the line holds a result (another writer's line is checked before the index takes it). */
export function summaryOfLine(line: string): ResultSummary | undefined {
  const tab = line.indexOf('\t');
  try {
    const head: unknown = JSON.parse(tab < 0 ? line : line.slice(0, tab));
    return isRecord(head) ? toSummary(head.put) : undefined;
  } catch {
    return undefined;
  }
}

/** The old workspace-state array's results (newest first there) not yet in the journal (`heads`), oldest first. */
export function legacyResults(old: unknown, heads: readonly unknown[]): HistoryEntry[] {
  if (!Array.isArray(old) || !old.length) return [];
  const known = new Set(heads.map((head) => (isRecord(head) && isRecord(head.put) ? head.put.id : undefined)));
  return old
    .filter(
      (e): e is HistoryEntry =>
        isRecord(e) && !!toSummary(e) && isRecord(e.request) && isText(e.request.model) && isText(e.request.prompt) && !known.has(e.id as string),
    )
    .reverse();
}
