// What the money alerts told, per key, in the global state every window of the profile shares: a
// second window does not tell again what the first told, and "Don't warn again for this key"
// holds everywhere. Keyed by the account identity (`<base URL>|<key fingerprint>`, never the key).
// No vscode import: the state is any get/update store (globalState in the extension).
import { type AlertFacts, type AlertSettings, evaluateAlerts, type MoneyAlert, type ToldAlerts } from '../core/money/alerts';

export const ALERTS_STATE_KEY = 'gatewayImages.moneyAlerts';
/** Records kept: the most recently used keys. */
const MAX_RECORDS = 20;
/** How long a window waits after claiming a telling before it tells: another window's claim in that time wins. */
export const CLAIM_SETTLE_MS = 400;

export interface AlertRecord {
  told: ToldAlerts;
  /** "Don't warn again for this key". */
  muted?: true;
  /** The window that claimed the last telling (see tellOnce). */
  toldBy?: string;
  /** Last change, ms since epoch: the oldest records go past MAX_RECORDS. */
  at: number;
}

/** The part of vscode.Memento used. */
export interface SharedState {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

export class AlertRecords {
  constructor(
    private readonly state: SharedState,
    /** This window (a random id per extension host). */
    private readonly windowId: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    private readonly now: () => number = Date.now,
  ) {}

  get(identity: string): AlertRecord | undefined {
    return this.all()[identity];
  }

  isMuted(identity: string): boolean {
    return this.get(identity)?.muted === true;
  }

  async setMuted(identity: string, muted: boolean): Promise<void> {
    const { muted: _old, ...record } = this.get(identity) ?? { told: {}, at: 0 };
    await this.put(identity, { ...record, ...(muted ? { muted: true as const } : {}), at: this.now() });
  }

  /**
   * Judges the figures against what was told and keeps the new record. Returns the alerts this
   * window is to tell now: none when the key is muted, or when another window claimed the same
   * telling meanwhile (the last claim in the shared state wins, the others stay silent).
   */
  async tellOnce(identity: string, settings: AlertSettings, facts: AlertFacts): Promise<MoneyAlert[]> {
    const before = this.get(identity);
    if (before?.muted) return [];
    const verdict = evaluateAlerts(settings, facts, before?.told);
    const toldBy = verdict.toTell.length ? this.windowId : before?.toldBy;
    if (JSON.stringify(verdict.told) !== JSON.stringify(before?.told ?? {}) || toldBy !== before?.toldBy) {
      await this.put(identity, { told: verdict.told, ...(toldBy ? { toldBy } : {}), at: this.now() });
    }
    if (!verdict.toTell.length) return [];
    await this.sleep(CLAIM_SETTLE_MS);
    const after = this.get(identity);
    return after?.toldBy === this.windowId && !after.muted ? verdict.toTell : [];
  }

  private all(): Record<string, AlertRecord> {
    const value = this.state.get<unknown>(ALERTS_STATE_KEY);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, AlertRecord>) : {};
  }

  private async put(identity: string, record: AlertRecord): Promise<void> {
    const records = { ...this.all(), [identity]: record };
    const kept = Object.entries(records)
      .sort(([, a], [, b]) => (b.at ?? 0) - (a.at ?? 0))
      .slice(0, MAX_RECORDS);
    await this.state.update(ALERTS_STATE_KEY, Object.fromEntries(kept));
  }
}
