// What a person is told of the money when a job fails: the rule that commands/common/showError.ts shows
// by, kept pure so that the several-actors soak runs the same rule on every failure it sees.
import { GatewayError } from './errors';

/**
 * 'charged': the answer had begun to arrive, so the gateway charged. 'may have been charged': the
 * request left and its outcome is unknown. 'the message': the error's own message, which says
 * nothing of a charge (a refusal, or nothing was sent).
 */
export type MoneyTold = 'charged' | 'may have been charged' | 'the message';

export function moneyTold(error: unknown): MoneyTold {
  if (!(error instanceof GatewayError) || !error.outcomeUnknown) return 'the message';
  return error.charged ? 'charged' : 'may have been charged';
}
