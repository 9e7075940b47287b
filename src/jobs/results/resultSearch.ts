// Finding results in the journal: a query in one line of text, as typed into the palette's "Find
// Image Results…" and the studio gallery's filter: words of the prompt, and `model:`, `style:`,
// `who:`, `from:`/`to:` (dates, YYYY-MM-DD, local days, both included) and `cost:` (rubles:
// `cost:1..5` both included, `cost:>2` and `cost:<0.5` strict, `cost:>=2` and `cost:<=0.5`), in any
// combination. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { originKey } from './resultOrigin';
import type { ResultSummary } from './resultTypes';

export interface ResultQuery {
  /** Lower-case words that must all be in the prompt. */
  words: string[];
  model?: string;
  style?: string;
  /** A kind (`mcp`, `palette`…), a client's name, or `unknown`: matched against who made it, lower case. */
  who?: string;
  /** ISO times: created at or after `from`, before `to`. */
  from?: string;
  to?: string;
  /** Rubles, included. */
  minCost?: number;
  maxCost?: number;
  /** Rubles, excluded: `cost:>2` is above 2, never 2 itself. */
  costAbove?: number;
  costBelow?: number;
}

export interface ParsedQuery {
  query: ResultQuery;
  /** What could not be read, naming the field and what is allowed (the rest of the query still applies). */
  problems: string[];
}

const FIELDS = ['model', 'style', 'who', 'from', 'to', 'cost'] as const;

export function parseResultQuery(text: string): ParsedQuery {
  const query: ResultQuery = { words: [] };
  const problems: string[] = [];
  for (const token of text.trim().split(/\s+/).filter(Boolean)) {
    const colon = token.indexOf(':');
    const field = colon > 0 ? token.slice(0, colon).toLowerCase() : '';
    const value = token.slice(colon + 1);
    if (!(FIELDS as readonly string[]).includes(field)) {
      query.words.push(token.toLowerCase());
      continue;
    }
    if (!value) {
      problems.push(l10n.t('"{0}:" needs a value.', field));
      continue;
    }
    if (field === 'model' || field === 'style' || field === 'who') query[field] = value.toLowerCase();
    else if (field === 'from' || field === 'to') {
      const day = localDay(value);
      if (!day) problems.push(l10n.t('"{0}:" takes a date as YYYY-MM-DD; got "{1}".', field, value));
      else if (field === 'from') query.from = day.toISOString();
      else {
        const next = new Date(day);
        next.setDate(day.getDate() + 1);
        query.to = next.toISOString();
      }
    } else {
      const range = costRange(value);
      if (!range) problems.push(l10n.t('"cost:" takes rubles as 1..5, >2, >=2, <0.5 or <=0.5; got "{0}".', value));
      else Object.assign(query, range);
    }
  }
  return { query, problems };
}

/** The local day as written: `new Date(99, …)` would read the year 99 as 1999, setFullYear does not. */
function localDay(text: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [year, month, date] = [Number(match[1]), Number(match[2]) - 1, Number(match[3])];
  const day = new Date(0);
  day.setFullYear(year, month, date);
  day.setHours(0, 0, 0, 0);
  return day.getFullYear() === year && day.getMonth() === month && day.getDate() === date ? day : undefined;
}

function costRange(text: string): Pick<ResultQuery, 'minCost' | 'maxCost' | 'costAbove' | 'costBelow'> | undefined {
  const rubles = (s: string) => (/^\d+([.,]\d+)?$/.test(s) ? Number(s.replace(',', '.')) : undefined);
  const between = /^(.+)\.\.(.+)$/.exec(text);
  if (between) {
    const [min, max] = [rubles(between[1]!), rubles(between[2]!)];
    return min !== undefined && max !== undefined && min <= max ? { minCost: min, maxCost: max } : undefined;
  }
  const bound = /^([<>]=?)(.+)$/.exec(text);
  if (bound) {
    const rub = rubles(bound[2]!);
    if (rub === undefined) return undefined;
    return { '>': { costAbove: rub }, '>=': { minCost: rub }, '<': { costBelow: rub }, '<=': { maxCost: rub } }[bound[1]!];
  }
  const exact = rubles(text);
  return exact === undefined ? undefined : { minCost: exact, maxCost: exact };
}

/** Whether the query asks anything (an empty one shows every result). */
export const isEmptyQuery = (q: ResultQuery) => !q.words.length && Object.keys(q).length === 1;

/** What a query compares of a result, in lower case (the index keeps it with the result). */
export interface SearchFields {
  model: string;
  who: string;
  style: string;
}

export function searchFieldsOf(summary: ResultSummary): SearchFields {
  return { model: summary.model.toLowerCase(), who: originKey(summary.origin).toLowerCase(), style: summary.style?.name.toLowerCase() ?? '' };
}

/** Whether a result matches everything but the prompt's words (what its summary alone tells). */
export function matchesSummary(summary: ResultSummary, q: ResultQuery, fields: SearchFields = searchFieldsOf(summary)): boolean {
  if (q.from !== undefined && summary.createdAt < q.from) return false;
  if (q.to !== undefined && summary.createdAt >= q.to) return false;
  if (q.model !== undefined && !fields.model.includes(q.model)) return false;
  if (q.style !== undefined && !(summary.style && fields.style.includes(q.style))) return false;
  if (q.minCost !== undefined || q.maxCost !== undefined || q.costAbove !== undefined || q.costBelow !== undefined) {
    // A result of unknown cost is in no range. The margin absorbs float noise (2.1 + 0.2), never a kopeck.
    const cost = summary.costRub;
    if (cost === undefined) return false;
    if (q.minCost !== undefined && cost < q.minCost - 1e-9) return false;
    if (q.maxCost !== undefined && cost > q.maxCost + 1e-9) return false;
    if (q.costAbove !== undefined && cost <= q.costAbove + 1e-9) return false;
    if (q.costBelow !== undefined && cost >= q.costBelow - 1e-9) return false;
  }
  if (q.who !== undefined && !fields.who.includes(q.who)) return false;
  return true;
}

/** Whether a (lower-case) prompt holds every word of the query. */
export function matchesWords(prompt: string, q: ResultQuery): boolean {
  return q.words.every((word) => prompt.includes(word));
}
