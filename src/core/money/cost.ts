// Money: the reservation the gateway makes before a request, the expected range, and how to
// show rubles to people. Amounts are computed in kopecks to avoid float drift.
import * as l10n from '@vscode/l10n';
import { CannotAffordError } from '../gateway/errors';
import { type ImageModel } from '../gateway/types';

export interface CostEstimate {
  n: number;
  /** What the gateway reserves before generating: max_price_per_image × n. */
  reservation: number;
  /** Expected final cost range: min..max price × n. */
  expectedMin: number;
  expectedMax: number;
}

export function estimateCost(model: Pick<ImageModel, 'min_price_per_image' | 'max_price_per_image'>, n = 1): CostEstimate {
  const count = Math.max(1, Math.trunc(n));
  const times = (price: number) => fromKopecks(toKopecks(price) * count);
  return {
    n: count,
    reservation: times(model.max_price_per_image),
    expectedMin: times(model.min_price_per_image),
    expectedMax: times(model.max_price_per_image),
  };
}

export interface FundsSnapshot {
  balance?: number;
  /** Remaining budget of the key, when it has one. */
  budget?: number;
  /**
   * The gateway itself refused this key for its budget, and nothing since says the budget grew.
   * Only then does a budget shortfall refuse locally: the contract reserves on the balance alone.
   */
  budgetRefusedByGateway?: boolean;
}

export type Affordability =
  { ok: true; budgetShort?: { needed: number; available: number } } | { ok: false; scope: 'balance' | 'budget'; needed: number; available: number };

/**
 * Whether the known figures cover the reservation. Unknown figures do not block. The reservation is
 * made on the balance; a budget shortfall only warns (`budgetShort`) unless the gateway refused for it.
 */
export function checkAffordable(estimate: CostEstimate, funds: FundsSnapshot): Affordability {
  const needed = toKopecks(estimate.reservation);
  if (funds.balance !== undefined && toKopecks(funds.balance) < needed) {
    return { ok: false, scope: 'balance', needed: estimate.reservation, available: funds.balance };
  }
  if (funds.budget !== undefined && toKopecks(funds.budget) < needed) {
    const short = { needed: estimate.reservation, available: funds.budget };
    return funds.budgetRefusedByGateway ? { ok: false, scope: 'budget', ...short } : { ok: true, budgetShort: short };
  }
  return { ok: true };
}

/**
 * The refusal, before anything is sent, of what the known funds cannot cover: one request, or a
 * run of several (a batch, a comparison) by their total. The one place its words are made.
 */
export function cannotAfford(refusal: Extract<Affordability, { ok: false }>, requests: number, locale?: string): CannotAffordError {
  const needed = formatRubles(refusal.needed, locale);
  const available = formatRubles(refusal.available, locale);
  const balance = refusal.scope === 'balance';
  const message =
    requests === 1
      ? balance
        ? l10n.t('The gateway reserves {0} for this request, but the account balance is {1}. Lower "n", choose a cheaper model, or top up.', needed, available)
        : l10n.t(
            'The gateway reserves {0} for this request, but the key\'s remaining budget is {1}. Lower "n", choose a cheaper model, or top up.',
            needed,
            available,
          )
      : balance
        ? l10n.t('Nothing was sent: the {0} requests reserve {1} in total, but the account balance is {2}.', requests, needed, available)
        : l10n.t("Nothing was sent: the {0} requests reserve {1} in total, but the key's remaining budget is {2}.", requests, needed, available);
  return new CannotAffordError(refusal.scope, refusal.needed, refusal.available, message);
}

/** Balance and budget after a charge of `amount` (for the live estimate). */
export function fundsAfter(funds: FundsSnapshot, amount: number): FundsSnapshot {
  const minus = (value?: number) => (value === undefined ? undefined : fromKopecks(toKopecks(value) - toKopecks(amount)));
  return { balance: minus(funds.balance), budget: minus(funds.budget) };
}

const formatters = new Map<string, Intl.NumberFormat>();

/** Rubles for people: `1 234,50 ₽` in Russian, `₽1,234.50` in English. */
export function formatRubles(amount: number, locale = 'ru'): string {
  let formatter = formatters.get(locale);
  if (!formatter) {
    formatter = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency: 'RUB',
      currencyDisplay: 'narrowSymbol',
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    });
    formatters.set(locale, formatter);
  }
  // Narrow no-break spaces become plain no-break spaces so every font shows them.
  return formatter.format(amount).replace(/\u202f/g, '\u00a0');
}

/** The number alone with two decimals, for compact places: `1 234,56`. */
export function formatAmount(amount: number, locale = 'ru'): string {
  return new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(amount).replace(/\u202f/g, '\u00a0');
}

/** `1 234,50–2 000,00 ₽` style range. */
export function formatRubleRange(min: number, max: number, locale = 'ru'): string {
  if (toKopecks(min) === toKopecks(max)) return formatRubles(max, locale);
  return `${formatRubles(min, locale)} – ${formatRubles(max, locale)}`;
}

export function toKopecks(rubles: number): number {
  return Math.round(rubles * 100);
}

export function fromKopecks(kopecks: number): number {
  return kopecks / 100;
}
