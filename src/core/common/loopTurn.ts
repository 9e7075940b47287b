// One budget of work per event-loop turn, shared by every answer the process decodes at once.
// A budget per stream was not enough: 20 answers streaming together, each woken by its socket in
// the same poll phase, each spent its own 8 ms and held the loop for 20-30 ms. A turn now does the
// budget's work, plus one step of each stream that waited for it (so that none starves).
// Pure: no vscode import.

/** Work (ms) one turn of the event loop may do for all streams together before they wait for the next turn. */
export const TURN_BUDGET_MS = 6;

export class TurnBudget {
  private startedAt: number | undefined;
  private readonly endTurn = (): void => {
    this.startedAt = undefined;
  };

  constructor(
    private readonly budgetMs = TURN_BUDGET_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * Call before a step of work. True once the work of this turn, counted from the first call in
   * it, ran longer than the budget: then await `next()` first. The turn ends at the next check
   * phase (a setImmediate queued by the turn's first call).
   */
  spent(): boolean {
    const now = this.clock();
    if (this.startedAt === undefined) {
      this.startedAt = now;
      setImmediate(this.endTurn);
      return false;
    }
    return now - this.startedAt > this.budgetMs;
  }

  /**
   * Resolves in a later turn, after the loop has run its timers and polled for I/O. One
   * setImmediate queued from the poll phase runs in that same turn's check phase, before either:
   * hence two.
   */
  next(): Promise<void> {
    return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
  }
}

/** The process's budget: every generation answer being decoded draws on it. */
export const sharedTurn = new TurnBudget();
