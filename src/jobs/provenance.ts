// The request a saved PNG was made with, as the job writes it into the file. No vscode import.
import * as path from 'node:path';
import type { StyleRecord } from '../core/requests/styleFile';
import type { RegionRecord } from './results/resultTypes';
import type { GenerationRequest } from '../core/gateway/types';
import type { ImageJob } from './jobTypes';

/** Keyword of the PNG iTXt chunk that holds a ProvenanceRecord as JSON. */
export const PROVENANCE_KEYWORD = 'gateway-images';

/** What a saved image was made with: enough to make it again (no reference data; paths only as a style writes them). */
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
  /** A line of a prompt file: its name (not its folder), line and request key, so a re-run finds it. */
  batch?: { file: string; line: number; key: string };
  /** The style it was made with and the values the style had then (its references relative to the workspace). */
  style?: StyleRecord;
  /** A region edit: the original and mask relative to the image's folder, the mask's box, the feather and the crop sent. */
  region?: RegionRecord;
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
    ...(job.batch ? { batch: { ...job.batch, file: path.basename(job.batch.file) } } : {}),
    ...(job.style ? { style: job.style } : {}),
    ...(job.region ? { region: relativeRegion(job.region, job.output.directory) } : {}),
  };
}

/** Paths relative to the result's folder (forward slashes): the record stays true when the folder moves with its images. */
function relativeRegion(region: RegionRecord, directory: string): RegionRecord {
  const relative = (file: string) => path.relative(directory, file).split(path.sep).join('/');
  return { ...region, original: relative(region.original), mask: relative(region.mask) };
}
