// One error hierarchy for everything the gateway client can fail with.
// Callers branch on the class (or `kind`), never on message text.
import * as l10n from '@vscode/l10n';

export type GatewayErrorKind =
  | 'validation'
  | 'api'
  | 'invalid-parameters'
  | 'unknown-model'
  | 'edit-not-supported'
  | 'authentication'
  | 'insufficient-funds'
  | 'payload-too-large'
  | 'rate-limited'
  | 'server'
  | 'connection'
  | 'timeout'
  | 'cancelled'
  | 'response-format'
  | 'cannot-afford'
  | 'spending-cap'
  | 'reservation-rose'
  | 'not-configured'
  | 'not-recorded'
  | 'run-in-progress';

export abstract class GatewayError extends Error {
  abstract readonly kind: GatewayErrorKind;
  /**
   * True when a paid request had been sent and its answer was not fully received:
   * the gateway may have charged it. Such a request is never resent automatically.
   */
  outcomeUnknown = false;
  /**
   * The gateway's success answer had begun to arrive before this failure: it charged for the
   * request, whatever became of the images. Set by the job.
   */
  charged?: true;
  /**
   * What of a paid answer this failure left in the recovery folder (the manifest and its files), so
   * that whoever shows the error can offer Recover Unsaved Images. Set by the job.
   */
  recovered?: { manifestPath: string; files: string[]; answer?: string; reason: string };
  /**
   * What the client kept of a paid answer it could not read to its end (keptAnswer.ts): the file,
   * why not all of it could be kept when that happened, and the cost the answer states.
   */
  keptAnswer?: { file: string; failure?: string; costRub?: number };

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** Marks the error as "the paid request may have been charged". */
  markOutcomeUnknown(): this {
    this.outcomeUnknown = true;
    return this;
  }
}

/**
 * Bad input found before anything was sent. Names the field and what is allowed. Its kind is the
 * gateway's for the same cause where there is one (an unknown model, editing on a model that does
 * not edit): one kind per cause, local or not.
 */
export class ValidationError extends GatewayError {
  readonly kind: LocalRefusalKind;
  constructor(
    readonly field: string,
    message: string,
    readonly allowed?: readonly (string | number)[],
    kind: LocalRefusalKind = 'validation',
  ) {
    super(message);
    this.kind = kind;
  }
}

export type LocalRefusalKind = Extract<GatewayErrorKind, 'validation' | 'unknown-model' | 'edit-not-supported'>;

export interface ApiErrorDetails {
  status: number;
  message: string;
  code?: string;
  type?: string;
  param?: string;
  requestId?: string;
  /** The body was in the gateway's own error form (errorBody.ts inGatewayForm), not a proxy's page or bare text. */
  gatewayForm?: boolean;
}

/** The gateway (or something in front of it) answered with a non-success status. */
export class ApiError extends GatewayError {
  readonly kind: GatewayErrorKind = 'api';
  readonly status: number;
  readonly code?: string;
  readonly type?: string;
  readonly param?: string;
  readonly requestId?: string;
  readonly gatewayForm: boolean;

  constructor(details: ApiErrorDetails) {
    super(details.message);
    this.status = details.status;
    this.code = details.code;
    this.type = details.type;
    this.param = details.param;
    this.requestId = details.requestId;
    this.gatewayForm = details.gatewayForm ?? false;
  }
}

export class InvalidParametersError extends ApiError {
  override readonly kind: GatewayErrorKind = 'invalid-parameters';
}

export class EditNotSupportedError extends InvalidParametersError {
  override readonly kind: GatewayErrorKind = 'edit-not-supported';
}

export class UnknownModelError extends ApiError {
  override readonly kind: GatewayErrorKind = 'unknown-model';
}

export type AuthenticationReason = 'missing' | 'invalid' | 'expired' | 'revoked' | 'forbidden';

export class AuthenticationError extends ApiError {
  override readonly kind: GatewayErrorKind = 'authentication';
  constructor(
    details: ApiErrorDetails,
    readonly reason: AuthenticationReason,
  ) {
    super(details);
  }
}

export type FundsScope = 'balance' | 'budget' | 'unknown';

export class InsufficientFundsError extends ApiError {
  override readonly kind: GatewayErrorKind = 'insufficient-funds';
  constructor(
    details: ApiErrorDetails,
    readonly scope: FundsScope,
  ) {
    super(details);
  }
}

export class PayloadTooLargeError extends ApiError {
  override readonly kind: GatewayErrorKind = 'payload-too-large';
}

export class RateLimitedError extends ApiError {
  override readonly kind: GatewayErrorKind = 'rate-limited';
  constructor(
    details: ApiErrorDetails,
    /** From Retry-After (seconds or an HTTP date) or retry-after-ms; undefined when absent. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(details);
  }
}

export class ServerError extends ApiError {
  override readonly kind: GatewayErrorKind = 'server';
}

/** The connection failed or broke (refused, reset, DNS, TLS, closed mid-body). */
export class ConnectionError extends GatewayError {
  readonly kind = 'connection';
}

/** The whole-request deadline passed. */
export class TimeoutError extends GatewayError {
  readonly kind = 'timeout';
  constructor(
    readonly timeoutMs: number,
    message = l10n.t('The gateway did not answer within {0} s.', Math.round(timeoutMs / 1000)),
  ) {
    super(message);
  }
}

/** The caller aborted the request. */
export class CancelledError extends GatewayError {
  readonly kind = 'cancelled';
  constructor(message = l10n.t('The request was cancelled.')) {
    super(message);
  }

  /** A cancel that landed before any of the request went out: the person is told that nothing was charged. */
  static beforeSending(): CancelledError {
    return new CancelledError(l10n.t('Cancelled before the request was sent: nothing was charged.'));
  }
}

/** The gateway answered with a success status but the body could not be read (truncated JSON, bad base64...). */
export class ResponseFormatError extends GatewayError {
  readonly kind = 'response-format';
}

/** The known balance or key budget cannot cover the reservation: refused before sending. */
export class CannotAffordError extends GatewayError {
  readonly kind = 'cannot-afford';
  constructor(
    readonly scope: 'balance' | 'budget',
    readonly needed: number,
    readonly available: number,
    message: string,
  ) {
    super(message);
  }
}

/** The agents' spending cap (per call or per session) does not allow the reservation: refused before sending. */
export class SpendingCapError extends GatewayError {
  readonly kind = 'spending-cap';
  constructor(
    readonly cap: 'maxCostPerCall' | 'maxCostPerSession',
    readonly reservation: number,
    readonly limit: number,
    message: string,
  ) {
    super(message);
  }
}

/** The reservation rose (the catalog's prices changed) after it was checked or confirmed: refused before sending. */
export class ReservationRoseError extends GatewayError {
  readonly kind = 'reservation-rose';
  constructor(
    readonly checked: number,
    readonly reservation: number,
    message: string,
  ) {
    super(message);
  }
}

/** No base URL or no API key yet: nothing can be sent. */
export class NotConfiguredError extends GatewayError {
  readonly kind = 'not-configured';
  constructor(
    readonly missing: 'baseUrl' | 'apiKey',
    message = missing === 'baseUrl'
      ? l10n.t('Set the gateway address ("gatewayImages.baseUrl") first.')
      : l10n.t('Set your API key first (Gateway Images: Set API Key).'),
  ) {
    super(message);
  }
}

/** The record of a paid request could not be written before sending (jobs/inFlight.ts): it was not sent. */
export class NotRecordedError extends GatewayError {
  readonly kind = 'not-recorded';
}

/** A plain, serialisable view of an error, for command results, logs and the webview. */
export interface ErrorSummary {
  kind: GatewayErrorKind | 'unexpected';
  message: string;
  status?: number;
  code?: string;
  field?: string;
  requestId?: string;
  outcomeUnknown: boolean;
}

export function summarizeError(error: unknown): ErrorSummary {
  if (error instanceof ApiError) {
    return {
      kind: error.kind,
      message: error.message,
      status: error.status,
      code: error.code,
      requestId: error.requestId,
      outcomeUnknown: error.outcomeUnknown,
    };
  }
  if (error instanceof ValidationError) {
    return { kind: error.kind, message: error.message, field: error.field, outcomeUnknown: false };
  }
  if (error instanceof GatewayError) {
    return { kind: error.kind, message: error.message, outcomeUnknown: error.outcomeUnknown };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'unexpected', message, outcomeUnknown: false };
}

/** A job that was never sent: cancelled before it started, refused because its price rose since it was confirmed, or not recorded. */
export function refusedBeforeSending(error: unknown): boolean {
  return (
    error instanceof GatewayError && !error.outcomeUnknown && (error.kind === 'cancelled' || error.kind === 'reservation-rose' || error.kind === 'not-recorded')
  );
}
