// What a job keeps when its paid images cannot all be placed, or its paid answer cannot be read, or
// images the answer gave as addresses could not be downloaded: the images, what the gateway sent and
// the addresses go to the recovery folder with a manifest, and the user is told where (Recover
// Unsaved Images reads the answer again and downloads the addresses again). No vscode import.
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { GatewayError } from '../core/gateway/errors';
import { extensionForMediaType } from '../core/images/imageSniff';
import { extensionOf, type StagedImage, type StagingSink } from '../core/files/imageStore';
import { expandFileNamePattern } from '../core/files/naming';
import { trPlural } from '../core/common/plural';
import { type RecoveryFile, writeRecoveryManifest } from '../core/files/recoveryManifest';
import type { GeneratedImageMeta } from '../core/gateway/types';
import { shownAddress } from '../core/answers/shownAddress';
import type { ImageJob, JobEvent, RecoveredFiles } from './jobTypes';

/** One staged image of a job, and where it went: `file` when placed, `reason` when it is kept for recovery (both: placed, but not safely). */
export interface Placement {
  image: StagedImage;
  name: string;
  ext: string;
  file?: string;
  reason?: string;
}

export interface RecoveryContext {
  job: ImageJob;
  staging: StagingSink;
  emit: (event: JobEvent) => void;
  /** The gateway's id of the paid request (from its answer's headers). */
  requestId?: string;
  /** The results journal the job's entry goes into. */
  journal?: string;
  /** The job's date, for `{date}` in the names of images that wait at an address. */
  date?: Date;
}

/**
 * A request failed after its answer began: complete images that could not be placed, and what was
 * received of the rest of the answer, go to the recovery folder. The error's message then says where
 * everything is, and `error.recovered` lets the one who shows it offer Recover.
 */
export async function keepAfterFailure(context: RecoveryContext, placed: Map<number, Placement>, error: unknown): Promise<RecoveredFiles | undefined> {
  const { staging } = context;
  // Images placed safely stay in the workspace; the others wait in the recovery folder.
  const images = staging.images.filter((image) => !placed.get(image.index)?.file || placed.get(image.index)?.reason);
  const answer = error instanceof GatewayError ? error.keptAnswer : undefined;
  const saved = [...placed.values()].flatMap((p) => (p.file ? [p.file] : []));
  if (!images.length && !answer) return undefined;
  const left: Placement[] = images.map((image) => placed.get(image.index) ?? { image, name: path.basename(image.path, '.img'), ext: extensionOf(image) });
  const failure = error instanceof Error ? error.message : String(error);
  let reason = images.length
    ? trPlural(
        images.length,
        { one: 'the request failed after {0} image arrived: {1}', other: 'the request failed after {0} images arrived: {1}' },
        images.length,
        failure,
      )
    : failure;
  if (answer?.failure) reason = `${reason} ${l10n.t('Not all of what the gateway sent could be kept: {0}.', answer.failure)}`;
  const extra = answer ? { answer: answer.file, costRub: answer.costRub } : {};
  const recovered = await keepForRecovery(context, left, reason, extra);
  if (error instanceof GatewayError) {
    const where = [
      saved.length
        ? trPlural(
            saved.length,
            { one: 'The {0} image that arrived whole was saved in {1}.', other: 'The {0} images that arrived whole were saved in {1}.' },
            saved.length,
            path.dirname(saved[0]!), // saved is not empty here
          )
        : '',
      answer ? l10n.t('What the gateway sent is kept in the recovery folder ({0}).', answer.file) : '',
      images.length
        ? trPlural(
            images.length,
            { one: '{0} image is kept in {1}.', other: '{0} images are kept in {1}.' },
            images.length,
            path.dirname(recovered.manifestPath),
          )
        : '',
    ].filter(Boolean);
    error.message = [error.message, ...where].join(' ');
    error.recovered = recovered;
  }
  return recovered;
}

/** The images of a read answer that came as addresses and could not be downloaded (the client noted why). */
export function undownloaded(images: GeneratedImageMeta[]): GeneratedImageMeta[] {
  return images.filter((image) => image.url !== undefined && image.downloadFailure !== undefined);
}

/**
 * Writes the manifest of what is left (images, images that wait at an address, and the answer that
 * could not be read) and tells about it.
 */
export async function keepForRecovery(
  context: RecoveryContext,
  left: Placement[],
  reason: string,
  extra: { answer?: string; costRub?: number; addresses?: GeneratedImageMeta[] } = {},
): Promise<RecoveredFiles> {
  const { job, staging, emit, requestId, journal } = context;
  const [syncFailure] = await staging.durable();
  if (syncFailure && !reason.includes(syncFailure.message)) reason = `${reason} ${l10n.t('Writing to disk failed: {0}.', syncFailure.message)}`;
  const addresses = extra.addresses ?? [];
  if (addresses.length) reason = [reason, addressesReason(addresses)].filter(Boolean).join('; ');
  const files: RecoveryFile[] = [
    ...left.map((l) => ({ path: l.image.path, suggestedName: `${l.name}.${l.ext}` })),
    ...addresses.map((image) => waitingAt(context, image)),
    ...(extra.answer ? [{ path: extra.answer, suggestedName: path.basename(extra.answer), kind: 'answer' as const }] : []),
  ];
  const manifestPath = await writeRecoveryManifest(staging.dir, {
    jobId: staging.jobId,
    createdAt: new Date().toISOString(),
    prompt: job.request.prompt,
    model: job.request.model,
    intendedDirectory: job.output.directory,
    reason,
    files,
    ...(requestId ? { requestId } : {}),
    ...(extra.costRub !== undefined ? { costRub: extra.costRub } : {}),
    ...(journal ? { journal } : {}),
  });
  const recovered: RecoveredFiles = { manifestPath, files: files.map((f) => f.path), ...(extra.answer ? { answer: extra.answer } : {}), reason };
  emit({ type: 'recovered', ...recovered });
  return recovered;
}

/** The manifest entry of an image that waits at its address: staged as `<jobId>-<index>.img` once downloaded. */
function waitingAt({ job, staging, date }: RecoveryContext, image: GeneratedImageMeta): RecoveryFile {
  let name = `${staging.jobId}-${image.index + 1}`;
  try {
    name = expandFileNamePattern(job.output.pattern, {
      date: date ?? new Date(),
      prompt: job.request.prompt,
      model: job.request.model,
      index: image.index + 1,
      seed: job.request.seed,
      sourceName: job.output.sourceName,
    });
  } catch {
    // The staged name will do: the pattern is reported where the other images are placed.
  }
  return {
    path: path.join(staging.dir, `${staging.jobId}-${image.index}.img`),
    suggestedName: `${name}.${extensionForMediaType(image.mediaType) ?? 'png'}`,
    kind: 'url',
    download: {
      url: image.url!, // undownloaded() keeps only images with an address
      index: image.index,
      ...(image.mediaType ? { mediaType: image.mediaType } : {}),
      failure: image.downloadFailure ?? '',
    },
  };
}

/** Which images wait at which address, and why, for the job's message (shown, logged and given to agents: no query, which may be a signature). */
function addressesReason(images: GeneratedImageMeta[]): string {
  const each = images.map((image) => l10n.t('image {0} at {1}: {2}', image.index + 1, shownAddress(image.url!), image.downloadFailure ?? '')).join('; ');
  return trPlural(
    images.length,
    {
      one: 'the gateway gave {0} image as an address and it could not be downloaded ({1}); the address is kept, and Recover Unsaved Images downloads it again',
      other:
        'the gateway gave {0} images as addresses that could not be downloaded ({1}); the addresses are kept, and Recover Unsaved Images downloads them again',
    },
    images.length,
    each,
  );
}
