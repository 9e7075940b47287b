// The ONE image job used by the palette, the explorer, the studio and the chat tool:
// validate -> check references -> estimate -> confirm -> send once -> stream to files -> update account.
// No vscode import: the UI is reached through the ports in JobDeps.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { CallOptions } from '../core/client/client';
import { cannotAfford, checkAffordable, type CostEstimate, estimateCost, formatRubles, toKopecks } from '../core/money/cost';
import { ApiError, CancelledError, GatewayError, InsufficientFundsError, ReservationRoseError, ValidationError } from '../core/gateway/errors';
import type { ImageSink } from '../core/gateway/imageSink';
import { filesWithoutAlpha } from '../core/images/imageHeader';
import { stoppedByProxy } from '../core/gateway/networkErrors';
import { extensionOf, linkWithoutOverwrite, makeFolder, removeEmptyFolders, type StagedImage, StagingSink } from '../core/files/imageStore';
import { expandFileNamePattern } from '../core/files/naming';
import { buildITXtChunk, NOT_A_PNG } from '../core/files/pngText';
import type { ReferenceFile } from '../core/requests/requestBodies';
import * as l10n from '@vscode/l10n';
import { wantsTransparency, withAlphaFormat } from '../core/requests/transparency';
import type { GenerationResponseMeta, ImageModel } from '../core/gateway/types';
import { normalizeRequest, validateRequest } from '../core/requests/validation';
import { CancelUntilPaid } from './cancelUntilPaid';
import { checkReferenceFiles, describeFsError, ReportingSink } from './jobFiles';
import type { InFlightHandle } from './inFlight';
import { beginJobRecord, runUnderRecord } from './inFlightJob';
import { keepAfterFailure, keepForRecovery, type Placement, type RecoveryContext, undownloaded } from './jobRecovery';
import type { ImageApi, ImageJob, JobDeps, JobEvent, JobResult, PaidFailure, PreparedJob, RunOptions } from './jobTypes';
import { PROVENANCE_KEYWORD, provenanceRecord } from './provenance';

export class ImageJobService {
  constructor(private readonly deps: JobDeps) {}

  /**
   * The same service with some ports replaced, e.g. the chat tool's `confirmAbove` (its own
   * confirmation already showed the cost, so the job asks again only above what was confirmed).
   */
  withDeps(overrides: Partial<JobDeps>): ImageJobService {
    return new ImageJobService({ ...this.deps, ...overrides });
  }

  /** Everything that happens before money is involved: validation, reference checks, estimate, funds. */
  async prepare(job: ImageJob): Promise<PreparedJob> {
    const references = await checkReferenceFiles(job.references ?? []);
    const models = await this.deps.models();
    // URL references in the request count too (a count of 0 would hide them from validation).
    const urlCount = job.request.input_references?.length ?? 0;
    if (references.length && urlCount) {
      throw new ValidationError(
        'input_references',
        l10n.t('Send either local reference images or input_references URLs, not both: the URLs would be dropped.'),
      );
    }
    const referenceCount = references.length || urlCount;
    let { request, notes } = normalizeRequest(job.request, models);
    let model: ImageModel;
    try {
      model = validateRequest(request, { models, referenceCount });
    } catch (error) {
      // A model missing from the cache may be new: one fresh read of the catalog before refusing.
      const fresh = error instanceof ValidationError && error.field === 'model' && !models.some((m) => m.id === request.model) && this.deps.refreshModels;
      if (!fresh) throw error;
      const refreshed = await this.deps.refreshModels!();
      ({ request, notes } = normalizeRequest(job.request, refreshed));
      model = validateRequest(request, { models: refreshed, referenceCount });
    }
    request = withAlphaFormat(request, model);
    const estimate = estimateCost(model, request.n ?? 1);
    const affordable = checkAffordable(estimate, await this.deps.funds());
    if (affordable.ok && affordable.budgetShort) {
      const locale = this.deps.locale;
      notes = [
        ...notes,
        l10n.t(
          "The key's remaining budget ({0}) looks lower than the reservation ({1}); sent anyway, the gateway decides.",
          formatRubles(affordable.budgetShort.available, locale),
          formatRubles(affordable.budgetShort.needed, locale),
        ),
      ];
    }
    if (!affordable.ok) throw cannotAfford(affordable, 1, this.deps.locale);
    return { request, notes, model, estimate, references };
  }

  async run(job: ImageJob, options: RunOptions = {}): Promise<JobResult> {
    const prepared = await this.prepare(job);
    const { model, estimate, notes } = prepared;
    // From here on the job is the normalised one: that is what is confirmed, sent and named.
    job = { ...job, request: prepared.request };
    const emit = (event: JobEvent) => {
      this.deps.onEvent?.(event);
      options.onEvent?.(event);
    };
    for (const message of notes) emit({ type: 'notice', message });
    if (options.confirmedReservation !== undefined) {
      // The catalog may have been refreshed since the confirmation or check: send at most that much.
      if (toKopecks(estimate.reservation) > toKopecks(options.confirmedReservation)) {
        throw new ReservationRoseError(
          options.confirmedReservation,
          estimate.reservation,
          l10n.t(
            'Not sent: {0} now reserves {1}, more than the {2} confirmed or checked for it (its price rose since). Check the cost again.',
            model.id,
            formatRubles(estimate.reservation, this.deps.locale),
            formatRubles(options.confirmedReservation, this.deps.locale),
          ),
        );
      }
    } else if (options.forceConfirm || options.resend || estimate.reservation > this.deps.confirmAbove()) {
      const confirmed = await this.deps.confirm({
        model,
        request: job.request,
        estimate,
        style: job.style,
        ...(options.resend ? { resend: true } : {}),
        ...(job.region ? { region: job.region.description } : {}),
        ...(job.region?.format === 'jpeg' ? { regionFormat: 'jpeg' as const } : {}),
      });
      if (!confirmed) throw new CancelledError(l10n.t('Not sent: the cost was not confirmed.'));
    }
    // Cancelled while the job was checked or confirmed: nothing has gone out, and the person is told so.
    if (options.signal?.aborted) throw CancelledError.beforeSending();

    // Each image is placed as soon as it is complete (the first one early, not at the end).
    const date = this.deps.now?.() ?? new Date();
    const early = new Map<number, Promise<Placement>>();
    const cancel = new CancelUntilPaid(options.signal, () => emit({ type: 'cancel-after-charge' }));
    // Provenance goes into each PNG as it is written (StagingSink), not into the file afterwards.
    const provenance = this.deps.provenance?.() ?? false;
    const pngChunkFor = provenance
      ? (index: number) => buildITXtChunk(PROVENANCE_KEYWORD, JSON.stringify(provenanceRecord(job, job.request.model, index + 1, date)))
      : undefined;
    // The output folder is made while the answer's bytes arrive, not after the first image.
    const placing: Placing = { provenance, emit };
    const sink = new ReportingSink(new StagingSink(this.deps.recoveryDir, { pngChunkFor }), emit, (image) => {
      // Without magic bytes the extension waits for the response's media_type (placed at the end).
      if (image.sniffed) early.set(image.index, this.placeOne(job, image, job.request.model, date, extensionOf(image), placing));
    });
    const api = await this.deps.api();
    const inFlight = await beginJobRecord(this.deps.inFlight, job, {
      id: sink.staging.jobId,
      reservation: estimate.reservation,
      stagingDir: this.deps.recoveryDir,
    });
    placing.inFlight = inFlight;
    const send = async () => {
      await options.beforeRequest?.(sink.staging.jobId);
      return this.sendAndPlace(api, job, prepared, { sink, early, placing, date, emit, cancel });
    };
    return runUnderRecord(inFlight, send, {
      settle: options.settle,
      // Noted in the record first: should the journal refuse it, the next start records it from there.
      settleFailure:
        options.settleFailure &&
        (async () => {
          const failure = placing.paidFailure;
          if (!failure) return;
          await inFlight?.fail(failure);
          await options.settleFailure!(failure);
        }),
    });
  }

  private async sendAndPlace(
    api: ImageApi,
    job: ImageJob,
    { model, estimate, references, notes }: PreparedJob,
    { sink, early, placing, date, emit, cancel }: Sending,
  ): Promise<JobResult> {
    const inFlight = placing.inFlight;
    // Held from here; given back when nothing left (the client's first read of the body never came).
    const hold = this.deps.cap?.reserve(estimate.reservation);
    emit({ type: 'sending', estimate, model });
    let sent: string | undefined;
    /** The gateway and key the request went out with: a paid failure is recorded as that key's. */
    let sentWith: string | undefined;
    let answered = false;
    const recovery: RecoveryContext = { job, staging: sink.staging, emit, date, ...(this.deps.resultsJournal ? { journal: this.deps.resultsJournal } : {}) };
    let meta: GenerationResponseMeta;
    try {
      meta = await this.send(api, job, references, sink, {
        signal: cancel.signal,
        onSent: ({ identity }) => {
          sent = new Date().toISOString();
          sentWith = identity;
          emit({ type: 'sent' });
        },
        onPaidAnswer: ({ requestId }) => {
          answered = true;
          cancel.paidAnswerArrived();
          recovery.requestId = requestId;
          void inFlight?.note({ answeredAt: new Date().toISOString(), ...(requestId ? { requestId } : {}), ...(sentWith ? { identity: sentWith } : {}) });
          placing.folder = makeFolder(job.output.directory);
          emit({ type: 'answered' });
        },
      });
    } catch (error) {
      // Only a refusal proves nothing was charged once the body left: the gateway's in its own form
      // (an error answer the client did not mark unknown), or a proxy's 407 (the request went no
      // further). Any other failure after that (a 5xx, a proxy's page, a broken connection, a full
      // disk while saving) counts the whole reservation.
      if (!sent || (error instanceof ApiError && !error.outcomeUnknown) || stoppedByProxy(error)) hold?.release();
      else hold?.settle(undefined);
      // Only the gateway's own refusal (not a proxy's 402 page, which may have been charged) holds later requests back.
      if (error instanceof InsufficientFundsError && !error.outcomeUnknown) this.deps.fundsRefused?.(error.scope);
      if (error instanceof GatewayError && error.outcomeUnknown) {
        emit({ type: 'outcome-unknown', error });
        this.deps.reconcile();
      }
      const placed = await settle(early);
      // Should even the manifest fail, the kept files are still listed by Recover (as left behind).
      const kept = await keepAfterFailure(recovery, placed, error).catch(() => undefined);
      const files = [...placed.values()].flatMap((p) => (p.file && !p.reason ? [p.file] : []));
      if (![...placed.values()].some((p) => p.file)) await removeUnusedFolder(job, placing);
      // Its answer arrived (charged), or it may have reached the gateway: a paid request without its images.
      const charged = answered ? true : error instanceof GatewayError && error.outcomeUnknown ? 'unknown' : undefined;
      if (answered && error instanceof GatewayError) error.charged = true;
      if (charged && sent) {
        placing.paidFailure = {
          jobId: sink.staging.jobId,
          request: job.request,
          model: job.request.model,
          charged,
          files,
          sentAt: sent,
          failedAt: new Date().toISOString(),
          estimate,
          reason: error instanceof Error ? error.message : String(error),
          ...(kept ? { recovered: kept } : {}),
          ...(recovery.requestId ? { requestId: recovery.requestId } : {}),
          ...(error instanceof GatewayError && error.keptAnswer?.costRub !== undefined ? { costRub: error.keptAnswer.costRub } : {}),
          ...(sentWith ? { identity: sentWith } : {}),
        };
      }
      throw error;
    } finally {
      cancel.dispose();
    }
    hold?.settle(meta.usage?.cost_rub);
    if (meta.usage) this.deps.applyUsage(meta.usage, meta.identity);
    this.deps.reconcile();
    const placed = await this.place(recovery, meta, estimate, date, await settle(early), placing);
    if (!placed.files.length) await removeUnusedFolder(job, placing);
    return {
      ...placed,
      jobId: sink.staging.jobId,
      request: job.request,
      ...(recovery.requestId ? { requestId: recovery.requestId } : {}),
      ...(meta.identity ? { identity: meta.identity } : {}),
      ...(notes.length ? { notes } : {}),
    };
  }

  /** Places one staged image; a failure leaves it staged (for recovery) and says why. */
  private async placeOne(job: ImageJob, image: StagedImage, model: string, date: Date, ext: string, placing: Placing): Promise<Placement> {
    const { emit, provenance } = placing;
    let baseName = path.basename(image.path, '.img');
    try {
      baseName = expandFileNamePattern(job.output.pattern, {
        date,
        prompt: job.request.prompt,
        model,
        index: image.index + 1,
        seed: job.request.seed,
        sourceName: job.output.sourceName,
      });
    } catch (error) {
      return { image, name: baseName, ext, reason: error instanceof Error ? error.message : String(error) };
    }
    if (ext === 'png' && provenance && image.pngChunk !== 'added') {
      // Added while the image was written (StagingSink). A failure only loses the record (history keeps it).
      emit({ type: 'provenance-failed', file: image.path, reason: image.pngChunk?.error ?? NOT_A_PNG });
    }
    let file: string;
    try {
      await placing.folder;
      file = await linkWithoutOverwrite(image.path, job.output.directory, baseName, ext);
    } catch (error) {
      return { image, name: baseName, ext, reason: describeFsError(error, job.output.directory) };
    }
    // Shown as soon as it is linked. The staged name goes once the bytes are on disk (the link
    // shares them): after a failed sync it stays, for recovery, and says why.
    emit({ type: 'image-saved', index: image.index, file });
    await placing.inFlight?.note({ placedFile: file });
    const syncFailure = await image.durable;
    if (syncFailure) {
      const reason = l10n.t('the bytes of {0} may not be on disk: writing them failed ({1}); a copy is kept in the recovery folder', file, syncFailure.message);
      return { image, name: baseName, ext, file, reason };
    }
    try {
      await fs.rm(image.path, { force: true });
    } catch (error) {
      // Placed, but the staged copy could not be removed: it is kept for recovery, and says why.
      return { image, name: baseName, ext, reason: describeFsError(error, path.dirname(image.path)) };
    }
    return { image, name: baseName, ext, file };
  }

  private send(api: ImageApi, job: ImageJob, references: ReferenceFile[], sink: ImageSink, options: CallOptions) {
    if (!references.length) return api.generate(job.request, sink, options);
    const { input_references: _urls, ...request } = job.request;
    return job.transport === 'multipart' ? api.edit(request, references, sink, options) : api.generateWithReferences(request, references, sink, options);
  }

  /** Collects what was placed early, places the rest; whatever cannot be moved (or synced) stays recoverable. */
  private async place(
    recovery: RecoveryContext,
    meta: GenerationResponseMeta,
    estimate: CostEstimate,
    date: Date,
    early: Map<number, Placement>,
    placing: Placing,
  ): Promise<JobResult> {
    const { job, staging } = recovery;
    const { emit } = placing;
    const files: string[] = [];
    const left: Placement[] = [];
    let reason = '';
    for (const image of staging.images) {
      const placement =
        early.get(image.index) ?? (await this.placeOne(job, image, job.request.model, date, extensionOf(image, meta.images[image.index]?.mediaType), placing));
      if (placement.file) files.push(placement.file);
      if (placement.reason !== undefined) {
        reason ||= placement.reason;
        left.push(placement);
      }
    }
    const result: JobResult = { files, model: meta.model ?? job.request.model, usage: meta.usage, estimate };
    if (wantsTransparency(job.request)) {
      const opaque = await filesWithoutAlpha(files);
      if (opaque.length) {
        result.opaque = opaque;
        emit({ type: 'opaque-result', files: opaque });
      }
    }
    // Images the answer gave as addresses that could not be downloaded: paid, so their addresses wait for Recover.
    const addresses = undownloaded(meta.images);
    if (left.length || addresses.length) result.recovered = await keepForRecovery(recovery, left, reason, { addresses, costRub: meta.usage?.cost_rub });
    return result;
  }
}

/** What placing the images of one job needs. */
interface Placing {
  provenance: boolean;
  emit: (event: JobEvent) => void;
  /** The output folder being made since the answer arrived: the first folder created, if any. */
  folder?: Promise<string | undefined>;
  /** The job's in-flight record: placed files are noted in it. */
  inFlight?: InFlightHandle;
  /** Set when the request failed after it was paid for, or may have been. */
  paidFailure?: PaidFailure;
}

/** What run() hands to sendAndPlace: the sink, the early placements and the job's ports. */
interface Sending {
  sink: ReportingSink;
  early: Map<number, Promise<Placement>>;
  placing: Placing;
  date: Date;
  emit: (event: JobEvent) => void;
  cancel: CancelUntilPaid;
}

/** For a job that placed nothing: removes the folders it made itself, each only while empty. */
async function removeUnusedFolder(job: ImageJob, placing: Placing): Promise<void> {
  const created = await placing.folder;
  if (created) await removeEmptyFolders(job.output.directory, created);
}

async function settle(pending: Map<number, Promise<Placement>>): Promise<Map<number, Placement>> {
  const done = new Map<number, Placement>();
  for (const [index, placement] of pending) done.set(index, await placement);
  return done;
}
