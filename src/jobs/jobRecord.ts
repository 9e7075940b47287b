// How a job's outcome enters the results journal (history.ts): a result as its images are saved and
// then with its cost, and a paid request that did not deliver its images (PaidFailure) as paid, with
// where its images or its answer wait. The one way results are written (single jobs, prompt-file
// lines, comparisons). Each write stands alone and writes the entry whole, under one id: a write
// that fails (a full disk, a lock not had in time) does not stop the next, and the job's last write
// (finish or failed) writes what any earlier one missed; when that one fails too, the job's in-flight
// record stays and the next start writes the result from it (interrupted.ts). No vscode import.
import { randomUUID } from 'node:crypto';
import type { HistoryEntry, HistoryStore } from './results/history';
import type { PaidFailure } from './jobTypes';

/** What a job tells the history about itself; the rest comes from its result. */
export type JobDetails = Pick<HistoryEntry, 'request' | 'references' | 'model' | 'batch' | 'comparison' | 'style' | 'origin' | 'region'>;

/** The parts of a job's result that the history keeps. */
export interface RecordedResult {
  request?: HistoryEntry['request'];
  files: string[];
  model: string;
  usage?: { cost_rub?: number; balance?: number };
  recovered?: { manifestPath?: string; files: string[] };
  /** The job's id (its in-flight record's): written with the final state, so settling at start-up knows the result was recorded. */
  jobId?: string;
  /** The gateway's id of the request (the CSV export lists it). */
  requestId?: string;
  /** The gateway and key it was paid with: the ledger compares only this key's results with the key's figures. */
  identity?: string;
  /** A region edit's record as it ended (the mask kept beside the result): replaces the one it started with. */
  region?: HistoryEntry['region'];
}

type FinalState = Pick<HistoryEntry, 'costRub' | 'balanceAfter' | 'jobId' | 'failed' | 'outcomeUnknown' | 'requestId' | 'identity'>;

/**
 * The history entry of one job. Kept up to date while images are saved one by one, so the gallery
 * shows each image as soon as it is in the workspace (also those of a job that then failed). A paid
 * job whose images all went to the recovery folder is recorded too, with where they are; so is a
 * paid request that failed.
 */
export class JobHistoryRecord {
  /** The entry's id in every write: a write that landed although it reported a failure is replaced by the next, never doubled. */
  private readonly id = randomUUID();
  /** Set by the first write tried (it may have landed). */
  private createdAt?: string;
  private files: string[] = [];
  private recovered?: HistoryEntry['recovered'];
  private final: FinalState = {};
  /** A paid failure is written even without files. */
  private paid = false;
  /** The state the journal has for sure (the last write that landed): a write of the same state is not made again. */
  private landed?: string;
  private queue: Promise<void> = Promise.resolve();
  private details: JobDetails;

  constructor(
    private readonly store: HistoryStore,
    details: JobDetails,
  ) {
    this.details = { ...details, request: withoutReferenceData(details.request) };
  }

  /** The id of the journal entry, once the job has one. */
  get entryId(): string | undefined {
    return this.landed === undefined ? undefined : this.id;
  }

  saved(file: string): Promise<void> {
    if (!this.files.includes(file)) this.files.push(file);
    return this.write();
  }

  /** The job's final files (and those kept for recovery), model and cost. */
  finish(result: RecordedResult): Promise<void> {
    this.files = [...result.files];
    this.recovered = result.recovered?.files.length ? { manifestPath: result.recovered.manifestPath, files: [...result.recovered.files] } : undefined;
    this.details = {
      ...this.details,
      model: result.model,
      request: withoutReferenceData(result.request ?? this.details.request),
      ...(result.region ? { region: result.region } : {}),
    };
    this.final = {
      costRub: result.usage?.cost_rub,
      balanceAfter: result.usage?.balance,
      ...(result.jobId ? { jobId: result.jobId } : {}),
      ...(result.requestId ? { requestId: result.requestId } : {}),
      ...(result.identity ? { identity: result.identity } : {}),
    };
    return this.write();
  }

  /** A paid request that failed: recorded as paid (or perhaps paid), with what it saved and what waits for Recover. */
  failed(failure: PaidFailure): Promise<void> {
    this.files = [...new Set([...this.files, ...failure.files])];
    this.recovered = recoveredOf(failure);
    this.details = { ...this.details, model: failure.model, request: withoutReferenceData(failure.request) };
    this.final = failureState(failure);
    this.paid = true;
    return this.write();
  }

  /**
   * Writes the entry whole, as it is when the write runs, after the writes asked before it (an early
   * state never overtakes a later one). One that fails rejects for its caller and leaves the next to
   * run: the next writes the whole state, so what this one missed lands then.
   */
  private write(): Promise<void> {
    const run = this.queue.then(async () => {
      const state = { ...this.details, ...this.final, files: [...this.files], ...(this.recovered ? { recovered: this.recovered } : {}) };
      if (this.createdAt === undefined && !this.paid && !state.files.length && !this.recovered) return;
      const text = JSON.stringify(state);
      if (text === this.landed) return;
      this.createdAt ??= new Date().toISOString();
      await this.store.put({ ...state, id: this.id, createdAt: this.createdAt });
      this.landed = text;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** What the journal keeps of a paid failure besides its files. */
function failureState(failure: PaidFailure): FinalState {
  return {
    failed: failure.reason,
    jobId: failure.jobId,
    ...(failure.identity ? { identity: failure.identity } : {}),
    ...(failure.charged === 'unknown' ? { outcomeUnknown: true as const } : {}),
    ...(failure.requestId ? { requestId: failure.requestId } : {}),
    ...(failure.costRub !== undefined ? { costRub: failure.costRub } : {}),
  };
}

/** The images a failure kept in the recovery folder, and its answer as it came (apart: an answer is no image). */
function recoveredOf(failure: PaidFailure): HistoryEntry['recovered'] {
  const kept = failure.recovered;
  if (!kept) return undefined;
  const images = kept.files.filter((f) => f !== kept.answer);
  return { manifestPath: kept.manifestPath, files: images, ...(kept.answer ? { answer: kept.answer } : {}) };
}

/** The request as the history keeps it: data URLs of references are never stored. */
function withoutReferenceData(request: HistoryEntry['request']): HistoryEntry['request'] {
  const { input_references: _data, ...rest } = request;
  return rest;
}

/** Records a finished job in one write (prompt-file lines, comparisons). */
export function recordResult(store: HistoryStore, details: JobDetails, result: RecordedResult): Promise<void> {
  return new JobHistoryRecord(store, details).finish(result);
}

/** Records a paid failure in one write (prompt-file lines, comparisons). */
export function recordFailure(store: HistoryStore, details: JobDetails, failure: PaidFailure): Promise<void> {
  return new JobHistoryRecord(store, details).failed(failure);
}

/** One file Recover moved out of the recovery folder: from where, to where, and whether it is a whole image. */
export interface RecoveredMove {
  from: string;
  to: string;
  image: boolean;
  whole: boolean;
}

/**
 * Recover moved a job's files into the workspace: its entry learns where they went (a re-run of its
 * prompt-file line then finds them there, whatever their format), and what still waits. Resolves to
 * whether the journal had the job.
 */
export async function recordRecovered(store: HistoryStore, jobId: string, moves: readonly RecoveredMove[]): Promise<boolean> {
  const entry = (await store.index()).findByJob(jobId);
  if (!entry) return false;
  const gone = new Set(moves.map((m) => m.from));
  const placed = moves.filter((m) => m.image && m.whole).map((m) => m.to);
  const left = entry.recovered && {
    ...entry.recovered,
    files: entry.recovered.files.filter((f) => !gone.has(f)),
    ...(entry.recovered.answer && !gone.has(entry.recovered.answer) ? { answer: entry.recovered.answer } : { answer: undefined }),
  };
  const stillWaiting = left && (left.files.length || left.answer) ? left : undefined;
  await store.update(entry.id, { files: [...new Set([...entry.files, ...placed])], recovered: stillWaiting });
  return true;
}
