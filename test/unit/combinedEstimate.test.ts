import * as assert from 'node:assert/strict';
import { checkAffordable, estimateCost } from '../../src/core/money/cost';
import { asCostEstimate, combineEstimates } from '../../src/core/money/combinedEstimate';

describe('combined estimate', () => {
  const a = { min_price_per_image: 1.1, max_price_per_image: 2.2 };
  const b = { min_price_per_image: 0.1, max_price_per_image: 0.3 };

  it('sums reservations and expected ranges in kopecks', () => {
    const combined = combineEstimates([estimateCost(a, 3), estimateCost(b, 1), estimateCost(b, 2)]);
    assert.deepEqual(combined, { requests: 3, images: 6, reservation: 7.5, expectedMin: 3.6, expectedMax: 7.5, largestReservation: 6.6 });
  });

  it('is zero for nothing', () => {
    assert.deepEqual(combineEstimates([]), { requests: 0, images: 0, reservation: 0, expectedMin: 0, expectedMax: 0, largestReservation: 0 });
  });

  it('judges the funds on the whole run', () => {
    const combined = asCostEstimate(combineEstimates([estimateCost(a, 1), estimateCost(a, 1)]));
    assert.deepEqual(checkAffordable(combined, { balance: 4.4 }), { ok: true });
    // The reservation is made on the balance: a budget that looks short only warns...
    assert.deepEqual(checkAffordable(combined, { balance: 100, budget: 4.39 }), { ok: true, budgetShort: { needed: 4.4, available: 4.39 } });
    // ...unless the gateway itself refused this key for its budget.
    assert.deepEqual(checkAffordable(combined, { balance: 100, budget: 4.39, budgetRefusedByGateway: true }), {
      ok: false,
      scope: 'budget',
      needed: 4.4,
      available: 4.39,
    });
    assert.deepEqual(checkAffordable(combined, { balance: 4.39 }), { ok: false, scope: 'balance', needed: 4.4, available: 4.39 });
  });
});
