// Compare Models: one prompt (and references, for editing) sent to 2 to 6 models, each one paid
// request sent once, a few at a time, each succeeding or failing on its own. No vscode import.
import { canEdit } from '../core/gateway/catalog';
import { GatewayError, refusedBeforeSending } from '../core/gateway/errors';
import { type GenerationRequest, type ImageModel } from '../core/gateway/types';
import { collectIssues } from '../core/requests/validation';
import { type ImageJobService } from './imageJobs';
import type { HistoryStore } from './results/history';
import { recordFailure, recordResult } from './jobRecord';
import type { ImageJob, JobResult, PaidFailure } from './jobTypes';
import { runBounded } from './pool';
import { settleBy } from './settle';

export const MIN_COMPARE_MODELS = 2;
export const MAX_COMPARE_MODELS = 6;

export type CompareOptions = Omit<GenerationRequest, 'model' | 'prompt' | 'input_references'>;

/** Models that accept this request: generation or editing with this many references, and every option set. */
export function eligibleModels(models: readonly ImageModel[], prompt: string, options: CompareOptions, referenceCount: number): ImageModel[] {
  return models.filter((model) => {
    if (referenceCount === 0 ? !model.supports_generation : !canEdit(model) || model.max_input_references < referenceCount) return false;
    const request = { ...options, model: model.id, prompt: prompt || '-' };
    return collectIssues(request, { models: [model], referenceCount }).length === 0;
  });
}

export type CompareStatus = 'waiting' | 'running' | 'done' | 'failed' | 'outcome-unknown' | 'not-sent';

export interface CompareEntry {
  model: string;
  status: CompareStatus;
  files: string[];
  costRub?: number;
  /** Time from sending to the saved files, milliseconds. */
  ms?: number;
  error?: string;
}

export interface ComparisonRun {
  jobs: ImageJobService;
  concurrency: number;
  /** What was confirmed for each job, in order (the run's total was): a model whose price rose since is not sent. */
  confirmedReservations: readonly number[];
  signal?: AbortSignal;
  now?: () => number;
  /** Every change of an entry (the studio's grid follows it). */
  onUpdate?: (entries: readonly CompareEntry[]) => void;
  /** Where each model's result is recorded, as part of this comparison run. */
  history?: {
    store: HistoryStore;
    runId: string;
    warn: (message: string) => void;
    /** A model's paid request without its images was recorded (the host checks an unknown outcome later). */
    onPaidFailure?: (failure: PaidFailure) => void;
  };
}

export async function runComparison(jobsByModel: readonly ImageJob[], run: ComparisonRun): Promise<CompareEntry[]> {
  const now = run.now ?? Date.now;
  const entries: CompareEntry[] = jobsByModel.map((job) => ({ model: job.request.model, status: 'waiting', files: [] }));
  const update = (index: number, change: Partial<CompareEntry>) => {
    entries[index] = { ...entries[index]!, ...change }; // index: the pool's index into jobsByModel, which entries mirrors
    run.onUpdate?.(entries.map((e) => ({ ...e })));
  };
  await runBounded(
    jobsByModel,
    run.concurrency,
    async (job, index) => {
      const started = now();
      update(index, { status: 'running' });
      try {
        const history = run.history;
        // Paid: recorded even when every image went to the recovery folder, before the job's in-flight record goes.
        const details = (model: string) => ({
          request: job.request,
          references: job.references,
          model,
          comparison: history!.runId,
          style: job.style,
          origin: { kind: 'compare' as const },
        });
        const settle = history && settleBy((result: JobResult) => recordResult(history.store, details(result.model), result), history.warn, job.request.model);
        // Paid without its images: recorded as paid too.
        const settleFailure =
          history &&
          settleBy(
            async (failure: PaidFailure) => {
              await recordFailure(history.store, details(failure.model), failure);
              history.onPaidFailure?.(failure);
            },
            history.warn,
            job.request.model,
          );
        const result = await run.jobs.run(job, { signal: run.signal, confirmedReservation: run.confirmedReservations[index], settle, settleFailure });
        update(index, { status: 'done', files: [...result.files, ...(result.recovered?.files ?? [])], costRub: result.usage?.cost_rub, ms: now() - started });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const status: CompareStatus =
          error instanceof GatewayError && error.outcomeUnknown ? 'outcome-unknown' : refusedBeforeSending(error) ? 'not-sent' : 'failed';
        update(index, { status, error: message, ms: now() - started });
      }
    },
    run.signal,
  );
  entries.forEach((e, i) => e.status === 'waiting' && update(i, { status: 'not-sent' }));
  return entries;
}
