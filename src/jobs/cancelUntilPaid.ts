// Pure: no vscode import.
/**
 * The caller's cancel, until the paid answer arrives (its success headers: ImageApi's onPaidAnswer).
 * From then on the gateway has charged for it: stopping would throw paid images away (the rest of
 * the body is often already in the socket), so they are received and saved whole and the cancel
 * is only reported.
 */
export class CancelUntilPaid {
  private readonly controller = new AbortController();
  private answered = false;
  private readonly onAbort = () => {
    if (this.answered) this.onLateCancel();
    else this.controller.abort(this.caller?.reason);
  };

  constructor(
    private readonly caller: AbortSignal | undefined,
    private readonly onLateCancel: () => void,
  ) {
    if (caller?.aborted) this.controller.abort(caller.reason);
    else caller?.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  paidAnswerArrived(): void {
    this.answered = true;
  }

  dispose(): void {
    this.caller?.removeEventListener('abort', this.onAbort);
  }
}
