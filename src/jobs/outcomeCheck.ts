// An unknown outcome, checked again once the request's deadline has passed: by then the gateway has
// charged it or never will. The gateway names no request in its figures, and other spending moves
// them too (other windows, agents, top-ups, returned reservations), so nothing here can prove that a
// request was not charged: what is learned is 'charge-seen' (the key's spend rose by at least the
// request's expected minimum since before it was sent) or still 'unknown'. It is written into the
// result's journal entry. No vscode import.
import { fromKopecks, toKopecks } from '../core/money/cost';
import type { HistoryStore } from './results/history';
import type { PaidFailure } from './jobTypes';
import type { OutcomeCheck } from './results/resultsIndex';

/** The key's figures at one moment. */
export interface SpendReading {
  /** When the figures were asked for (ms since epoch). */
  at: number;
  /** The key's 30-day spend (stats), rubles. */
  monthSpend?: number;
  balance?: number;
}

export interface OutcomeCheckDeps {
  history: HistoryStore;
  /** The newest reading asked for before `time`, if the account has one (of the same key and gateway). */
  readingBefore(time: number): SpendReading | undefined;
  /** Reads the figures now. */
  readNow(): Promise<SpendReading | undefined>;
  /** How long after it was sent a request is past its deadline (the request timeout), ms. */
  deadlineMs(): number;
  log(message: string): void;
  now?: () => number;
}

/**
 * What the figures say of one request: a rise of the key's spend that the charges the journal knows
 * of (`knownSpend`: other results of the same time) do not explain, of at least `expectedMin`, is a
 * charge seen. Spending the journal does not know (other machines, other tools) can still be in it.
 */
export function judgeOutcome(before: SpendReading | undefined, after: SpendReading | undefined, expectedMin: number, at: Date, knownSpend = 0): OutcomeCheck {
  const rise = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : fromKopecks(toKopecks(b) - toKopecks(a)));
  const keySpendRise = rise(before?.monthSpend, after?.monthSpend);
  const balanceChange = rise(before?.balance, after?.balance);
  const unexplained = keySpendRise === undefined ? undefined : toKopecks(keySpendRise) - toKopecks(knownSpend);
  const seen = unexplained !== undefined && unexplained >= Math.max(1, toKopecks(expectedMin));
  return {
    at: at.toISOString(),
    verdict: seen ? 'charge-seen' : 'unknown',
    ...(keySpendRise !== undefined ? { keySpendRise, knownSpend } : {}),
    ...(balanceChange !== undefined ? { balanceChange } : {}),
  };
}

/** Checks each unknown outcome once its deadline has passed, while this window lives. */
export class OutcomeChecks {
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly deps: OutcomeCheckDeps) {}

  /**
   * A paid failure was recorded in the journal: an unknown outcome is checked one request deadline
   * after it failed. By then a gateway whose own deadline is no longer than the client's has finished
   * with it, also when it went on working after the connection broke (or after the client gave up).
   */
  watch(failure: PaidFailure): void {
    if (failure.charged !== 'unknown') return;
    const before = this.deps.readingBefore(Date.parse(failure.sentAt));
    const now = this.deps.now?.() ?? Date.now();
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        void this.check(failure, before).catch((error: unknown) => this.deps.log(`Outcome check of ${failure.jobId} failed: ${String(error)}`));
      },
      Math.max(0, Date.parse(failure.failedAt) + this.deps.deadlineMs() - now),
    );
    this.timers.add(timer);
  }

  dispose(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async check(failure: PaidFailure, before: SpendReading | undefined): Promise<void> {
    const after = await this.deps.readNow();
    const now = new Date(this.deps.now?.() ?? Date.now());
    const index = await this.deps.history.index();
    // The charges of other results recorded since the first reading explain that much of the rise. A
    // result recorded before it was charged before it (a charge precedes its answer), so the reading
    // holds it already; one recorded after it may have been charged on either side: counted, which
    // can only leave a charge unseen, never claim one.
    const known = before
      ? index
          .createdBetween(new Date(before.at), new Date(now.getTime() + 1))
          .filter((result) => result.jobId !== failure.jobId)
          .reduce((sum, result) => sum + toKopecks(result.costRub ?? 0), 0)
      : 0;
    const verdict = judgeOutcome(before, after, failure.estimate.expectedMin, now, fromKopecks(known));
    const entry = index.findByJob(failure.jobId);
    if (entry) await this.deps.history.update(entry.id, { outcomeCheck: verdict });
    this.deps.log(
      `Outcome of the request of ${failure.model} (job ${failure.jobId}) checked after its deadline: ${verdict.verdict}` +
        `; the key's 30-day spend rose by ${verdict.keySpendRise ?? 'unknown'}, of which the journal's other results explain ${verdict.knownSpend ?? 0};` +
        ` the balance changed by ${verdict.balanceChange ?? 'unknown'} (other spending on the account moves both).`,
    );
  }
}

/** What the checks read of an account: its figures before a request, and fresh ones (account/accountModel.ts). */
export interface SpendReadings {
  readingBefore(time: number): SpendReading | undefined;
  refresh(): Promise<unknown>;
}

/** The checks over one account's readings: a window's (services.ts) and the several-actors tests' alike. */
export function outcomeChecksFor(account: SpendReadings, deps: Pick<OutcomeCheckDeps, 'history' | 'deadlineMs' | 'log'>): OutcomeChecks {
  return new OutcomeChecks({
    ...deps,
    readingBefore: (time) => account.readingBefore(time),
    readNow: async () => {
      await account.refresh();
      return account.readingBefore(Number.POSITIVE_INFINITY);
    },
  });
}
