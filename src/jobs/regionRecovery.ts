// Finishing region edits that a stopped process left half done (issue 41): the paid answer for the
// crop was saved and recorded, and the process stopped before pasting it into the original. The next
// start pastes it with finishRegionEdit's own steps (compositeInto, saveMaskBeside), without paying
// again, and records the result as the edit would have. The rule (a composite can never be pasted
// again): a file carrying the COMPOSITE_KEYWORD chunk is a composite; the mask beside it (saved last)
// means finished; a file without the chunk is an answer, except one of the original's size when the
// crop was not the whole image (a composite written before the chunk existed). Each result is done
// under its lease (regionComposite.ts underResultLease); one another holds is left for the next start.
// No vscode import: part of dist/regionEdit.js.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { decodeImage } from '../core/images/codecs';
import { readImageHeaderFile } from '../core/images/imageHeader';
import { featherMask } from '../core/images/regionMask';
import { readMask } from '../core/files/maskInput';
import type { HistoryStore } from './results/history';
import type { HistoryEntry, RegionRecord, ResultSummary } from './results/resultTypes';
import { compositeInto, isCompositeFile, REGION_LOCK_DIR, type RegionPlan, saveMaskBeside, underResultLease } from './regionComposite';
import { readRegionOriginal } from './regionOriginal';
import { compositeNameOf, journalNamesMaskBeside, maskBesideOf } from './regionPending';

/** An original changed after this long past the result's creation is another picture (file times are coarse on some systems). */
const MTIME_SLACK_MS = 2_000;

export interface RegionRecoveryOptions {
  /** The studio's painted masks (`painted-masks/<uuid>.png`): a result whose mask is one gets a copy beside it, and the painted one goes. */
  paintedMasksDir?: string;
  lockDir?: string;
  /** Tests shorten the results' leases (proper-lockfile takes no less than 2000 ms). */
  staleMs?: number;
  /** Tests stop here, a composite written and not yet renamed, before the fence: a process paused there. */
  beforeFence?: () => Promise<void>;
}

export interface RegionRecoveryReport {
  /** Results pasted into their originals now, by entry id, with their files as recorded. */
  finished: { id: string; files: string[] }[];
  /** Results kept as the gateway gave them, with why (recorded in the entry's region.kept: told once). */
  kept: { id: string; files: string[]; reason: string }[];
  /** Results another process was finishing (its lease was held): left to it. */
  busy: string[];
}

/** Why an interrupted region edit cannot be finished: its answer stays as it came. */
class KeptAsItCame extends Error {}

/** Finishes the `pending` results (regionPending.ts pendingRegionEdits), one after another. */
export async function recoverRegionEdits(
  history: HistoryStore,
  pending: readonly ResultSummary[],
  options: RegionRecoveryOptions = {},
): Promise<RegionRecoveryReport> {
  const report: RegionRecoveryReport = { finished: [], kept: [], busy: [] };
  for (const summary of pending) {
    const entry = (await history.index()).find(summary.id);
    if (!entry?.region || entry.region.kept !== undefined) continue;
    try {
      const files = await finishEntry(entry, entry.region, options);
      if (!files) continue;
      const painted = isPainted(entry.region.mask, options);
      const region = painted && files.mask ? { ...entry.region, mask: files.mask } : entry.region;
      await history.update(entry.id, { files: files.files, region: { ...region, ...(files.note !== undefined && { kept: files.note }) } });
      // The copy beside the result is recorded: the studio's own file is no longer needed.
      if (painted && files.mask) await fs.rm(entry.region.mask, { force: true }).catch(() => undefined);
      if (files.note !== undefined) report.kept.push({ id: entry.id, files: files.files, reason: files.note });
      else if (files.changed) report.finished.push({ id: entry.id, files: files.files });
    } catch (error) {
      // Held by another, or taken over while this process was stopped past its lease: the other finishes
      // it. Nothing is recorded here: this process's reading of the entry is older than the other's.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOCKED' || code === 'ELEASELOST') {
        report.busy.push(entry.id);
        continue;
      }
      const reason = error instanceof Error ? error.message : String(error);
      // Recorded in the entry: the next start does not try (or tell) again.
      await history.update(entry.id, { region: { ...entry.region, kept: reason } });
      report.kept.push({ id: entry.id, files: entry.files, reason });
    }
  }
  return report;
}

/** The entry's files once finished and the mask kept beside the first, or undefined when nothing is left to do (all gone). */
async function finishEntry(
  entry: HistoryEntry,
  region: RegionRecord,
  options: RegionRecoveryOptions,
): Promise<{ files: string[]; mask?: string; changed: boolean; note?: string } | undefined> {
  let plan: Promise<RegionPlan> | undefined;
  const planOnce = () => (plan ??= planFromRecord(entry, region, options));
  const files: string[] = [];
  let mask: string | undefined;
  let note: string | undefined;
  let changed = false;
  let any = false;
  for (const file of entry.files) {
    const outcome = await underResultLease(
      file,
      'no',
      (lease) => finishFile(file, entry, region, planOnce, lease, options.beforeFence),
      options.lockDir ?? REGION_LOCK_DIR,
      options.staleMs,
    );
    if (outcome.gone) {
      files.push(file);
      continue;
    }
    any = true;
    changed ||= outcome.composited;
    files.push(outcome.file);
    mask ??= outcome.mask;
    note ??= outcome.note;
  }
  // Decoded once for all the entry's files; dropped here.
  plan = undefined;
  return any ? { files, ...(mask ? { mask } : {}), changed, ...(note !== undefined && { note }) } : undefined;
}

type FileOutcome = { gone: true } | { gone?: false; file: string; mask?: string; composited: boolean; note?: string };

/** One file of the result, under its lease: pasted unless it is a composite already, then its mask saved beside it. */
async function finishFile(
  file: string,
  entry: HistoryEntry,
  region: RegionRecord,
  plan: () => Promise<RegionPlan>,
  lease: Parameters<typeof compositeInto>[2],
  beforeFence?: () => Promise<void>,
): Promise<FileOutcome> {
  let target = compositeNameOf(file, region.format);
  // Looked at again under the lease: another start may have finished it meanwhile.
  if (journalNamesMaskBeside(entry, target) && (await exists(region.mask))) return { file: target, mask: region.mask, composited: false };
  if (await exists(maskBesideOf(target))) return { file: target, mask: maskBesideOf(target), composited: false };
  let composited = false;
  if (!(await isCompositeFile(target))) {
    if (!(await exists(file))) return { gone: true };
    const ready = await plan();
    if (await isOldComposite(file, ready)) {
      target = file;
    } else {
      target = await compositeInto(ready, file, lease, beforeFence);
      composited = true;
    }
  }
  if (!(await exists(region.mask))) {
    // Pasted already (the mask went after): the composite stands, only the mask's copy is missing.
    return { file: target, composited, note: l10n.t('its mask ({0}) is gone, so it could not be saved beside the result.', path.basename(region.mask)) };
  }
  return { file: target, mask: await saveMaskBeside(target, region.mask), composited };
}

/** Without the chunk but of the original's size while the crop was a part of it: a composite of a version before the chunk. */
async function isOldComposite(file: string, plan: RegionPlan): Promise<boolean> {
  const { crop, format } = plan.record;
  const { width, height } = plan.original;
  // A JPEG result came after the chunk (and its COM segment) existed.
  if (format === 'jpeg' || (crop.width === width && crop.height === height)) return false;
  const header = await readImageHeaderFile(file).catch(() => undefined);
  return header?.width === width && header.height === height;
}

/**
 * The plan the edit had, from its record: the original decoded (there, and not changed since the
 * result was made), the mask read (there, the same box) and feathered as recorded, the crop as sent.
 */
async function planFromRecord(entry: HistoryEntry, region: RegionRecord, options: RegionRecoveryOptions): Promise<RegionPlan> {
  const name = path.basename(region.original);
  const stat = await fs.stat(region.original).catch(() => undefined);
  if (!stat?.isFile()) throw new KeptAsItCame(l10n.t('its original {0} is gone.', name));
  if (stat.mtimeMs > Date.parse(entry.createdAt) + MTIME_SLACK_MS) throw new KeptAsItCame(l10n.t('its original {0} changed after the edit.', name));
  const { iccProfile, ...original } = await readRegionOriginal(region.original, async (bytes) => {
    const { width, height, data, iccProfile: profile } = await decodeImage(bytes, { transfer: true });
    return { width, height, data, ...(profile && { iccProfile: profile }) };
  }).catch((error: unknown) => {
    throw new KeptAsItCame(error instanceof Error ? error.message : String(error));
  });
  const mask = await readMask(region.mask, original).catch((error: unknown) => {
    throw new KeptAsItCame(error instanceof Error ? error.message : String(error));
  });
  const { box, crop } = region;
  const same = mask.box && mask.box.x === box.x && mask.box.y === box.y && mask.box.width === box.width && mask.box.height === box.height;
  const fits = crop.x + crop.width <= original.width && crop.y + crop.height <= original.height;
  if (!same || !fits) throw new KeptAsItCame(l10n.t('its original {0} or its mask is not the one the edit was made with.', name));
  return {
    record: region,
    ...(isPainted(region.mask, options) && { maskKeptBeside: true }),
    original,
    ...(iccProfile && { iccProfile }),
    mask: featherMask(mask, region.feather, { inPlace: true }),
    cropPng: Buffer.alloc(0),
    description: region.description,
  };
}

function isPainted(mask: string, options: RegionRecoveryOptions): boolean {
  return options.paintedMasksDir !== undefined && path.dirname(path.resolve(mask)) === path.resolve(options.paintedMasksDir);
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );
