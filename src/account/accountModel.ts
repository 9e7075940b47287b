// One source of truth for the account: balance, key, budget and usage. The status bar, the
// studio and the job service read it; only it fetches. No vscode import, so mocha tests it.
import { AuthenticationError, type ErrorSummary, summarizeError } from '../core/gateway/errors';
import { type Usage, type BalanceRecord, type KeyRecord, type StatsSummary, type UserRecord } from '../core/gateway/types';
import { fromKopecks, toKopecks } from '../core/money/cost';
import { Emitter, type Event } from '../core/common/emitter';

export type AccountStatus = 'no-url' | 'no-key' | 'loading' | 'ready' | 'offline' | 'invalid-key' | 'expired-key';

export type AccountPart = 'user' | 'balance' | 'key' | 'stats';

export interface AccountSnapshot {
  status: AccountStatus;
  /**
   * Which gateway and key the figures belong to: `<base URL>|<short SHA-256 of the key>` (see
   * core/gateway/identity.ts), never the key. Undefined while a switched key or gateway is not resolved yet.
   */
  identity?: string;
  /** True from the moment the key or base URL changed until the new identity's figures are read. */
  switching?: boolean;
  user?: UserRecord;
  balance?: number;
  /** Remaining key budget, when the key has one. */
  budget?: number;
  key?: KeyRecord;
  stats?: StatsSummary;
  /** When `stats` was read (ms since epoch): the end of the gateway's windows, which the spend ledger compares with the journal's. */
  statsAt?: number;
  /** When the balance was last read from the gateway (ms since epoch). */
  updatedAt?: number;
  error?: ErrorSummary;
  /** Parts of the last refresh that failed while the others were read (their old figures stay). */
  failedParts?: AccountPart[];
  /** The gateway refused this key for its budget while the remaining budget was this (see cost.ts). */
  budgetRefusal?: { budget?: number; at: number };
}

/** The part of the gateway client the account needs. */
export interface AccountApi {
  me(): Promise<UserRecord>;
  balance(): Promise<BalanceRecord>;
  key(): Promise<KeyRecord>;
  stats(): Promise<StatsSummary>;
}

/** An API bound to one key, with the identity of that key and gateway. */
export interface AccountConnection {
  identity: string;
  api: AccountApi;
}

/** Resolves the API (bound to the current key, with its identity), or says why there is none. */
export type AccountApiProvider = () => Promise<AccountApi | AccountConnection | 'no-url' | 'no-key'>;

export interface BalanceChange {
  before: AccountSnapshot;
  after: AccountSnapshot;
  /** after − before, rubles; undefined when either side is unknown. */
  balanceDelta?: number;
  budgetDelta?: number;
}

/** Funds figures for a local refusal: only current facts of this identity (empty when unknown). */
export interface CurrentFunds {
  balance?: number;
  budget?: number;
  budgetRefusedByGateway?: boolean;
}

/** The account's figures at one moment (readingBefore), of one key and gateway. */
export interface SpendReading {
  at: number;
  identity?: string;
  balance?: number;
  /** The key's 30-day spend. */
  monthSpend?: number;
}

/** Readings kept: enough to reach back past the longest request deadline at the slowest refresh pace. */
const MAX_READINGS = 64;

/** Figures older than this are refreshed before a local funds refusal rests on them. */
export const FUNDS_MAX_AGE_MS = 60_000;
/** How long a funds check waits for that refresh; after it, unknown figures let the gateway decide. */
export const FUNDS_WAIT_MS = 5_000;

export class AccountModel {
  private current: AccountSnapshot = { status: 'loading' };
  private readonly changed = new Emitter<AccountSnapshot>();
  readonly onDidChange: Event<AccountSnapshot> = this.changed.event;
  /** Bumped on every switch of key or gateway: a refresh of an older generation is discarded. */
  private generation = 0;
  /**
   * Numbers every refresh when it starts and every usage when it arrives, so that an older figure
   * never replaces a newer one: a slow refresh may answer after a charge it did not see.
   */
  private sequence = 0;
  /** The number of the last usage applied (its balance and budget are in `current`). */
  private usageSequence = 0;
  /** The number of the last refresh applied. */
  private appliedRefresh = 0;
  private refreshing: { generation: number; sequence: number; promise: Promise<AccountSnapshot> } | undefined;
  private reconcileTimer: ReturnType<typeof setTimeout> | undefined;
  /** The key's spend and the balance as read by the last refreshes, oldest first (an unknown outcome is judged against them). */
  private readings: SpendReading[] = [];

  constructor(
    private readonly api: AccountApiProvider,
    private readonly now: () => number = Date.now,
  ) {}

  get snapshot(): AccountSnapshot {
    return this.current;
  }

  /**
   * The key or the base URL changed (here, or in another window): the old figures are dropped at
   * once, whatever is in flight for the old identity is discarded, and the new one is read.
   */
  switchIdentity(): Promise<AccountSnapshot> {
    this.generation++;
    this.update({ status: 'loading', switching: true });
    return this.refresh();
  }

  /** Reads user, balance, key and stats; concurrent callers of the same identity share one refresh. */
  refresh(): Promise<AccountSnapshot> {
    return this.refreshStartedAfter(-1);
  }

  /**
   * A refresh that started after the number `after`: one in flight that started earlier may hold
   * figures from before a charge, so a new one is started instead.
   */
  private refreshStartedAfter(after: number): Promise<AccountSnapshot> {
    const inFlight = this.refreshing;
    if (inFlight?.generation === this.generation && inFlight.sequence > after) return inFlight.promise;
    const generation = this.generation;
    const started = ++this.sequence;
    const promise: Promise<AccountSnapshot> = this.load(generation, started).finally(() => {
      if (this.refreshing?.promise === promise) this.refreshing = undefined;
    });
    this.refreshing = { generation, sequence: started, promise };
    return promise;
  }

  /**
   * Every generation answer carries the balance after the charge: no extra request needed. Usage
   * of another identity (a job sent with the old key) is discarded.
   */
  applyUsage(usage: Usage, identity?: string): void {
    if (identity !== undefined && identity !== this.current.identity) return;
    const cost = usage.cost_rub;
    const budget =
      this.current.budget === undefined || cost === undefined ? this.current.budget : fromKopecks(toKopecks(this.current.budget) - toKopecks(cost));
    // Without the balance after the charge, the figures are not fresh: the reconcile reads them.
    const balance = usage.balance ?? this.current.balance;
    const updatedAt = usage.balance === undefined ? this.current.updatedAt : this.now();
    // Newer than any refresh in flight: those started before this charge.
    this.usageSequence = ++this.sequence;
    this.update({ ...this.current, status: 'ready', balance, budget, updatedAt });
  }

  /** The gateway refused a request for lack of funds: remember a budget refusal, and read the figures again. */
  noteFundsRefusal(scope: 'balance' | 'budget' | 'unknown', identity?: string): Promise<AccountSnapshot> {
    if (scope === 'budget' && (identity === undefined || identity === this.current.identity)) {
      this.update({ ...this.current, budgetRefusal: { budget: this.current.budget, at: this.now() } });
    }
    return this.refresh();
  }

  /**
   * Figures a local refusal may rest on: refreshed first (waiting at most `waitMs`) when they are
   * older than `maxAgeMs`, belong to a switched identity, or the budget's reset time has passed.
   * Empty when still unknown: the request is then sent and the gateway decides.
   */
  async currentFunds(maxAgeMs = FUNDS_MAX_AGE_MS, waitMs = FUNDS_WAIT_MS): Promise<CurrentFunds> {
    if (!this.isFresh(maxAgeMs)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.refresh().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    if (!this.isFresh(maxAgeMs)) return {};
    const s = this.current;
    const refusal = s.budgetRefusal;
    const budgetRefusedByGateway = !!refusal && !(s.budget !== undefined && refusal.budget !== undefined && s.budget > refusal.budget);
    return { balance: s.balance, budget: s.budget, ...(budgetRefusedByGateway ? { budgetRefusedByGateway } : {}) };
  }

  /**
   * Reconciles budget and statistics a little later (they are not in the generation answer), with
   * figures requested after this call: called once a paid call ended.
   */
  reconcileSoon(delayMs = 1500): void {
    const calledAt = this.sequence;
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.reconcileTimer = setTimeout(() => {
      this.reconcileTimer = undefined;
      this.refreshStartedAfter(calledAt).catch(() => undefined);
    }, delayMs);
  }

  /**
   * Refreshes now and says what changed (after a request whose outcome is unknown), against the
   * figures known before the request was sent when given: a refresh in between must not hide a charge.
   * The figures are requested now, after the paid call ended: a refresh in flight is not joined.
   */
  async reconcile(baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>): Promise<BalanceChange> {
    const before = baseline ? { ...this.current, ...baseline } : this.current;
    const after = await this.refreshStartedAfter(this.sequence);
    const delta = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : fromKopecks(toKopecks(b) - toKopecks(a)));
    // A switch in between makes the two sides figures of different accounts: no delta.
    if (before.identity !== undefined && after.identity !== before.identity) return { before, after };
    return { before, after, balanceDelta: delta(before.balance, after.balance), budgetDelta: delta(before.budget, after.budget) };
  }

  dispose(): void {
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    this.changed.dispose();
  }

  private isFresh(maxAgeMs: number): boolean {
    const s = this.current;
    if (s.status !== 'ready' || s.switching || s.updatedAt === undefined || this.now() - s.updatedAt > maxAgeMs) return false;
    const budget = s.key?.budget;
    const resetAt = budget?.reset_at
      ? Date.parse(budget.reset_at)
      : typeof budget?.reset_in_seconds === 'number'
        ? s.updatedAt + budget.reset_in_seconds * 1000
        : NaN;
    // A budget whose reset time has passed since it was read is refilled at the gateway.
    return !(resetAt <= this.now() && resetAt >= s.updatedAt);
  }

  private async load(generation: number, started: number): Promise<AccountSnapshot> {
    let resolved: Awaited<ReturnType<AccountApiProvider>>;
    try {
      resolved = await this.api();
    } catch (error) {
      if (generation !== this.generation) return this.refresh();
      // A provider that fails (a base URL that does not parse, say) must not leave the status at "loading".
      this.update({ ...this.current, status: statusOfError(error), error: summarizeError(error) });
      return this.current;
    }
    if (generation !== this.generation) return this.refresh();
    if (resolved === 'no-url' || resolved === 'no-key') {
      this.update({ status: resolved });
      return this.current;
    }
    const { api, identity } = 'api' in resolved ? resolved : { api: resolved, identity: undefined };
    if (identity !== undefined && this.current.identity !== undefined && identity !== this.current.identity) {
      // Another key or gateway without an event (a missed one): start over for the new identity.
      this.generation++;
      generation = this.generation;
      this.refreshing = undefined;
      this.update({ status: 'loading', switching: true, identity });
    } else if (this.current.status !== 'ready' || this.current.identity !== identity) {
      this.update({ ...this.current, status: 'loading', identity });
    }
    // Each part on its own: a failing stats or me must not hide a fresh balance and budget.
    const askedAt = this.now();
    const [user, balance, key, stats] = await Promise.allSettled([api.me(), api.balance(), api.key(), api.stats()]);
    if (generation !== this.generation) return this.refresh();
    this.remember(askedAt, identity, balance, stats);
    // A refresh that started later was applied already: every figure here is older.
    if (started < this.appliedRefresh) return this.current;
    this.appliedRefresh = started;
    // A usage that arrived after this refresh started brought newer funds: they stay.
    this.update(merge(this.current, { user, balance, key, stats }, this.now(), started < this.usageSequence));
    return this.current;
  }

  /**
   * The newest figures asked for before `time` (ms since epoch) of the current key and gateway:
   * what the account was known to be before a request went out.
   */
  readingBefore(time: number): SpendReading | undefined {
    const identity = this.current.identity;
    return this.readings.filter((r) => r.at < time && r.identity === identity).at(-1);
  }

  private remember(at: number, identity: string | undefined, balance: PromiseSettledResult<BalanceRecord>, stats: PromiseSettledResult<StatsSummary>): void {
    const reading: SpendReading = {
      at,
      identity,
      ...(balance.status === 'fulfilled' ? { balance: balance.value.balance } : {}),
      ...(stats.status === 'fulfilled' && typeof stats.value.month_spend === 'number' ? { monthSpend: stats.value.month_spend } : {}),
    };
    this.readings = [...this.readings.filter((r) => r.identity === identity), reading].slice(-MAX_READINGS);
  }

  private update(next: AccountSnapshot): void {
    this.current = next;
    this.changed.fire(next);
  }
}

interface Parts {
  user: PromiseSettledResult<UserRecord>;
  balance: PromiseSettledResult<BalanceRecord>;
  key: PromiseSettledResult<KeyRecord>;
  stats: PromiseSettledResult<StatsSummary>;
}

/**
 * The snapshot after a refresh: what was read replaces, what failed keeps its old figures and is
 * reported. With `keepFunds`, balance and budget stay: they are newer than this refresh (a charge's usage).
 */
function merge(previous: AccountSnapshot, parts: Parts, now: number, keepFunds: boolean): AccountSnapshot {
  const failed = (Object.keys(parts) as AccountPart[]).filter((name) => parts[name].status === 'rejected');
  const first = failed[0];
  const firstError: unknown = first ? (parts[first] as PromiseRejectedResult).reason : undefined;
  const value = <T>(r: PromiseSettledResult<T>): T | undefined => (r.status === 'fulfilled' ? r.value : undefined);
  const authError = failed.map((name): unknown => (parts[name] as PromiseRejectedResult).reason).find((e) => e instanceof AuthenticationError);
  if (authError || failed.length === 4) {
    const error = authError ?? firstError;
    return { ...previous, switching: undefined, status: statusOfError(error), error: summarizeError(error), failedParts: failed };
  }
  const balance = value(parts.balance);
  const key = value(parts.key) ?? previous.key;
  const next: AccountSnapshot = {
    ...previous,
    status: 'ready',
    switching: undefined,
    user: value(parts.user) ?? previous.user,
    key,
    stats: value(parts.stats) ?? previous.stats,
    statsAt: value(parts.stats) ? now : previous.statsAt,
    error: firstError === undefined ? undefined : summarizeError(firstError),
    failedParts: failed.length ? failed : undefined,
  };
  if (keepFunds) return next;
  if (balance) {
    next.balance = balance.balance;
    next.updatedAt = now;
  }
  const budget = balance?.budget ?? value(parts.key)?.budget?.remaining;
  if (budget !== undefined || (balance && !key?.budget)) next.budget = budget;
  // A budget that grew since the gateway refused for it (a reset, a top-up) lifts the refusal.
  if (next.budgetRefusal && next.budget !== undefined && (next.budgetRefusal.budget === undefined || next.budget > next.budgetRefusal.budget)) {
    next.budgetRefusal = undefined;
  }
  return next;
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
