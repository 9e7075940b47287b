// The shape of a result in the results journal, and of the gallery's slots made from it: shared by
// the index (resultsIndex.ts), its search (resultSearch.ts) and every writer. No vscode import.
import type { StyleRecord } from '../../core/requests/styleFile';
import type { GenerationRequest } from '../../core/gateway/types';
import type { ResultOrigin } from './resultOrigin';

export interface HistoryEntry {
  id: string;
  createdAt: string;
  /** The request as sent (no reference data). */
  request: GenerationRequest;
  /** Source images of an edit. */
  references?: string[];
  model: string;
  /** Images in the workspace (a file deleted from the gallery leaves this list). */
  files: string[];
  costRub?: number;
  balanceAfter?: number;
  /** A line of a prompt file (Generate Images from File): how a re-run finds what is done. */
  batch?: BatchTag;
  /** A run of Compare Models: the runs' shared id. */
  comparison?: string;
  /** Paid images that could not be placed into the workspace wait in the recovery folder; `answer`: the paid answer as it came, when it could not be read. */
  recovered?: { manifestPath?: string; files: string[]; answer?: string };
  /** The paid request failed after it was paid for, or may have been (`outcomeUnknown`): why. Its images did not all arrive. */
  failed?: string;
  /** What was learned of an unknown outcome once the gateway's deadline had passed (see jobs/outcomeCheck.ts). */
  outcomeCheck?: OutcomeCheck;
  /** The style it was made with and the values the style had then. */
  style?: StyleRecord;
  /** The job that made it: its in-flight record and staged files are named by it (jobs/inFlight.ts). */
  jobId?: string;
  /** The request was in flight when the extension host died (a crash, a reload): see jobs/interrupted.ts. */
  interrupted?: true;
  /** Interrupted before the gateway's answer arrived: it is unknown whether it charged. */
  outcomeUnknown?: true;
  /** The gateway's id of the request, from its answer's headers (kept for an interrupted job). */
  requestId?: string;
  /** Who made it (absent in entries written before it was recorded: "unknown"). */
  origin?: ResultOrigin;
  /** The gateway and key it was paid with: `<base URL>|<key fingerprint>` (core/gateway/identity.ts; never the key). Absent in old entries and failures. */
  identity?: string;
  /** A region edit (issue 41): the original, the mask, the feather and the crop sent. */
  region?: RegionRecord;
}

/** A region edit's result format: PNG (nothing outside the region re-compressed) or JPEG (smaller, every pixel re-compressed). */
export type RegionFormat = 'png' | 'jpeg';

/** What a region edit changed of which image: the original and mask (absolute in the journal, relative to the result's folder in a PNG's provenance), the mask's box, the feather and the crop sent. */
export interface RegionRecord {
  original: string;
  mask: string;
  feather: number;
  box: { x: number; y: number; width: number; height: number };
  crop: { x: number; y: number; width: number; height: number; ratio: string };
  /** "region 412×300 of 2048×1536, sent as 3:2" */
  description: string;
  /** The result's format: 'jpeg' when the person chose it (every pixel re-compressed); absent or 'png': a PNG. */
  format?: RegionFormat;
  /** Set by a start that could not finish an interrupted region edit (jobs/regionRecovery.ts): why the answer stays as it came. Never looked at again. */
  kept?: string;
}

/**
 * An unknown outcome checked again after the request's deadline: 'charge-seen' when the key's
 * spend rose by at least the request's expected minimum since before it was sent, beyond what the
 * journal's other results of that time were charged (spending the journal does not know, of other
 * machines or tools, may be in it too: a sign, not a proof); otherwise 'unknown'.
 */
export interface OutcomeCheck {
  at: string;
  verdict: 'unknown' | 'charge-seen';
  /** The key's 30-day spend, after − before, rubles (absent when either was unknown). */
  keySpendRise?: number;
  /** What the journal's other results of the same time were charged: that much of the rise is theirs. */
  knownSpend?: number;
  /** The account balance, after − before, rubles. */
  balanceChange?: number;
}

/** What the lookups need of a result; the rest is read from the journal's text when asked for. */
export type ResultSummary = Omit<HistoryEntry, DetailField>;
export type DetailField = 'request' | 'references' | 'balanceAfter';

/** Where a result came from, when it was a line of a prompt file. */
export interface BatchTag {
  file: string;
  line: number;
  /** requestKey() of the line's request: an edited line is a new line. */
  key: string;
}

/** One card of the gallery: a saved file of a result. */
export interface GallerySlot {
  entry: HistoryEntry;
  file: string;
}

/** `items` replace `deleteCount` items at `start` (indexes of the gallery list, newest first). */
export interface GallerySplice {
  start: number;
  deleteCount: number;
  items: GallerySlot[];
}
