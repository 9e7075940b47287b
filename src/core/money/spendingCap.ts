// The agents' spending cap (the MCP server and the chat tool): no person confirms each cost, so
// every paid call is held against a per-call maximum reservation and a per-session total before it
// is sent. The session counts what was charged (usage.cost_rub), the full reservation when the
// outcome is unknown, nothing for a call that never left; calls in flight hold their reservation,
// so parallel calls cannot overrun it. Amounts in kopecks. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { formatRubles, fromKopecks, toKopecks } from './cost';
import { SpendingCapError } from '../gateway/errors';

export interface CapLimits {
  maxCostPerCall: number;
  maxCostPerSession: number;
}

export interface CapStatus extends CapLimits {
  spentThisSession: number;
  /** What may still be reserved in this session (in-flight reservations already subtracted). */
  remainingThisSession: number;
}

export interface CapHold {
  /** Settles the hold with what was charged; `undefined` when unknown (the whole reservation counts). */
  settle(chargedRub: number | undefined): void;
  /** Nothing was charged (refused by the gateway, or never sent). */
  release(): void;
}

export class SpendingCap {
  private spentKop = 0;
  private heldKop = 0;

  /** `limits` is read on every check: a changed setting applies to the next call. */
  constructor(
    private readonly limits: () => CapLimits,
    private readonly locale = 'en',
  ) {}

  status(): CapStatus {
    const { maxCostPerCall, maxCostPerSession } = this.limits();
    return {
      maxCostPerCall,
      maxCostPerSession,
      spentThisSession: fromKopecks(this.spentKop),
      remainingThisSession: fromKopecks(Math.max(0, toKopecks(maxCostPerSession) - this.spentKop - this.heldKop)),
    };
  }

  /** Why a call reserving `reservation` may not be sent now; undefined when it may. Holds nothing. */
  refusal(reservation: number): SpendingCapError | undefined {
    const rub = (v: number) => formatRubles(v, this.locale);
    const status = this.status();
    const neededKop = toKopecks(reservation);
    if (neededKop > toKopecks(status.maxCostPerCall)) {
      return new SpendingCapError(
        'maxCostPerCall',
        reservation,
        status.maxCostPerCall,
        l10n.t(
          'Refused before sending: this call reserves {0}, above the per-call cap of {1}. Lower "n" or choose a cheaper model; the cap is set by gatewayImages.mcp.maxCostPerCall (GATEWAY_IMAGES_MAX_COST_PER_CALL).',
          rub(reservation),
          rub(status.maxCostPerCall),
        ),
      );
    }
    if (neededKop > toKopecks(status.remainingThisSession)) {
      return new SpendingCapError(
        'maxCostPerSession',
        reservation,
        status.maxCostPerSession,
        l10n.t(
          'Refused before sending: this call reserves {0}, but only {1} of the session cap of {2} is left ({3} spent). The cap is set by gatewayImages.mcp.maxCostPerSession (GATEWAY_IMAGES_MAX_COST_PER_SESSION); a new session starts with a new allowance.',
          rub(reservation),
          rub(status.remainingThisSession),
          rub(status.maxCostPerSession),
          rub(status.spentThisSession),
        ),
      );
    }
    return undefined;
  }

  /** Holds `reservation` for a call about to be sent; throws the SpendingCapError when the cap does not allow it. */
  reserve(reservation: number): CapHold {
    const refused = this.refusal(reservation);
    if (refused) throw refused;
    const neededKop = toKopecks(reservation);
    this.heldKop += neededKop;
    let open = true;
    const close = (spentKop: number) => {
      if (!open) return;
      open = false;
      this.heldKop -= neededKop;
      this.spentKop += spentKop;
    };
    return {
      settle: (charged) => close(charged === undefined ? neededKop : toKopecks(charged)),
      release: () => close(0),
    };
  }
}
