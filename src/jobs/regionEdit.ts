// A region edit (issue 41): only the part of an image that a mask marks changes. The mask and the
// image are checked before anything is reserved (core/files/maskInput.ts); the crop around the
// region is sent as the ONE reference of an ordinary edit job (the same estimate, confirmation,
// journal and recovery as every edit); its answer is resized back and pasted into a copy of the
// original through the feathered mask, saved as a new file next to the original (photo.region-1.png,
// the original never touched) with the mask beside it (photo.region-1.mask.png). No vscode import.
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../core/gateway/errors';
import type { ImageModel } from '../core/gateway/types';
import { decodeImage, encodePng } from '../core/images/codecs';
import { hasTransparency, JPEG_QUALITY } from '../core/images/jpegEncode';
import type { RgbaImage } from '../core/images/pixels';
import { cropBoxFor, cropRgba, describeCrop } from '../core/images/regionCrop';
import { featherMask } from '../core/images/regionMask';
import { FEATHER_DEFAULT, readMask } from '../core/files/maskInput';
import { isPixelSize } from '../core/requests/aspectRatio';
import type { ImageJob, JobResult } from './jobTypes';
import type { RegionFormat } from './results/resultTypes';
import { compositeInto, isCompositeFile, type RegionPlan, saveMaskBeside, underResultLease } from './regionComposite';
export { recordedReferences } from './regionReferences';
export { regionOriginalInfo } from './regionOriginal';
export { recoverRegionEdits } from './regionRecovery';
export { COMPOSITE_KEYWORD, compositeInto, isCompositeFile, type RegionPlan, saveMaskBeside, underResultLease } from './regionComposite';
import { readRegionOriginal } from './regionOriginal';
import { compositeNameOf, maskBesideOf } from './regionPending';
import type { RegionRecoveryOptions } from './regionRecovery';

/** Results of a region edit: `{name}` is the original's base name (photo.region-1.png). */
export const REGION_FILE_NAME_PATTERN = '{name}.region-{index}';

/**
 * Checks the original and the mask and decides the crop: every refusal (a ValidationError naming
 * "images" or "mask") comes before any estimate. `model`: its supported ratios widen the crop.
 */
export async function planRegionEdit(input: {
  images: readonly string[];
  mask: string;
  /** The mask's name in messages (the studio's painted mask: "the painted region"); its file name otherwise. */
  maskShown?: string;
  /** The mask is a file of the studio's, removed after the edit: provenance names the copy beside the result. */
  maskKeptBeside?: boolean;
  feather?: number;
  /** The result's format (default PNG); JPEG is refused for an original with transparency. */
  format?: RegionFormat;
  model?: Pick<ImageModel, 'supported_aspect_ratios'>;
}): Promise<RegionPlan> {
  if (input.images.length !== 1) {
    throw new ValidationError('mask', l10n.t('A region edit ("mask") takes exactly one image; {0} were given.', input.images.length));
  }
  const originalPath = input.images[0]!;
  const feather = input.feather ?? FEATHER_DEFAULT;
  const { iccProfile, ...original } = await readOriginal(originalPath);
  if (input.format === 'jpeg' && hasTransparency(original)) {
    throw new ValidationError(
      'format',
      l10n.t('{0} has transparent pixels, which a JPEG cannot keep: save the result as PNG ("format": "png").', path.basename(originalPath)),
      ['png'],
    );
  }
  const mask = await readMask(input.mask, original, input.maskShown);
  const box = { ...mask.box! };
  const crop = cropBoxFor(box, original, input.model?.supported_aspect_ratios ?? [], { feather });
  const cropPng = encodePng(cropRgba(original, crop));
  const description = describeCrop(box, crop, original);
  const sent = { x: crop.x, y: crop.y, width: crop.width, height: crop.height, ratio: crop.ratio };
  return {
    record: { original: originalPath, mask: input.mask, feather, box, crop: sent, description, ...(input.format === 'jpeg' && { format: 'jpeg' as const }) },
    ...(input.maskKeptBeside && { maskKeptBeside: true }),
    original,
    ...(iccProfile && { iccProfile }),
    // In place: the mask without its feather is not needed again (16 MB less for 4096×4096).
    mask: featherMask(mask, feather, { inPlace: true }),
    cropPng,
    description,
  };
}

function readOriginal(file: string): Promise<RgbaImage & { iccProfile?: Uint8Array }> {
  return readRegionOriginal(file, async (bytes) => {
    // Handed over: a large JPEG's bytes go to the decode worker, not held beside its decode.
    const { width, height, data, iccProfile } = await decodeImage(bytes, { transfer: true });
    return { width, height, data, ...(iccProfile && { iccProfile }) };
  });
}

/**
 * The edit job that sends the crop instead of the whole image: the crop written to a temporary
 * file (removed by `dispose`), the crop's ratio asked for when the model takes ratios, PNG asked
 * for when the model gives it (the result is a PNG), results named `{name}.region-{index}`.
 */
export async function regionJobOf(
  job: ImageJob,
  plan: RegionPlan,
  model: Pick<ImageModel, 'supported_aspect_ratios' | 'supported_output_formats'> | undefined,
  tempDir = os.tmpdir(),
): Promise<{ job: ImageJob; dispose: () => Promise<void> }> {
  const cropFile = path.join(tempDir, `gateway-images-region-${randomUUID()}.png`);
  await fs.mkdir(tempDir, { recursive: true });
  await fs.writeFile(cropFile, plan.cropPng, { mode: 0o600 });
  const request = { ...job.request };
  if (model?.supported_aspect_ratios.includes(plan.record.crop.ratio)) {
    request.aspect_ratio = plan.record.crop.ratio;
    if (isPixelSize(request.size)) delete request.size;
  }
  if (model?.supported_output_formats.includes('png')) request.output_format = 'png';
  const sourceName = path.basename(plan.record.original, path.extname(plan.record.original));
  return {
    job: { ...job, request, references: [cropFile], output: { ...job.output, pattern: REGION_FILE_NAME_PATTERN, sourceName }, region: plan.record },
    dispose: () => fs.rm(cropFile, { force: true }),
  };
}

/** The journal's view of a region job: its references are the original and the mask, not the temporary crop. */
export interface RegionOutcome {
  /** The composited images (the paid answers where compositing failed: kept as they came). */
  files: string[];
  /** The masks saved beside them. */
  masks: string[];
  /** One sentence per answer that could not be composited. */
  notes: string[];
}

/**
 * Pastes each saved answer into the original through the mask, in place of the answer's file (its
 * provenance kept), and saves the mask beside it. An answer that cannot be composited stays as it
 * came (it is paid for), with a note; an answer that is not a PNG gets a new PNG file beside it.
 */
export async function finishRegionEdit(
  plan: RegionPlan,
  result: JobResult,
  maskFile = plan.record.mask,
  fence: Pick<RegionRecoveryOptions, 'staleMs' | 'beforeFence' | 'lockDir'> = {},
): Promise<RegionOutcome> {
  const outcome: RegionOutcome = { files: [], masks: [], notes: [] };
  for (const file of result.files) {
    let target = file;
    const composite = compositeNameOf(file, plan.record.format);
    // Under the result's lease: a window starting now does not finish this one too (regionRecovery.ts).
    // A composite found there already was pasted by such a start (the same bytes this would write): it stands.
    const paste = () =>
      underResultLease(
        file,
        'briefly',
        async (lease) => ((await isCompositeFile(composite)) ? composite : compositeInto(plan, file, lease, fence.beforeFence)),
        fence.lockDir,
        fence.staleMs,
      );
    try {
      // Paused past the lease (its fence refused the rename): looked at again under a new one, once a
      // start that took it over is done. Its composite stands; if none took it over, pasted now.
      target = await paste().catch((error: unknown) => ((error as NodeJS.ErrnoException).code === 'ELEASELOST' ? paste() : Promise.reject(error)));
    } catch (error) {
      if (await isCompositeFile(composite)) target = composite;
      else {
        outcome.notes.push(
          l10n.t('{0} was kept as the gateway gave it (the region could not be pasted into the original: {1}).', path.basename(file), reasonOf(error)),
        );
      }
    }
    outcome.files.push(target);
    try {
      // Such a start saved the mask beside it too (and removed the studio's painted one).
      const besideAlready = maskBesideOf(target);
      const pastedByStart =
        (await isCompositeFile(target)) &&
        (await fs.stat(besideAlready).then(
          () => true,
          () => false,
        ));
      outcome.masks.push(pastedByStart ? besideAlready : await saveMaskBeside(target, maskFile));
    } catch (error) {
      outcome.notes.push(l10n.t('The mask could not be saved beside {0}: {1}', path.basename(target), reasonOf(error)));
    }
  }
  return outcome;
}

/** For agents (English, as the MCP answers are): what the result's format does to the image outside the region. */
export function outsideRegionNote(format: RegionFormat | undefined): string {
  return format === 'jpeg'
    ? `saved as JPEG: every pixel is re-compressed (quality ${JPEG_QUALITY}), so the rest of the image changes slightly`
    : "outside the region every pixel is the original's";
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
