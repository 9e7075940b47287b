// Reading the text of the results journal (journalFile.ts): each line a JSON value, optionally
// followed by a tab and more text that stays unread until asked for. Pure: no vscode import.

export interface JournalContents {
  /** The JSON value that starts each line. */
  heads: unknown[];
  /** The file's text: what follows each head's tab is `text.slice(tailStarts[i], tailEnds[i])` (empty without a tab). */
  text: string;
  tailStarts: number[];
  tailEnds: number[];
  /** Complete lines in the file (blank lines aside). */
  lines: number;
  /** 1-based numbers of lines that were not JSON (skipped). */
  badLines: number[];
  /** Bytes of an unfinished last line, cut off (a crash while appending). */
  tornBytes: number;
}

export type ParsedJournal = Omit<JournalContents, 'lines' | 'tornBytes'>;

/** Whether a line without its newline holds all it should: its head and the tail after its tab are JSON. */
export function isWholeLine(line: string): boolean {
  const tab = line.indexOf('\t');
  try {
    JSON.parse(tab < 0 ? line : line.slice(0, tab));
    if (tab >= 0) JSON.parse(line.slice(tab + 1));
    return true;
  } catch {
    return false;
  }
}

/**
 * What a line is about: the id of the result it puts (`{"put":{"id":…}}`), else the line itself. Two
 * lines of one result are two states of it; the later one wins.
 */
export function subjectOf(line: string): string {
  const tab = line.indexOf('\t');
  try {
    const head = JSON.parse(tab < 0 ? line : line.slice(0, tab)) as { put?: { id?: unknown } } | null;
    const id = head?.put?.id;
    return typeof id === 'string' ? `put:${id}` : line;
  } catch {
    return line;
  }
}

/** The complete, non-blank lines of `text` (what follows its last newline is not a line yet). */
export function completeLines(text: string): string[] {
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/**
 * The usual case in one parse and no object per line: every line is a head, a tab and its tail;
 * the heads become one JSON array (the tails cut out by one regular expression) and the tails are
 * kept as positions. Anything else (a blank line, a line without a tab, a bad line) goes line by line.
 */
export function parseText(text: string): ParsedJournal {
  const tailStarts: number[] = [];
  const tailEnds: number[] = [];
  for (let at = 0; at < text.length;) {
    const newline = text.indexOf('\n', at);
    const tab = text.indexOf('\t', at);
    if (tab < 0 || tab > newline) return lineByLine(text);
    tailStarts.push(tab + 1);
    tailEnds.push(newline);
    at = newline + 1;
  }
  try {
    const heads = JSON.parse(`[${text.replace(/\t[^\n]*\n/g, ',').slice(0, -1)}]`) as unknown[];
    if (heads.length === tailStarts.length) return { heads, text, tailStarts, tailEnds, badLines: [] };
  } catch {
    // a bad line: found line by line
  }
  return lineByLine(text);
}

function lineByLine(text: string): ParsedJournal {
  const parsed: ParsedJournal = { heads: [], text, tailStarts: [], tailEnds: [], badLines: [] };
  let at = 0;
  text.split('\n').forEach((line, i, all) => {
    const start = at;
    at += line.length + 1;
    if (i === all.length - 1 || line.trim() === '') return; // after the last newline; blank lines
    const tab = line.indexOf('\t');
    try {
      parsed.heads.push(JSON.parse(tab < 0 ? line : line.slice(0, tab)));
      parsed.tailStarts.push(tab < 0 ? start + line.length : start + tab + 1);
      parsed.tailEnds.push(start + line.length);
    } catch {
      parsed.badLines.push(i + 1);
    }
  });
  return parsed;
}
