// The time limit of one gateway call, merged with the caller's cancel, and the typed error of a
// failed call. Pure: no vscode import.
import { CancelledError, ConnectionError, GatewayError, TimeoutError } from './errors';
import * as l10n from '@vscode/l10n';
import { certificateError, proxyAuthenticationError } from './networkErrors';

/** Merges the caller's signal with a deadline, and says which of the two fired first. */
export class Deadline {
  private readonly timeout: AbortSignal;
  /** Aborted by the deadline or by the caller, whichever comes first. */
  readonly signal: AbortSignal;

  constructor(
    readonly timeoutMs: number,
    callerSignal?: AbortSignal,
  ) {
    this.timeout = AbortSignal.timeout(timeoutMs);
    this.signal = callerSignal ? AbortSignal.any([callerSignal, this.timeout]) : this.timeout;
  }

  throwIfAborted(): void {
    if (this.signal.aborted) throw this.abortError();
  }

  /**
   * The failure as a typed error. `phase`: how far the request got, so the words say no more than is
   * known (a connection that broke while the answer arrived did reach the gateway).
   */
  translate(error: unknown, phase: 'connecting' | 'awaiting-answer' | 'answering' = 'connecting'): GatewayError {
    if (this.signal.aborted) return this.abortError();
    if (error instanceof GatewayError) return error;
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : String(error);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError(this.timeoutMs);
    // Before the abort below: undici aborts a tunnel the proxy refused (a 407, a 502 to CONNECT) with
    // its "aborted" code, though nobody cancelled anything.
    const refusal = certificateError(code, error) ?? proxyAuthenticationError(error);
    if (refusal) return refusal;
    const tunnelRefused = /when HTTP Tunneling/.test(message);
    if (!tunnelRefused && (code === 'UND_ERR_ABORTED' || (error instanceof Error && error.name === 'AbortError'))) return new CancelledError();
    const detail = `${message}${code && !message.includes(code) ? ` (${code})` : ''}`;
    const words =
      phase === 'answering'
        ? l10n.t("The connection broke while the gateway's answer was arriving: {0}.", detail)
        : phase === 'awaiting-answer'
          ? l10n.t('The connection to the gateway broke before its answer came: {0}.', detail)
          : l10n.t('Could not reach the gateway: {0}.', detail);
    return new ConnectionError(words, { cause: error });
  }

  /** The merged signal keeps the reason of the signal that fired first. */
  private abortError(): GatewayError {
    const timedOut = this.timeout.aborted && this.signal.reason === this.timeout.reason;
    return timedOut ? new TimeoutError(this.timeoutMs) : new CancelledError();
  }
}

/** The `code` of an error or of one of its causes (undici nests them). */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
