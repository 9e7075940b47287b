// Which region edits of the journal may not be finished (issue 41): the answer was saved and the
// process stopped before it was pasted into the original. Decided here from the files alone, with no
// image code (this runs at every start, before dist/regionEdit.js is loaded): a result is finished
// when the mask lies beside its composite (saved last, after the composite). The composite's own
// fact, its COMPOSITE_KEYWORD chunk, is read by regionRecovery.ts. Also removes painted masks that
// crashes left and nothing needs any more. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { HistoryStore } from './results/history';
import type { RegionFormat, ResultSummary } from './results/resultTypes';

/** Region edits this recent are looked at; older ones were settled by the starts in between (or never will be). */
export const RECENT_REGION_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Where a result's composite is: the answer's own file when it has the result's format, else a file
 * of that format beside it (`.png`, or `.jpg` for a result saved as JPEG).
 */
export function compositeNameOf(file: string, format: RegionFormat = 'png'): string {
  const ext = path.extname(file);
  const own = format === 'jpeg' ? ['.jpg', '.jpeg'] : ['.png'];
  return own.includes(ext.toLowerCase()) ? file : `${file.slice(0, file.length - ext.length)}${format === 'jpeg' ? '.jpg' : '.png'}`;
}

/** The mask saved beside a composite: `<composite without extension>.mask.png`. */
export function maskBesideOf(composite: string): string {
  return `${composite.slice(0, composite.length - path.extname(composite).length)}.mask.png`;
}

/** The journal already names a mask kept beside this composite (the studio's painted mask, saved as `<name>.mask[-n].png`). */
export function journalNamesMaskBeside(entry: Pick<ResultSummary, 'region'>, composite: string): boolean {
  const mask = entry.region?.mask;
  if (!mask || path.dirname(mask) !== path.dirname(composite)) return false;
  const base = path.basename(composite, path.extname(composite));
  return path.basename(mask).startsWith(`${base}.mask`) && path.extname(mask).toLowerCase() === '.png';
}

/** A file of a region result whose composite is not known to be finished: its mask is not beside it, and the file is there. */
export async function unfinishedFile(entry: Pick<ResultSummary, 'region'>, file: string): Promise<boolean> {
  const composite = compositeNameOf(file, entry.region?.format);
  if (journalNamesMaskBeside(entry, composite) && (await exists(entry.region!.mask))) return false;
  if (await exists(maskBesideOf(composite))) return false;
  return (await exists(file)) || (await exists(composite));
}

/** The recent results that are region edits not known to be finished (and not already kept as they came). */
export async function pendingRegionEdits(recent: readonly ResultSummary[]): Promise<ResultSummary[]> {
  const pending: ResultSummary[] = [];
  for (const entry of recent) {
    if (!entry.region || entry.region.kept !== undefined || !entry.files.length) continue;
    for (const file of entry.files) {
      if (await unfinishedFile(entry, file)) {
        pending.push(entry);
        break;
      }
    }
  }
  return pending;
}

/** Beside a results journal: touched when a region edit is sent, so that a start reads the journal for them only in the days after one. */
export const regionStampOf = (journal: string) => `${journal}.region-edits`;

/** Notes that a region edit is being sent into `journal`'s results (a failure to note it only costs the next start's look). */
export async function markRegionEditSent(journal: string): Promise<void> {
  const stamp = regionStampOf(journal);
  const now = new Date();
  await fs
    .utimes(stamp, now, now)
    .catch(() => fs.writeFile(stamp, ''))
    .catch(() => undefined);
}

/** A region edit was sent into one of these journals within RECENT_REGION_DAYS (the cheap check before the journal is read). */
export async function regionEditSentRecently(journals: readonly (string | undefined)[], now = new Date()): Promise<boolean> {
  for (const journal of journals) {
    const stat = journal && (await fs.stat(regionStampOf(journal)).catch(() => undefined));
    if (stat && now.getTime() - stat.mtimeMs < RECENT_REGION_DAYS * DAY_MS) return true;
  }
  return false;
}

/** `from` for the index's createdBetween: the start of the recent days. */
export function recentSince(now: Date): Date {
  return new Date(now.getTime() - RECENT_REGION_DAYS * DAY_MS);
}

/**
 * The region edits of `history` a start should finish: undefined when no region edit was sent into
 * any of `stampJournals` lately (the journal is not read then); else the recent ones not finished.
 */
export async function interruptedRegionEdits(
  history: Pick<HistoryStore, 'index'>,
  stampJournals: readonly (string | undefined)[],
  now = new Date(),
): Promise<ResultSummary[] | undefined> {
  if (!(await regionEditSentRecently(stampJournals, now))) return undefined;
  const recent = (await history.index()).createdBetween(recentSince(now), new Date(now.getTime() + 60_000));
  return pendingRegionEdits(recent.filter((e) => e.region));
}

/**
 * Removes painted masks (`<dir>/<uuid>.png`) older than RECENT_REGION_DAYS that no pending result
 * names: a crash left them, and a result older than that is never finished by a start. Resolves to how many went.
 */
export async function removeOldPaintedMasks(dir: string, pending: readonly Pick<ResultSummary, 'region'>[], now = new Date()): Promise<number> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return 0;
  }
  const needed = new Set(pending.flatMap((e) => (e.region ? [path.resolve(e.region.mask)] : [])));
  let removed = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    if (!name.endsWith('.png') || needed.has(path.resolve(file))) continue;
    const stat = await fs.stat(file).catch(() => undefined);
    if (!stat?.isFile() || now.getTime() - stat.mtimeMs < RECENT_REGION_DAYS * DAY_MS) continue;
    await fs.rm(file, { force: true }).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );
