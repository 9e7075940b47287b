// All mutable emulator state: balance, keys, usage history, request log, armed faults.
// Money is kept in integer kopecks so sums never drift.
import type { StatsSummary } from './wire';
import { FaultQueue, type FaultSpec } from './faults';
import type { FormName } from './forms';
import { DEMO_KEYS, applyBudgetReset, initialKeys, keyRecord, kopToRub, rubToKop, type KeyState } from './keys';

export interface RecordedRequest {
  id: string;
  method: string;
  path: string;
  /** The key's name, 'unknown' for an unknown key; absent without an Authorization header. */
  key?: string;
  /** 0 while headers have not been sent (or never were). */
  status: number;
  /** True for the generation and edit endpoints. */
  paid: boolean;
  reservedRub: number;
  chargedRub: number;
  faults: string[];
  at: string;
  /** Paid requests: when their reservation was charged or returned (it was held from a moment after `at` until then). */
  settledAt?: string;
  /** True when the client went away before the response was complete. */
  clientAborted?: boolean;
  /** Paid requests that passed validation: the prompt (lets a test match its jobs to requests). */
  prompt?: string;
  /** Paid requests: a digest of what was asked (model, prompt, n, parameters, references), to spot a resend. */
  fingerprint?: string;
  /** Paid requests with `recordImages` on: each image of the answer, and whether all of it was sent. */
  images?: SentImage[];
}

export interface SentImage {
  index: number;
  sha256: string;
  bytes: number;
  /** Its whole base64 string and the closing quote went out, uncorrupted. */
  delivered: boolean;
}

/** One download of an image served at an address (the url-images form, files.ts). */
export interface RecordedDownload {
  path: string;
  /** 'gateway': the emulator's own origin; 'other': its second port (url-other-origin). */
  origin: 'gateway' | 'other';
  /** Whether the request carried an Authorization header (its value is not kept). */
  authorization: boolean;
  /** 0 while headers have not been sent. */
  status: number;
  faults: string[];
  at: string;
}

/** An image the emulator serves at an address until the next reset. */
export interface ServedFile {
  bytes: Buffer;
  mediaType: string;
}

interface UsageEvent {
  at: number;
  model: string;
  costKop: number;
}

/** A reservation held on the balance (and on the key budget when it has one). */
export interface Reservation {
  key: KeyState;
  amountKop: number;
  settled: boolean;
  /** The reset() generation it was made in; a reset forgets older reservations. */
  epoch: number;
}

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; scope: 'balance' | 'budget'; neededKop: number; availableKop: number };

const DAY_MS = 86_400_000;
// The request log forgets old free requests first: tests count paid requests by the log's length
// before and after, which a cap that dropped paid ones would break once a long run filled it.
const MAX_LOG = 10_000;
const MAX_PAID_LOG = 100_000;

/** A few past charges on the budget key so the demo's statistics show figures. */
function seedHistory(now: number): UsageEvent[] {
  const day = (n: number, hour: number) => Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate() - n, hour);
  return [
    { at: day(12, 10), model: 'lumen-xl', costKop: 984 },
    { at: day(6, 9), model: 'aurora-1', costKop: 327 },
    { at: day(6, 9), model: 'aurora-1', costKop: 327 },
    { at: day(3, 15), model: 'prism-2', costKop: 512 },
    { at: day(1, 18), model: 'aurora-1', costKop: 341 },
    { at: day(40, 12), model: 'mosaic-edit', costKop: 650 }, // outside the 30-day window
  ];
}

export class EmulatorState {
  readonly faults = new FaultQueue();
  /** Default padding size for the `large` fault (CLI --image-bytes). */
  defaultImageBytes?: number;
  /** Faults armed at start (CLI --fault); reset() arms them again. */
  initialFaults: FaultSpec[] = [];
  /** Answer forms in force (see forms.ts); reset() restores `initialForms`. */
  forms = new Set<FormName>();
  initialForms: FormName[] = [];
  /** Keep a SHA-256 of every image sent (RecordedRequest.images): for money invariants in tests. Off by default (costs CPU on large images). */
  recordImages = false;
  /** A pause between the images of one answer, in ms (POST /__emulator/state {"imageGapMs"}): the first image lands early. */
  imageGapMs = 0;
  /** A pause between the answer's headers and its first image, in ms (POST /__emulator/state {"headGapMs"}): charged, nothing to save yet. */
  headGapMs = 0;
  /**
   * A pause halfway through each image's base64, in ms (POST /__emulator/state {"midImageGapMs"}):
   * a large image is held half-received (an image under 2 MiB of text pauses after its first MiB,
   * or before its closing quote).
   */
  midImageGapMs = 0;
  /**
   * A slow gateway's account answers, in ms (POST /__emulator/state {"accountGapMs"}): the figures are
   * read when the request arrives and sent this much later, so a charge can land in between.
   */
  accountGapMs = 0;
  /** Images answered as addresses (url-images), by path (`/files/<request id>/<i>.png`). */
  readonly files = new Map<string, ServedFile>();
  private downloadLog: RecordedDownload[] = [];
  private balanceKop = 0;
  private keys = new Map<string, KeyState>();
  private usage = new Map<string, UsageEvent[]>();
  private log: RecordedRequest[] = [];
  private requestCounter = 0;
  private reservations = 0;
  private charges = 0;
  private epoch = 0;
  /** Keys added through POST /__emulator/keys; reset() adds them again, fresh. */
  private extraKeys: { key: string; like: DemoKeyName }[] = [];

  constructor(private readonly initialBalanceRub: number) {
    this.reset();
  }

  /** Restores the initial balance, budgets, history, request log and faults. */
  reset(now = Date.now()): void {
    const history = seedHistory(now);
    this.epoch += 1;
    const recent = history.filter((e) => e.at >= now - 30 * DAY_MS);
    this.balanceKop = rubToKop(this.initialBalanceRub);
    this.keys = initialKeys(
      now,
      recent.reduce((s, e) => s + e.costKop, 0),
    );
    for (const extra of this.extraKeys) this.keys.set(extra.key, copyOf(this.keys.get(DEMO_KEYS[extra.like])!, extra.key));
    this.usage = new Map([[DEMO_KEYS.budget, history]]);
    this.log = [];
    this.files.clear();
    this.downloadLog = [];
    this.reservations = 0;
    this.charges = 0;
    this.faults.clear();
    for (const spec of this.initialFaults) this.faults.arm(spec);
    this.imageGapMs = 0;
    this.headGapMs = 0;
    this.midImageGapMs = 0;
    this.accountGapMs = 0;
    this.forms = new Set(this.initialForms);
  }

  setForms(forms: readonly FormName[]): void {
    this.forms = new Set(forms);
  }

  /** The budget-reset form: a budget with a reset interval is due for its reset now. */
  private resetDue(key: KeyState | undefined, now: number): void {
    if (this.forms.has('budget-reset') && key?.budget?.interval) key.budget.resetAt = Math.min(key.budget.resetAt ?? now, now);
  }

  get balanceRub(): number {
    return kopToRub(this.balanceKop);
  }

  setBalance(rub: number): void {
    this.balanceKop = rubToKop(rub);
  }

  /** A payment onto the account from outside, in one step: reservations and charges meanwhile stay counted. Returns the balance after it. */
  topUp(rub: number): number {
    this.balanceKop += rubToKop(rub);
    return this.balanceRub;
  }

  /** Registers one more key with the properties (budget, expiry, revocation) of a demo key as they are now. */
  addKey(key: string, like: DemoKeyName): KeyState {
    const state = copyOf(this.keys.get(DEMO_KEYS[like])!, key);
    this.keys.set(key, state);
    this.extraKeys = [...this.extraKeys.filter((e) => e.key !== key), { key, like }];
    return state;
  }

  /** Looks a key up by its raw string. */
  key(key: string): KeyState | undefined {
    return this.keys.get(key);
  }

  /** Remaining budget of a key in rubles, undefined when it has none. */
  keyBudgetRub(key: string): number | undefined {
    const k = this.findKey(key);
    if (!k?.budget) return undefined;
    this.resetDue(k, Date.now());
    applyBudgetReset(k.budget, Date.now());
    return kopToRub(k.budget.remainingKop);
  }

  /** Sets a key's remaining budget (by raw key or name); a key without budget gets one; null removes it. */
  setKeyBudget(key: string, rub: number | null): boolean {
    const k = this.findKey(key);
    if (!k) return false;
    if (rub === null) delete k.budget;
    else if (k.budget) k.budget.remainingKop = rubToKop(rub);
    else k.budget = { initialKop: rubToKop(rub), remainingKop: rubToKop(rub) };
    return true;
  }

  /** Looks a key up by its raw string or its name. */
  findKey(keyOrName: string): KeyState | undefined {
    return this.keys.get(keyOrName) ?? [...this.keys.values()].find((k) => k.name === keyOrName);
  }

  get requests(): readonly RecordedRequest[] {
    return this.log;
  }

  /** Every download of an image served at an address since the last reset, in order. */
  get downloads(): readonly RecordedDownload[] {
    return this.downloadLog;
  }

  /** Creates the log entry of a download; the caller fills in its status. */
  recordDownload(path: string, origin: RecordedDownload['origin'], authorization: boolean): RecordedDownload {
    const entry: RecordedDownload = { path, origin, authorization, status: 0, faults: [], at: new Date().toISOString() };
    this.downloadLog.push(entry);
    if (this.downloadLog.length > MAX_LOG) this.downloadLog.splice(0, this.downloadLog.length - MAX_LOG);
    return entry;
  }

  get totalReservations(): number {
    return this.reservations;
  }

  get totalCharges(): number {
    return this.charges;
  }

  armFault(spec: FaultSpec): void {
    this.faults.arm(spec);
  }

  clearFaults(): void {
    this.faults.clear();
    for (const spec of this.initialFaults) this.faults.arm(spec);
  }

  /** Creates the log entry of a new request; callers update it as the request proceeds. */
  record(method: string, path: string, paid: boolean): RecordedRequest {
    this.requestCounter += 1;
    const entry: RecordedRequest = {
      id: `req_${this.requestCounter.toString(16).padStart(8, '0')}`,
      method,
      path,
      status: 0,
      paid,
      reservedRub: 0,
      chargedRub: 0,
      faults: [],
      at: new Date().toISOString(),
    };
    this.log.push(entry);
    // Trimmed in steps of a thousand, so that a full log costs one pass per thousand requests.
    if (this.log.length > MAX_LOG + 1000) this.trimLog();
    return entry;
  }

  private trimLog(): void {
    let freeToDrop = this.log.length - MAX_LOG;
    this.log = this.log.filter((entry) => entry.paid || freeToDrop-- <= 0);
    if (this.log.length > MAX_PAID_LOG) this.log.splice(0, this.log.length - MAX_PAID_LOG);
  }

  /** Holds `amountKop` on the balance and on the key budget, or refuses with nothing held. */
  reserve(key: KeyState, amountKop: number): ReserveResult {
    this.resetDue(key, Date.now());
    if (key.budget) applyBudgetReset(key.budget, Date.now());
    if (this.balanceKop < amountKop) return { ok: false, scope: 'balance', neededKop: amountKop, availableKop: this.balanceKop };
    if (key.budget && key.budget.remainingKop < amountKop) {
      return { ok: false, scope: 'budget', neededKop: amountKop, availableKop: key.budget.remainingKop };
    }
    this.balanceKop -= amountKop;
    if (key.budget) key.budget.remainingKop -= amountKop;
    this.reservations += 1;
    return { ok: true, reservation: { key, amountKop, settled: false, epoch: this.epoch } };
  }

  /** Charges the actual cost of a reservation and returns the difference. */
  charge(reservation: Reservation, costKop: number, model: string): void {
    if (reservation.settled || reservation.epoch !== this.epoch) return;
    reservation.settled = true;
    const refund = reservation.amountKop - costKop;
    this.balanceKop += refund;
    if (reservation.key.budget) reservation.key.budget.remainingKop += refund;
    this.charges += 1;
    const events = this.usage.get(reservation.key.key) ?? [];
    events.push({ at: Date.now(), model, costKop });
    this.usage.set(reservation.key.key, events);
  }

  /** Returns a whole reservation (the request failed before the provider answered). */
  release(reservation: Reservation): void {
    if (reservation.settled || reservation.epoch !== this.epoch) return;
    reservation.settled = true;
    this.balanceKop += reservation.amountKop;
    if (reservation.key.budget) reservation.key.budget.remainingKop += reservation.amountKop;
  }

  keyRecord(key: KeyState) {
    this.resetDue(key, Date.now());
    return keyRecord(key, Date.now());
  }

  /** The usage statistics record of a key: today (UTC) and the last 30 days. */
  stats(key: KeyState, now = Date.now()): StatsSummary {
    const d = new Date(now);
    const todayStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    const events = (this.usage.get(key.key) ?? []).filter((e) => e.at >= now - 30 * DAY_MS);
    const today = events.filter((e) => e.at >= todayStart);
    const spendByModel = new Map<string, number>();
    const countByModel = new Map<string, number>();
    for (const e of events) {
      spendByModel.set(e.model, (spendByModel.get(e.model) ?? 0) + e.costKop);
      countByModel.set(e.model, (countByModel.get(e.model) ?? 0) + 1);
    }
    const monthKop = events.reduce((s, e) => s + e.costKop, 0);
    const topSpend = top(spendByModel);
    const topCount = top(countByModel);
    return {
      today_spend: kopToRub(today.reduce((s, e) => s + e.costKop, 0)),
      today_requests: today.length,
      month_spend: kopToRub(monthKop),
      month_requests: events.length,
      avg_daily_spend: kopToRub(Math.round(monthKop / 30)),
      top_model_by_spend: topSpend?.[0] ?? null,
      top_model_by_spend_value: topSpend ? kopToRub(topSpend[1]) : null,
      top_model_by_requests: topCount?.[0] ?? null,
      top_model_by_requests_value: topCount ? topCount[1] : null,
    };
  }

  /** A JSON view for GET /__emulator/state. */
  snapshot(): Record<string, unknown> {
    const now = Date.now();
    const keys: Record<string, unknown> = {};
    for (const k of this.keys.values()) keys[k.key] = { ...keyRecord(k, now), revoked: k.revoked, expired: k.expiresAt !== undefined && k.expiresAt <= now };
    return {
      balance: this.balanceRub,
      keys,
      faults: this.faults.list(),
      forms: [...this.forms],
      totalReservations: this.reservations,
      totalCharges: this.charges,
    };
  }
}

export type DemoKeyName = keyof typeof DEMO_KEYS;

function copyOf(template: KeyState, key: string): KeyState {
  return { ...template, key, name: `${template.name}-extra`, budget: template.budget ? { ...template.budget } : undefined };
}

/** Highest value; ties broken by model id so the answer is stable. */
function top(map: Map<string, number>): [string, number] | undefined {
  let best: [string, number] | undefined;
  for (const [model, value] of map) {
    if (!best || value > best[1] || (value === best[1] && model < best[0])) best = [model, value];
  }
  return best;
}
