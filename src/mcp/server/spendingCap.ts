// The MCP server's spending cap: agents have no person confirming each cost, so every paid call is
// held against a per-call maximum reservation and a per-session total BEFORE it is sent. The session
// counts what was charged (usage.cost_rub), the full reservation when the outcome is unknown, and
// holds the reservation of calls in flight so parallel calls cannot overrun it. Amounts in kopecks.
import { formatRubles, fromKopecks, toKopecks } from '../../core/cost';

export interface CapStatus {
  maxCostPerCall: number;
  maxCostPerSession: number;
  spentThisSession: number;
  /** What may still be reserved in this session (in-flight reservations already subtracted). */
  remainingThisSession: number;
}

export type CapDecision =
  { ok: true; hold: CapHold } | { ok: false; field: 'maxCostPerCall' | 'maxCostPerSession'; message: string; reservation: number; limit: number };

export interface CapHold {
  /** Settles the hold with what was charged; `undefined` when unknown (the whole reservation counts). */
  settle(chargedRub: number | undefined): void;
  /** Nothing was charged (refused by the gateway, or never sent). */
  release(): void;
}

export class SpendingCap {
  private spentKop = 0;
  private heldKop = 0;

  constructor(
    readonly maxCostPerCall: number,
    readonly maxCostPerSession: number,
    private readonly locale = 'en',
  ) {}

  status(): CapStatus {
    return {
      maxCostPerCall: this.maxCostPerCall,
      maxCostPerSession: this.maxCostPerSession,
      spentThisSession: fromKopecks(this.spentKop),
      remainingThisSession: fromKopecks(Math.max(0, toKopecks(this.maxCostPerSession) - this.spentKop - this.heldKop)),
    };
  }

  /** Whether a call reserving `reservation` may be sent; when it may, the amount is held. */
  check(reservation: number, hold = true): CapDecision {
    const rub = (v: number) => formatRubles(v, this.locale);
    const neededKop = toKopecks(reservation);
    if (neededKop > toKopecks(this.maxCostPerCall)) {
      return {
        ok: false,
        field: 'maxCostPerCall',
        reservation,
        limit: this.maxCostPerCall,
        message: `Refused before sending: this call reserves ${rub(reservation)}, above the per-call cap of ${rub(this.maxCostPerCall)}. Lower "n" or choose a cheaper model; the cap is set by gatewayImages.mcp.maxCostPerCall (GATEWAY_IMAGES_MAX_COST_PER_CALL).`,
      };
    }
    const remaining = this.status().remainingThisSession;
    if (neededKop > toKopecks(remaining)) {
      return {
        ok: false,
        field: 'maxCostPerSession',
        reservation,
        limit: this.maxCostPerSession,
        message: `Refused before sending: this call reserves ${rub(reservation)}, but only ${rub(remaining)} of the session cap of ${rub(this.maxCostPerSession)} is left (${rub(fromKopecks(this.spentKop))} spent). The cap is set by gatewayImages.mcp.maxCostPerSession (GATEWAY_IMAGES_MAX_COST_PER_SESSION); a new session starts with a new allowance.`,
      };
    }
    if (!hold) return { ok: true, hold: { settle: () => undefined, release: () => undefined } };
    this.heldKop += neededKop;
    let open = true;
    const close = (spentKop: number) => {
      if (!open) return;
      open = false;
      this.heldKop -= neededKop;
      this.spentKop += spentKop;
    };
    return {
      ok: true,
      hold: {
        settle: (charged) => close(charged === undefined ? neededKop : toKopecks(charged)),
        release: () => close(0),
      },
    };
  }
}
