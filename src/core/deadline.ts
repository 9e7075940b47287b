// The time limit of one gateway call, merged with the caller's cancel, and the typed error of a
// failed call. Pure: no vscode import.
import { CancelledError, ConnectionError, GatewayError, TimeoutError } from './errors';
import * as l10n from '@vscode/l10n';

/** Merges the caller's signal with a deadline, and says which of the two fired. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.controller.abort(new CancelledError());

  constructor(
    readonly timeoutMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    this.timer = setTimeout(() => this.controller.abort(new TimeoutError(timeoutMs)), timeoutMs);
    if (callerSignal?.aborted) this.onCallerAbort();
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  throwIfAborted(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  translate(error: unknown): GatewayError {
    if (this.controller.signal.aborted) {
      const reason: unknown = this.controller.signal.reason;
      if (reason instanceof GatewayError) return reason;
    }
    if (error instanceof GatewayError) return error;
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : String(error);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError(this.timeoutMs);
    if (code === 'UND_ERR_ABORTED' || (error instanceof Error && error.name === 'AbortError')) return new CancelledError();
    const detail = `${message}${code && !message.includes(code) ? ` (${code})` : ''}`;
    return new ConnectionError(l10n.t('Could not reach the gateway: {0}.', detail), { cause: error });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
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
