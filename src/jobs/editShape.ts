// Edits keep the input's shape: when no aspect ratio is chosen, an edit asks for the model's
// supported ratio nearest to the first source image's pixel ratio, read from its header (the file
// is not decoded). No vscode import.
import * as path from 'node:path';
import { isPixelSize, nearestAspectRatio } from '../core/requests/aspectRatio';
import * as l10n from '@vscode/l10n';
import { readImageHeaderFile } from '../core/images/imageHeader';
import { type GenerationRequest, type ImageModel } from '../core/gateway/types';

export interface AspectDefault {
  ratio: string;
  /** File name of the source image it matches. */
  source: string;
  width: number;
  height: number;
  /** "matches photo.jpg, 4:3" */
  why: string;
}

/** The default for this model and source; undefined when the model has no ratios or the header is unreadable. */
export async function aspectDefaultFor(model: Pick<ImageModel, 'supported_aspect_ratios'>, sourcePath: string): Promise<AspectDefault | undefined> {
  if (!model.supported_aspect_ratios.length) return undefined;
  const header = await readImageHeaderFile(sourcePath).catch(() => undefined);
  if (!header) return undefined;
  const ratio = nearestAspectRatio(header.width, header.height, model.supported_aspect_ratios);
  if (!ratio) return undefined;
  const source = path.basename(sourcePath);
  return { ratio, source, width: header.width, height: header.height, why: l10n.t('matches {0}, {1}', source, ratio) };
}

/** Whether the request leaves the aspect ratio to the default (nothing chosen, no explicit pixels). */
export function leavesAspectOpen(request: Pick<GenerationRequest, 'aspect_ratio' | 'size'>): boolean {
  return request.aspect_ratio === undefined && !isPixelSize(request.size);
}

/** The edit request with the shape-keeping aspect ratio filled in where it is left open. */
export async function withAspectDefault<T extends GenerationRequest>(request: T, model: ImageModel | undefined, sourcePath: string | undefined): Promise<T> {
  if (!model || !sourcePath || !leavesAspectOpen(request)) return request;
  const found = await aspectDefaultFor(model, sourcePath);
  return found ? { ...request, aspect_ratio: found.ratio } : request;
}
