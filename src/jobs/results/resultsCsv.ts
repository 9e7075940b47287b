// The results journal as CSV (RFC 4180, one row per result, oldest first): time, who, model,
// prompt, n, cost, files, request id. Fields that a spreadsheet would run as a formula, even after
// leading spaces or in full-width forms, are quoted with a leading apostrophe. Pure: no vscode import.
import type { ResultOrigin } from './resultOrigin';
import { originKey } from './resultOrigin';
import type { HistoryEntry } from './resultsIndex';

export const CSV_HEADER = ['time', 'who', 'model', 'prompt', 'n', 'cost_rub', 'files', 'request_id'] as const;

/** Who made it, in a form that stays the same in every language: `palette`, `mcp:Claude Code`, `promptFile:prompts.txt:12`, `unknown`. */
export function originCsv(origin: ResultOrigin | undefined): string {
  if (origin?.kind === 'promptFile' && origin.file) return `promptFile:${origin.file}:${origin.line ?? ''}`;
  return originKey(origin);
}

/**
 * A cell a spreadsheet would run as a formula (OWASP, CSV injection): one that starts with = + - @,
 * their full-width forms (＝ ＋ － ＠, which spreadsheets fold to ASCII), or a tab, CR or LF, also
 * after leading spaces or invisible characters (spreadsheets trim those before reading a formula).
 */
const FORMULA = /^[\s\u200b-\u200d\u2060]*[=+\-@\uff1d\uff0b\uff0d\uff20]|^[\t\r\n]/;

/** One field: a formula kept as text by a leading apostrophe, quoted when it holds a quote, comma or line break. */
function csvField(value: string): string {
  const safe = FORMULA.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) || safe !== value ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** `relative` names a file as the CSV shows it (workspace-relative in the extension). */
export function resultsCsv(entries: Iterable<HistoryEntry>, relative: (file: string) => string = (f) => f): string {
  const rows = [CSV_HEADER.join(',')];
  for (const e of entries) {
    const cost = typeof e.costRub === 'number' ? e.costRub.toFixed(2) : '';
    const cells = [
      e.createdAt,
      originCsv(e.origin),
      e.model,
      e.request.prompt,
      String(e.request.n ?? 1),
      cost,
      e.files.map(relative).join('; '),
      e.requestId ?? '',
    ];
    rows.push(cells.map(csvField).join(','));
  }
  return `${rows.join('\r\n')}\r\n`;
}
