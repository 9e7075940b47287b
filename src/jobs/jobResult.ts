// What an image job returns (imageJobs.ts): its files, cost and what waits in the recovery folder.
// Apart from jobTypes.ts so the in-flight journal can name it without importing the job's ports. No vscode import.
import type { CostEstimate } from '../core/money/cost';
import type { GenerationRequest, Usage } from '../core/gateway/types';
import type { RegionRecord } from './results/resultTypes';

export interface JobResult {
  /** The job's id: its staged files and its in-flight record are named by it. */
  jobId?: string;
  /** The request as sent (after normalisation). */
  request?: GenerationRequest;
  /** The gateway's id of the request, from its answer's headers (when it gave one). */
  requestId?: string;
  /** The gateway and key it was paid with (core/gateway/identity.ts: base URL and key fingerprint, never the key). */
  identity?: string;
  /** What was changed in the input, and any warning (budget shortfall). */
  notes?: string[];
  files: string[];
  model: string;
  usage?: Usage;
  estimate: CostEstimate;
  /** Paid images that could not be placed into the workspace and wait in the recovery folder. */
  recovered?: RecoveredFiles;
  /** Saved files without an alpha channel although `background: transparent` was asked for. */
  opaque?: string[];
  /** A region edit's record as it ended (the mask kept beside the result), set by its finish step. */
  region?: RegionRecord;
}

/** What a job left in the recovery folder: its manifest, the files it lists, and why. */
export interface RecoveredFiles {
  manifestPath: string;
  /** Images, and what the gateway sent when it could not be read (`answer`). */
  files: string[];
  /** The paid answer as it came, when it could not be read (`<jobId>-answer.<ext>`): Recover reads it again. */
  answer?: string;
  reason: string;
}
