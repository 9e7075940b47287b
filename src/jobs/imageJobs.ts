// The ONE image job used by the palette, the explorer, the studio and the chat tool:
// validate -> check references -> estimate -> confirm -> send once -> stream to files -> update account.
// No vscode import: the UI is reached through the ports in JobDeps.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { CallOptions } from '../core/client';
import { checkAffordable, CostEstimate, estimateCost, formatRubles, FundsSnapshot } from '../core/cost';
import { CancelledError, CannotAffordError, GatewayError, ValidationError } from '../core/errors';
import type { ImageSink } from '../core/generationStream';
import { EDITABLE_MEDIA_TYPES, readImageHead, sniffImage } from '../core/imageSniff';
import { extensionOf, placeWithoutOverwrite, StagedImage, StagingSink, writeRecoveryManifest } from '../core/imageStore';
import { expandFileNamePattern } from '../core/naming';
import { addPngTextChunk } from '../core/pngText';
import type { ReferenceFile } from '../core/requestBodies';
import { tr } from '../core/i18n';
import { GenerationRequest, GenerationResponseMeta, ImageModel, Usage } from '../core/types';
import { validateRequest } from '../core/validation';
import { trPlural } from '../core/plural';

export const MAX_REFERENCE_BYTES = 25 * 1024 * 1024;

export type EditTransport = 'input_references' | 'multipart';

export interface ImageJob {
  request: GenerationRequest;
  /** Local reference images (editing). */
  references?: string[];
  transport?: EditTransport;
  output: {
    directory: string;
    /** File name pattern without extension (see naming.ts). */
    pattern: string;
    /** Base name of the first source, for `{name}` in edit patterns. */
    sourceName?: string;
  };
}

/** The paid part of the gateway client. */
export interface ImageApi {
  generate(request: GenerationRequest, sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta>;
  generateWithReferences(request: GenerationRequest, files: ReferenceFile[], sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta>;
  edit(request: GenerationRequest, files: ReferenceFile[], sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta>;
}

export interface ConfirmRequest {
  model: ImageModel;
  request: GenerationRequest;
  estimate: CostEstimate;
}

export type JobEvent =
  | { type: 'sending'; estimate: CostEstimate; model: ImageModel }
  | { type: 'image-received'; index: number; bytes: number }
  | { type: 'recovered'; manifestPath: string; files: string[]; reason: string }
  | { type: 'outcome-unknown'; error: GatewayError }
  | { type: 'provenance-failed'; file: string; reason: string };

export interface JobDeps {
  api: () => Promise<ImageApi>;
  models: () => Promise<ImageModel[]>;
  funds: () => FundsSnapshot;
  applyUsage: (usage: Usage) => void;
  /** Reconcile the account after a charge or an unknown outcome. */
  reconcile: () => void;
  /** Asked only when the reservation exceeds `confirmAbove()`; false cancels before sending. */
  confirm: (info: ConfirmRequest) => Promise<boolean>;
  confirmAbove: () => number;
  /** Whether saved PNGs carry their request in an iTXt chunk (setting gatewayImages.embedProvenance). Off when absent. */
  provenance?: () => boolean;
  recoveryDir: string;
  locale?: string;
  now?: () => Date;
  onEvent?: (event: JobEvent) => void;
}

export interface JobResult {
  files: string[];
  model: string;
  usage?: Usage;
  estimate: CostEstimate;
  /** Paid images that could not be placed into the workspace and wait in the recovery folder. */
  recovered?: { manifestPath: string; files: string[]; reason: string };
}

export interface RunOptions extends CallOptions {
  onEvent?: (event: JobEvent) => void;
  /** Ask for confirmation whatever the cost (an explicit "Try again" after an unknown outcome). */
  forceConfirm?: boolean;
}

export interface PreparedJob {
  model: ImageModel;
  estimate: CostEstimate;
  references: ReferenceFile[];
}

/** Keyword of the PNG iTXt chunk that holds a ProvenanceRecord as JSON. */
export const PROVENANCE_KEYWORD = 'gateway-images';

/** What a saved image was made with: enough to make it again (no reference data, no paths). */
export interface ProvenanceRecord {
  generator: 'gateway-images';
  version: 1;
  createdAt: string;
  model: string;
  prompt: string;
  seed?: number;
  /** The other request fields as sent (n, resolution, aspect_ratio, size, quality, ...). */
  parameters: Omit<GenerationRequest, 'model' | 'prompt' | 'seed' | 'input_references'>;
  /** Number of reference images of an edit. */
  references?: number;
  /** 1-based index of the image in its request. */
  index: number;
}

export function provenanceRecord(job: ImageJob, model: string, index: number, date: Date): ProvenanceRecord {
  const { model: _m, prompt, seed, input_references: urls, ...parameters } = job.request;
  const references = (job.references?.length ?? 0) || (urls?.length ?? 0);
  return {
    generator: 'gateway-images',
    version: 1,
    createdAt: date.toISOString(),
    model,
    prompt,
    ...(seed === undefined ? {} : { seed }),
    parameters,
    ...(references ? { references } : {}),
    index,
  };
}

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
      throw new ValidationError('input_references', tr('Send either local reference images or input_references URLs, not both: the URLs would be dropped.'));
    }
    const model = validateRequest(job.request, { models, referenceCount: references.length || urlCount });
    const estimate = estimateCost(model, job.request.n ?? 1);
    const affordable = checkAffordable(estimate, this.deps.funds());
    if (!affordable.ok) {
      const locale = this.deps.locale;
      const needed = formatRubles(affordable.needed, locale);
      const available = formatRubles(affordable.available, locale);
      throw new CannotAffordError(
        affordable.scope,
        affordable.needed,
        affordable.available,
        affordable.scope === 'balance'
          ? tr('The gateway reserves {0} for this request, but the account balance is {1}. Lower "n", choose a cheaper model, or top up.', needed, available)
          : tr('The gateway reserves {0} for this request, but the key\'s remaining budget is {1}. Lower "n", choose a cheaper model, or top up.', needed, available),
      );
    }
    return { model, estimate, references };
  }

  async run(job: ImageJob, options: RunOptions = {}): Promise<JobResult> {
    const prepared = await this.prepare(job);
    const { model, estimate, references } = prepared;
    const emit = (event: JobEvent) => {
      this.deps.onEvent?.(event);
      options.onEvent?.(event);
    };
    if (options.forceConfirm || estimate.reservation > this.deps.confirmAbove()) {
      const confirmed = await this.deps.confirm({ model, request: job.request, estimate });
      if (!confirmed) throw new CancelledError(tr('Not sent: the cost was not confirmed.'));
    }
    if (options.signal?.aborted) throw new CancelledError();

    const sink = new ReportingSink(new StagingSink(this.deps.recoveryDir), emit);
    emit({ type: 'sending', estimate, model });
    const api = await this.deps.api();
    let meta: GenerationResponseMeta;
    try {
      meta = await this.send(api, job, references, sink, { signal: options.signal });
    } catch (error) {
      await this.afterFailure(job, sink.staging, error, emit);
      throw error;
    }
    if (meta.usage) this.deps.applyUsage(meta.usage);
    this.deps.reconcile();
    return this.place(job, sink.staging, meta, estimate, emit);
  }

  private send(api: ImageApi, job: ImageJob, references: ReferenceFile[], sink: ImageSink, options: CallOptions) {
    if (!references.length) return api.generate(job.request, sink, options);
    const { input_references: _urls, ...request } = job.request;
    return job.transport === 'multipart'
      ? api.edit(request, references, sink, options)
      : api.generateWithReferences(request, references, sink, options);
  }

  /** Moves each staged image into the output folder; whatever cannot be moved stays recoverable. */
  private async place(
    job: ImageJob,
    staging: StagingSink,
    meta: GenerationResponseMeta,
    estimate: CostEstimate,
    emit: (event: JobEvent) => void,
  ): Promise<JobResult> {
    const date = this.deps.now?.() ?? new Date();
    const files: string[] = [];
    const left: { image: StagedImage; name: string; ext: string }[] = [];
    let reason = '';
    for (const image of staging.images) {
      const baseName = expandFileNamePattern(job.output.pattern, {
        date,
        prompt: job.request.prompt,
        model: meta.model ?? job.request.model,
        index: image.index + 1,
        seed: job.request.seed,
        sourceName: job.output.sourceName,
      });
      const ext = extensionOf(image, meta.images[image.index]?.mediaType);
      if (ext === 'png' && this.deps.provenance?.()) {
        // Written into the staged file before it is placed. A failure only loses the record (history keeps it).
        const record = provenanceRecord(job, meta.model ?? job.request.model, image.index + 1, date);
        await addPngTextChunk(image.path, PROVENANCE_KEYWORD, JSON.stringify(record)).catch((error: unknown) =>
          emit({ type: 'provenance-failed', file: image.path, reason: error instanceof Error ? error.message : String(error) }),
        );
      }
      try {
        files.push(await placeWithoutOverwrite(image.path, job.output.directory, baseName, ext));
      } catch (error) {
        reason ||= describeFsError(error, job.output.directory);
        left.push({ image, name: baseName, ext });
      }
    }
    const result: JobResult = { files, model: meta.model ?? job.request.model, usage: meta.usage, estimate };
    if (left.length) result.recovered = await this.keepForRecovery(job, staging, left, reason, emit);
    return result;
  }

  /** A failed request may still have delivered complete, paid images: keep them. */
  private async afterFailure(job: ImageJob, staging: StagingSink, error: unknown, emit: (event: JobEvent) => void): Promise<void> {
    if (error instanceof GatewayError && error.outcomeUnknown) {
      emit({ type: 'outcome-unknown', error });
      this.deps.reconcile();
    }
    const images = staging.images;
    if (!images.length) return;
    const left = images.map((image) => ({ image, name: `${path.basename(image.path, '.img')}`, ext: extensionOf(image) }));
    const reason = trPlural(images.length, { one: 'the request failed after {0} image arrived: {1}', other: 'the request failed after {0} images arrived: {1}' }, images.length, error instanceof Error ? error.message : String(error));
    await this.keepForRecovery(job, staging, left, reason, emit);
  }

  private async keepForRecovery(
    job: ImageJob,
    staging: StagingSink,
    left: { image: StagedImage; name: string; ext: string }[],
    reason: string,
    emit: (event: JobEvent) => void,
  ): Promise<{ manifestPath: string; files: string[]; reason: string }> {
    const files = left.map((l) => l.image.path);
    const manifestPath = await writeRecoveryManifest(staging.dir, {
      jobId: staging.jobId,
      createdAt: new Date().toISOString(),
      prompt: job.request.prompt,
      model: job.request.model,
      intendedDirectory: job.output.directory,
      reason,
      files: left.map((l) => ({ path: l.image.path, suggestedName: `${l.name}.${l.ext}` })),
    });
    emit({ type: 'recovered', manifestPath, files, reason });
    return { manifestPath, files, reason };
  }
}

/** Reference files are checked before anything is reserved: readable, an image by its bytes, at most 25 MB. */
export async function checkReferenceFiles(paths: string[]): Promise<ReferenceFile[]> {
  const files: ReferenceFile[] = [];
  for (const file of paths) {
    const name = path.basename(file);
    let size: number;
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile()) throw new Error('not a file');
      size = stat.size;
    } catch {
      throw new ValidationError('images', tr('Cannot read "{0}": the file does not exist or is not readable.', name));
    }
    if (size > MAX_REFERENCE_BYTES) {
      const mb = (bytes: number) => tr('{0} MB', (bytes / 1024 / 1024).toFixed(1));
      throw new ValidationError('images', tr('"{0}" is {1}; the gateway accepts reference images of at most 25 MB.', name, mb(size)));
    }
    let head: Buffer;
    try {
      head = await readImageHead(file);
    } catch {
      throw new ValidationError('images', tr('Cannot read "{0}".', name));
    }
    const kind = sniffImage(head);
    if (!kind || !EDITABLE_MEDIA_TYPES.includes(kind.mediaType)) {
      throw new ValidationError('images', tr('"{0}" is not a PNG, JPEG or WebP image (checked by its content, not its extension).', name), ['png', 'jpeg', 'webp']);
    }
    files.push({ path: file, mediaType: kind.mediaType, size });
  }
  return files;
}

function describeFsError(error: unknown, dir: string): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  const reasons: Record<string, () => string> = {
    EACCES: () => tr('the folder is not writable'),
    EPERM: () => tr('the folder is not writable'),
    EROFS: () => tr('the folder is on a read-only file system'),
    ENOSPC: () => tr('the disk is full'),
    ENOTDIR: () => tr('a file stands where the folder should be'),
  };
  const reason = code && Object.hasOwn(reasons, code) ? reasons[code]() : error instanceof Error ? error.message : String(error);
  return tr('could not save into {0}: {1}', dir, reason);
}

/** Forwards to the staging sink and reports each completed image. */
class ReportingSink implements ImageSink {
  constructor(
    readonly staging: StagingSink,
    private readonly onEvent?: (event: JobEvent) => void,
  ) {}

  async open(index: number) {
    const writer = await this.staging.open(index);
    let bytes = 0;
    return {
      write: (chunk: Buffer) => {
        bytes += chunk.length;
        return writer.write(chunk);
      },
      close: async () => {
        await writer.close();
        this.onEvent?.({ type: 'image-received', index, bytes });
      },
      abort: (reason: Error) => writer.abort(reason),
    };
  }
}
