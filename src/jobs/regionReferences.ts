// What the results journal names as an edit's references: for a region edit, the original and the
// mask (not the temporary crop that was sent). Apart from regionEdit.ts, so that what records every
// job does not load the region edit's image code (dist/regionEdit.js, on first use).
import type { ImageJob } from './jobTypes';

export function recordedReferences(job: ImageJob): string[] | undefined {
  return job.region ? [job.region.original, job.region.mask] : job.references;
}
