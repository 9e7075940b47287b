// A job whose extension host died while its paid request was in flight (its in-flight record is
// still there at start-up, inFlight.ts): what it left is settled here. Images already linked into
// the workspace stay there; every other staged file goes into a recovery manifest, so that Recover
// Unsaved Images lists it at once with its prompt, model and request id: a whole image (its `.img`
// ends where its format says it ends) as an image, a cut one (`.part`, or an `.img` that does not
// end) as incomplete, never under a final name. A temporary copy left in the output folder is
// removed. Settling twice gives the same result (a crash while settling). No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { formatRubles } from '../core/money/cost';
import { extensionForMediaType, readImageHead, sniffImage } from '../core/images/imageSniff';
import { FALLBACK_RECOVERY_DIR, syncFile } from '../core/files/imageStore';
import { expandFileNamePattern } from '../core/files/naming';
import { trPlural } from '../core/common/plural';
import { type RecoveryFile, type RecoveryManifest, writeRecoveryManifest } from '../core/files/recoveryManifest';
import { isWholeImage } from '../core/files/wholeImage';
import type { HistoryEntry, HistoryStore } from './results/history';
import type { InFlightRecord } from './inFlight';

export interface InterruptedJob {
  record: InFlightRecord;
  /** The gateway's success answer had arrived: it charged. Otherwise it is unknown whether it did. */
  charged: boolean;
  /** Images that were in the workspace already. */
  placed: string[];
  /** What waits in the recovery folder (absent when nothing does); `whole`: the whole images among it. */
  kept?: { manifestPath: string; images: number; incomplete: number; answers: number; whole: string[] };
}

/** `<jobId>-<index>.img|part`, `<jobId>-answer.<ext>`: what a job stages (imageStore.ts, keptAnswer.ts). */
const STAGED = /^(\d+)\.(img|part)$|^answer(?:-\d+)?\.[a-z0-9]+$/;

export async function settleInterrupted(record: InFlightRecord, fallbackDir = FALLBACK_RECOVERY_DIR): Promise<InterruptedJob> {
  // Noting the answer in the record races with the crash: an image staged or placed proves it arrived too.
  let charged = record.answeredAt !== undefined || record.requestId !== undefined || (record.placed?.length ?? 0) > 0;
  await removeTemporaryCopies(record);
  const placed = new Set<string>();
  for (const file of record.placed ?? []) if (await exists(file)) placed.add(file);
  const outputFiles = await inodesIn(record.outputDirectory);
  const files: RecoveryFile[] = [];
  let manifestDir: string | undefined;
  let existing: RecoveryManifest | undefined;
  const counts = { incomplete: 0, answers: 0 };
  const whole: string[] = [];
  for (const dir of [...new Set([record.stagingDir, fallbackDir])]) {
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      continue;
    }
    if (names.includes(`${record.id}.json`)) {
      existing ??= await readManifest(path.join(dir, `${record.id}.json`));
      manifestDir ??= dir;
    }
    for (const name of names.sort()) {
      const rest = name.startsWith(`${record.id}-`) ? name.slice(record.id.length + 1) : undefined;
      const match = rest === undefined ? null : STAGED.exec(rest);
      if (!match) continue;
      const file = path.join(dir, name);
      const [, index, state] = match;
      if (index === undefined) {
        files.push({ path: file, suggestedName: `${baseName(record, 0)}-answer${path.extname(name)}`, kind: 'answer' });
        counts.answers++;
        continue;
      }
      const inWorkspace = state === 'img' ? await linkedInto(file, outputFiles) : undefined;
      if (inWorkspace) {
        // Placed by a hard link before the crash: the bytes are synced, then the staged name goes.
        await syncFile(file).catch(() => undefined);
        await fs.rm(file, { force: true });
        placed.add(inWorkspace);
        continue;
      }
      const isWhole = state === 'img' && (await isWholeImage(file));
      const ext = extensionForMediaType(sniffImage(await readImageHead(file).catch(() => Buffer.alloc(0)))?.mediaType) ?? 'png';
      files.push({ path: file, suggestedName: `${baseName(record, Number(index))}${isWhole ? '' : '-incomplete'}.${ext}` });
      if (isWhole) whole.push(file);
      else counts.incomplete++;
    }
    manifestDir ??= files.length ? dir : undefined;
  }
  charged ||= placed.size > 0 || files.length > 0 || existing !== undefined;
  const result: InterruptedJob = { record, charged, placed: [...placed] };
  const listed = new Set(existing?.files.map((f) => path.resolve(f.path)));
  const added = files.filter((f) => !listed.has(path.resolve(f.path)));
  if (!manifestDir || (!added.length && !existing)) return result;
  const manifestPath = await writeRecoveryManifest(manifestDir, {
    ...(existing ?? {
      jobId: record.id,
      createdAt: record.startedAt,
      prompt: record.request.prompt,
      model: record.request.model,
      intendedDirectory: record.outputDirectory,
      reason: charged
        ? l10n.t('the window closed while the paid answer was arriving (the gateway had answered: it charged)')
        : l10n.t('the window closed while the request was in flight: it is unknown whether the gateway charged'),
      ...(record.requestId ? { requestId: record.requestId } : {}),
    }),
    files: [...(existing?.files ?? []), ...added],
  });
  return { ...result, kept: { manifestPath, ...counts, images: whole.length, whole } };
}

/** The name the job would have given image `index` (0-based). */
function baseName(record: InFlightRecord, index: number): string {
  try {
    return expandFileNamePattern(record.namePattern, {
      date: new Date(record.startedAt),
      prompt: record.request.prompt,
      model: record.request.model,
      index: index + 1,
      seed: record.request.seed,
      sourceName: record.sourceName,
    });
  } catch {
    return `${record.id}-${index + 1}`;
  }
}

/** Copies to another disk go through `.<staged name>.copying` beside the target (imageStore.ts): a crash leaves one. */
async function removeTemporaryCopies(record: InFlightRecord): Promise<void> {
  let names: string[];
  try {
    names = await fs.readdir(record.outputDirectory);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(`.${record.id}-`) && name.endsWith('.copying')) await fs.rm(path.join(record.outputDirectory, name), { force: true });
  }
}

/** The files of the output folder by device and inode: a staged image linked there shares them. */
async function inodesIn(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return found;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat?.isFile()) found.set(`${stat.dev}:${stat.ino}`, file);
  }
  return found;
}

async function linkedInto(file: string, outputFiles: Map<string, string>): Promise<string | undefined> {
  const stat = await fs.stat(file).catch(() => undefined);
  return stat && stat.nlink > 1 ? outputFiles.get(`${stat.dev}:${stat.ino}`) : undefined;
}

async function readManifest(file: string): Promise<RecoveryManifest | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as RecoveryManifest;
  } catch {
    return undefined;
  }
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );

/**
 * Records an interrupted job in the results journal once (settling again after a crash does not add
 * it twice): the entry its process started (images saved before the crash) is completed, else one
 * is added. Its whole images in the recovery folder are its `recovered` files, so that a re-run of
 * its prompt-file line skips it as done; without any, the line is held (heldLines.ts).
 */
export async function recordInterrupted(history: HistoryStore, job: InterruptedJob): Promise<HistoryEntry> {
  const { record, kept } = job;
  return putJobEntry(history, record, {
    files: job.placed,
    ...(kept?.whole.length ? { recovered: { manifestPath: kept.manifestPath, files: kept.whole } } : {}),
    interrupted: true,
    // A second settling may find it charged after all (an image staged): then it is known.
    outcomeUnknown: job.charged ? undefined : true,
    ...(record.requestId ? { requestId: record.requestId } : {}),
    ...(record.identity ? { identity: record.identity } : {}),
  });
}

/** The job's entry in the journal (found by its id, else by a file it saved) completed with `state`, or a new one. */
async function putJobEntry(history: HistoryStore, record: InFlightRecord, state: Partial<HistoryEntry> & Pick<HistoryEntry, 'files'>): Promise<HistoryEntry> {
  const index = await history.index();
  const known = index.findByJob(record.id) ?? state.files.map((f) => index.findByFile(f)).find(Boolean);
  const change = { ...state, files: [...new Set([...(known?.files ?? []), ...state.files])], jobId: record.id };
  if (!known) {
    return history.add({
      request: record.request,
      ...(record.references ? { references: record.references } : {}),
      model: record.request.model,
      ...(record.batch ? { batch: record.batch } : {}),
      ...change,
    });
  }
  await history.update(known.id, change);
  return (await history.index()).find(known.id)!;
}

/** The one notification after a start that settled interrupted jobs; `waiting`: files wait for Recover. */
export function describeInterrupted(jobs: InterruptedJob[], balance: number | undefined, locale: string): { text: string; waiting: number } {
  const unknown = jobs.filter((j) => !j.charged).length;
  const placed = jobs.reduce((n, j) => n + j.placed.length, 0);
  const waiting = jobs.reduce((n, j) => n + (j.kept ? j.kept.images + j.kept.incomplete + j.kept.answers : 0), 0);
  const folder = jobs.find((j) => j.kept)?.kept?.manifestPath;
  const parts = [
    trPlural(
      jobs.length,
      { one: 'The window closed while {0} paid request was in flight.', other: 'The window closed while {0} paid requests were in flight.' },
      jobs.length,
    ),
    placed ? trPlural(placed, { one: '{0} image had been saved into the workspace.', other: '{0} images had been saved into the workspace.' }, placed) : '',
    waiting && folder
      ? trPlural(
          waiting,
          { one: '{0} file waits in the recovery folder ({1}).', other: '{0} files wait in the recovery folder ({1}).' },
          waiting,
          path.dirname(folder),
        )
      : '',
    unknown
      ? trPlural(
          unknown,
          {
            one: 'For {0} request it is unknown whether the gateway charged: nothing is sent again by itself.',
            other: 'For {0} requests it is unknown whether the gateway charged: nothing is sent again by itself.',
          },
          unknown,
        )
      : '',
    balance !== undefined ? l10n.t('The balance was read again from the gateway: {0}.', formatRubles(balance, locale)) : '',
  ];
  return { text: parts.filter(Boolean).join(' '), waiting };
}

/**
 * A finished job's record left by a dead process: it died after noting the result and before the
 * result was in the journal, or before its record went. The journal has the result when it has the
 * job's id (written with the final state); else the entry is completed from the record. Resolves
 * to the entry written, if any.
 */
export async function recordFinished(history: HistoryStore, record: InFlightRecord): Promise<HistoryEntry | undefined> {
  const finished = record.finished;
  const files = record.placed ?? [];
  if (!finished || (await history.index()).findByJob(record.id) || (!files.length && !finished.recovered)) return undefined;
  return putJobEntry(history, record, {
    files,
    model: finished.model,
    ...(finished.costRub !== undefined ? { costRub: finished.costRub } : {}),
    ...(finished.balanceAfter !== undefined ? { balanceAfter: finished.balanceAfter } : {}),
    ...(finished.recovered ? { recovered: finished.recovered } : {}),
    ...(finished.identity ? { identity: finished.identity } : {}),
    ...(record.requestId ? { requestId: record.requestId } : {}),
  });
}

/**
 * A paid failure its process noted and could not record in the journal (a full disk, a lock not had
 * in time): recorded now as paid (or perhaps paid), as the job would have (jobRecord.ts), unless the
 * journal has it. Resolves to the entry written, if any.
 */
export async function recordFailed(history: HistoryStore, record: InFlightRecord): Promise<HistoryEntry | undefined> {
  const failed = record.failed;
  if (!failed || (await history.index()).findByJob(record.id)?.failed !== undefined) return undefined;
  return putJobEntry(history, record, {
    files: failed.files,
    model: failed.model,
    failed: failed.reason,
    ...(failed.charged === 'unknown' ? { outcomeUnknown: true as const } : {}),
    ...(failed.costRub !== undefined ? { costRub: failed.costRub } : {}),
    ...(failed.identity ? { identity: failed.identity } : {}),
    ...(failed.recovered ? { recovered: failed.recovered } : {}),
    ...(record.requestId ? { requestId: record.requestId } : {}),
  });
}

/** `finished`: the job had ended (with its result, or failed after it was paid): only its journal entry is made sure of. */
export type SettledRecord = { kind: 'finished'; restored?: HistoryEntry } | { kind: 'interrupted'; job: InterruptedJob; entry: HistoryEntry };

/** What the next start does with a record a dead process left: an ended job's history entry is made sure of, an interrupted job is settled and recorded. */
export async function settleRecord(history: HistoryStore, record: InFlightRecord, fallbackDir = FALLBACK_RECOVERY_DIR): Promise<SettledRecord> {
  if (record.finished || record.failed) {
    const restored = record.finished ? await recordFinished(history, record) : await recordFailed(history, record);
    return { kind: 'finished', ...(restored ? { restored } : {}) };
  }
  const job = await settleInterrupted(record, fallbackDir);
  return { kind: 'interrupted', job, entry: await recordInterrupted(history, job) };
}
