// One source of truth for the account: balance, key, budget and usage. The status bar, the
// studio and the job service read it; only it fetches. No vscode import, so mocha tests it.
import { AuthenticationError, ErrorSummary, summarizeError } from '../core/errors';
import { Usage, BalanceRecord, KeyRecord, StatsSummary, UserRecord } from '../core/types';
import { fromKopecks, toKopecks } from '../core/cost';

export type AccountStatus = 'no-url' | 'no-key' | 'loading' | 'ready' | 'offline' | 'invalid-key' | 'expired-key';

export interface AccountSnapshot {
  status: AccountStatus;
  user?: UserRecord;
  balance?: number;
  /** Remaining key budget, when the key has one. */
  budget?: number;
  key?: KeyRecord;
  stats?: StatsSummary;
  /** When the figures were last read from the gateway (ms since epoch). */
  updatedAt?: number;
  error?: ErrorSummary;
}

/** The part of the gateway client the account needs. */
export interface AccountApi {
  me(): Promise<UserRecord>;
  balance(): Promise<BalanceRecord>;
  key(): Promise<KeyRecord>;
  stats(): Promise<StatsSummary>;
}

/** Resolves the API, or says why there is none (no base URL, no key). */
export type AccountApiProvider = () => Promise<AccountApi | 'no-url' | 'no-key'>;

export interface BalanceChange {
  before: AccountSnapshot;
  after: AccountSnapshot;
  /** after − before, rubles; undefined when either side is unknown. */
  balanceDelta?: number;
  budgetDelta?: number;
}

export class AccountModel {
  private current: AccountSnapshot = { status: 'loading' };
  private readonly listeners = new Set<(snapshot: AccountSnapshot) => void>();
  private refreshing: Promise<AccountSnapshot> | undefined;
  private reconcileTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly api: AccountApiProvider,
    private readonly now: () => number = Date.now,
  ) {}

  get snapshot(): AccountSnapshot {
    return this.current;
  }

  onDidChange(listener: (snapshot: AccountSnapshot) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Reads user, balance, key and stats; concurrent callers share one refresh. */
  refresh(): Promise<AccountSnapshot> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Every generation answer carries the balance after the charge: no extra request needed. */
  applyUsage(usage: Usage): void {
    const cost = usage.cost_rub;
    const budget =
      this.current.budget === undefined || cost === undefined ? this.current.budget : fromKopecks(toKopecks(this.current.budget) - toKopecks(cost));
    // Without the balance after the charge, the figures are not fresh: the reconcile reads them.
    const balance = usage.balance ?? this.current.balance;
    const updatedAt = usage.balance === undefined ? this.current.updatedAt : this.now();
    this.update({ ...this.current, status: 'ready', balance, budget, updatedAt });
  }

  /** Reconciles budget and statistics a little later (they are not in the generation answer). */
  reconcileSoon(delayMs = 1500): void {
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.reconcileTimer = setTimeout(() => {
      this.reconcileTimer = undefined;
      this.refresh().catch(() => undefined);
    }, delayMs);
  }

  /**
   * Refreshes now and says what changed (after a request whose outcome is unknown), against the
   * figures known before the request was sent when given: a refresh in between must not hide a charge.
   */
  async reconcile(baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>): Promise<BalanceChange> {
    const before = baseline ? { ...this.current, ...baseline } : this.current;
    const after = await this.refresh();
    const delta = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : fromKopecks(toKopecks(b) - toKopecks(a)));
    return { before, after, balanceDelta: delta(before.balance, after.balance), budgetDelta: delta(before.budget, after.budget) };
  }

  dispose(): void {
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.listeners.clear();
  }

  private async load(): Promise<AccountSnapshot> {
    let api: Awaited<ReturnType<AccountApiProvider>>;
    try {
      api = await this.api();
    } catch (error) {
      // A provider that fails (a base URL that does not parse, say) must not leave the status at "loading".
      this.update({ ...this.current, status: statusOfError(error), error: summarizeError(error) });
      return this.current;
    }
    if (api === 'no-url' || api === 'no-key') {
      this.update({ status: api });
      return this.current;
    }
    if (this.current.status !== 'ready') this.update({ ...this.current, status: 'loading' });
    try {
      const [user, balance, key, stats] = await Promise.all([api.me(), api.balance(), api.key(), api.stats()]);
      this.update({
        status: 'ready',
        user,
        balance: balance.balance,
        budget: balance.budget ?? key.budget?.remaining,
        key,
        stats,
        updatedAt: this.now(),
      });
    } catch (error) {
      this.update({ ...this.current, status: statusOfError(error), error: summarizeError(error) });
    }
    return this.current;
  }

  private update(next: AccountSnapshot): void {
    this.current = next;
    for (const listener of this.listeners) {
      try {
        listener(next);
      } catch {
        // One bad listener must not stop the others.
      }
    }
  }
}

function statusOfError(error: unknown): AccountStatus {
  if (error instanceof AuthenticationError) return error.reason === 'expired' ? 'expired-key' : 'invalid-key';
  return 'offline';
}

/** Whether the key expires within `days` days. */
export function expiresWithin(snapshot: AccountSnapshot, days: number, now = Date.now()): boolean {
  const key = snapshot.key;
  if (!key) return false;
  if (typeof key.expires_in_seconds === 'number') return key.expires_in_seconds < days * 86_400;
  if (key.expires_at) {
    const at = Date.parse(key.expires_at);
    return !Number.isNaN(at) && at - now < days * 86_400_000;
  }
  return false;
}

/** Whether the remaining budget is low: under 10 % of the initial budget. */
export function budgetLow(snapshot: AccountSnapshot): boolean {
  const initial = snapshot.key?.budget?.initial;
  return snapshot.budget !== undefined && !!initial && snapshot.budget < initial * 0.1;
}
