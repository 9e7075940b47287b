// What the image job service (imageJobs.ts) takes, reports and returns, and the ports it reaches
// the UI and the gateway through. No vscode import.
import type { CallOptions } from '../core/client/client';
import type { CostEstimate, FundsSnapshot } from '../core/money/cost';
import type { FundsScope, GatewayError } from '../core/gateway/errors';
import type { ImageSink } from '../core/gateway/imageSink';
import type { ReferenceFile } from '../core/requests/requestBodies';
import type { SpendingCap } from '../core/money/spendingCap';
import type { StyleRecord } from '../core/requests/styleFile';
import type { GenerationRequest, GenerationResponseMeta, ImageModel, Usage } from '../core/gateway/types';
import type { InFlightJournal } from './inFlight';
import type { JobResult, RecoveredFiles } from './jobResult';
import type { BatchTag } from './results/resultsIndex';
import type { RegionRecord } from './results/resultTypes';

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
  /**
   * A line of a prompt file: written into the PNG provenance, so a re-run finds it without the
   * history, and into the job's in-flight record, so a crash mid-batch is settled line by line.
   */
  batch?: BatchTag;
  /** The style the request was made with, and the values it resolved to (provenance, history, the confirmation). */
  style?: StyleRecord;
  /** A region edit (regionEdit.ts): the one reference is the crop; the journal and provenance name the original and mask. */
  region?: RegionRecord;
}

/** The paid calls a job makes. Each calls `options.onPaidAnswer` once a success answer arrives, before any image. */
export interface ImageApi {
  generate(request: GenerationRequest, sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta>;
  generateWithReferences(request: GenerationRequest, files: ReferenceFile[], sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta>;
  edit(request: GenerationRequest, files: ReferenceFile[], sink: ImageSink, options?: CallOptions): Promise<GenerationResponseMeta>;
}

export interface ConfirmRequest {
  model: ImageModel;
  request: GenerationRequest;
  estimate: CostEstimate;
  style?: StyleRecord;
  /** An earlier attempt of the same request may have been charged: this one is paid for again. */
  resend?: boolean;
  /** A region edit: the part of the image sent ("region 412×300 of 2048×1536, sent as 3:2"). */
  region?: string;
  /** A region edit saved as JPEG: the confirmation says every pixel is re-compressed. */
  regionFormat?: 'jpeg';
}

export type JobEvent =
  /** About to send (the spending cap, when there is one, holds the reservation from here). */
  | { type: 'sending'; estimate: CostEstimate; model: ImageModel }
  /** The body started to go out (the client's first read of it): from here the gateway may charge. */
  | { type: 'sent' }
  /** The gateway answered with success: it has charged, and the images follow (a cancel no longer stops them). */
  | { type: 'answered' }
  | { type: 'image-received'; index: number; bytes: number }
  /** An image was placed into the output folder while the response may still be streaming. */
  | { type: 'image-saved'; index: number; file: string }
  | ({ type: 'recovered' } & RecoveredFiles)
  | { type: 'outcome-unknown'; error: GatewayError }
  | { type: 'provenance-failed'; file: string; reason: string }
  /** Something the user should know that does not stop the job: inputs normalised, a budget shortfall. */
  | { type: 'notice'; message: string }
  /** Cancel came after the gateway answered (and charged): the images are received and saved whole. */
  | { type: 'cancel-after-charge' }
  /** Transparency was asked for and these saved files have no alpha channel (they are kept). */
  | { type: 'opaque-result'; files: string[] };

export interface JobDeps {
  api: () => Promise<ImageApi>;
  models: () => Promise<ImageModel[]>;
  /** A fresh read of the catalog, once, before a model missing from `models()` is refused as unknown. */
  refreshModels?: () => Promise<ImageModel[]>;
  /** Current figures of this key and gateway (the account refreshes them first when they are stale). */
  funds: () => FundsSnapshot | Promise<FundsSnapshot>;
  /** `identity`: the base URL and key fingerprint the request was sent with (usage of another key is dropped). */
  applyUsage: (usage: Usage, identity?: string) => void;
  /** The gateway refused for lack of funds: the account reads its figures again (and notes a budget refusal). */
  fundsRefused?: (scope: FundsScope) => void;
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
  /** The agents' spending cap (MCP server, chat tool): each call holds its reservation from just before it is sent. */
  cap?: SpendingCap;
  /** Paid requests in flight, on disk: what start-up finds there was cut off by a dead extension host. */
  inFlight?: InFlightJournal;
  /** The results journal the jobs' entries go into: named in recovery manifests, so Recover records where the images went. */
  resultsJournal?: string;
}

export type { JobResult, RecoveredFiles } from './jobResult';

/**
 * A paid request that did not deliver its images: its answer arrived (it charged) and could not be
 * read or saved, or the connection broke once it may have reached the gateway. Recorded in the
 * results journal as paid, so that no one pays for it again without being asked.
 */
export interface PaidFailure {
  jobId: string;
  /** The request as sent (no reference data). */
  request: GenerationRequest;
  model: string;
  /** true: the gateway's success answer arrived; 'unknown': it may have charged. */
  charged: true | 'unknown';
  /** Images placed into the workspace before the failure. */
  files: string[];
  /** What waits in the recovery folder: images, and the answer as it came. */
  recovered?: RecoveredFiles;
  /** The gateway's id of the request, from its answer's headers. */
  requestId?: string;
  /** What the kept answer says it cost. */
  costRub?: number;
  /** The gateway and key it was sent with (core/gateway/identity.ts): the ledger compares it with that key's figures. */
  identity?: string;
  /** When the request's body started to go out. */
  sentAt: string;
  /** When it failed. */
  failedAt: string;
  /** What was reserved and expected for it. */
  estimate: CostEstimate;
  reason: string;
}

export interface RunOptions extends CallOptions {
  onEvent?: (event: JobEvent) => void;
  /** Ask for confirmation whatever the cost (a style of an untrusted workspace). */
  forceConfirm?: boolean;
  /** Sent again by the user after an earlier attempt that may have been charged: confirmed whatever the cost, saying so. */
  resend?: boolean;
  /**
   * The reservation already confirmed (a batch or a comparison confirms their total) or checked (the
   * MCP cap) for this job: it is not asked again, and it is refused (ReservationRoseError), not sent,
   * when it would now reserve more.
   */
  confirmedReservation?: number;
  /**
   * Records the result in the results journal (synced) before the job's in-flight record is
   * removed: a crash in between leaves the record, never a paid result that nothing remembers.
   * When it rejects the record stays, and the next start records the result.
   */
  settle?: (result: JobResult) => Promise<void>;
  /**
   * Records a paid request that failed (PaidFailure) in the results journal, before its in-flight
   * record is removed; when it rejects the record stays, and the next start settles the job.
   */
  settleFailure?: (failure: PaidFailure) => Promise<void>;
  /**
   * The last word right before the request goes, its in-flight record written (`job`: its staging
   * id): a prompt-file run marks the line and confirms its claim here. A rejection sends nothing.
   */
  beforeRequest?: (job: string) => Promise<void>;
}

export interface PreparedJob {
  /** The request to send: the job's, normalised (trimmed model id, 1024X1024 → 1024x1024, 2k → 2K), with an alpha-capable format for a transparent background. */
  request: GenerationRequest;
  /** One sentence per normalisation and per warning, for the user. */
  notes: string[];
  model: ImageModel;
  estimate: CostEstimate;
  references: ReferenceFile[];
}
