// Money: estimates in kopecks, ruble formatting, affordability, funds after a charge.
import * as assert from 'node:assert/strict';
import {
  cannotAfford,
  checkAffordable,
  estimateCost,
  formatAmount,
  formatRubleRange,
  formatRubles,
  fromKopecks,
  fundsAfter,
  toKopecks,
} from '../../src/core/money/cost';

const NBSP = '\u00a0';

describe('cost', () => {
  describe('estimateCost', () => {
    it('reservation = max × n, range = min..max × n, without float drift', () => {
      assert.deepEqual(estimateCost({ min_price_per_image: 0.1, max_price_per_image: 0.7 }, 3), { n: 3, reservation: 2.1, expectedMin: 0.3, expectedMax: 2.1 });
      assert.deepEqual(estimateCost({ min_price_per_image: 2.5, max_price_per_image: 4 }, 4), { n: 4, reservation: 16, expectedMin: 10, expectedMax: 16 });
      assert.equal(estimateCost({ min_price_per_image: 1.15, max_price_per_image: 1.15 }, 10).reservation, 11.5);
    });
    it('n defaults to 1 and is at least 1, whole', () => {
      assert.equal(estimateCost({ min_price_per_image: 1, max_price_per_image: 2 }).n, 1);
      assert.equal(estimateCost({ min_price_per_image: 1, max_price_per_image: 2 }, 0).reservation, 2);
      assert.equal(estimateCost({ min_price_per_image: 1, max_price_per_image: 2 }, 2.9).n, 2);
    });
    it('kopeck helpers round', () => {
      assert.equal(toKopecks(0.1 + 0.2), 30);
      assert.equal(toKopecks(12.345), 1235);
      assert.equal(fromKopecks(123456), 1234.56);
    });
  });

  describe('formatRubles', () => {
    it(`ru: "1${NBSP}234,50${NBSP}₽" with no-break spaces`, () => {
      assert.equal(formatRubles(1234.5, 'ru'), `1${NBSP}234,50${NBSP}₽`);
      assert.equal(formatRubles(1234567.891, 'ru'), `1${NBSP}234${NBSP}567,89${NBSP}₽`);
      assert.equal(formatRubles(0, 'ru'), `0,00${NBSP}₽`);
      assert.doesNotMatch(formatRubles(1234.5, 'ru'), /[ \u202f]/, 'no plain or narrow spaces');
    });
    it('en: "₽1,234.50"', () => {
      assert.equal(formatRubles(1234.5, 'en'), '₽1,234.50');
      assert.equal(formatRubles(0.1 + 0.2, 'en'), '₽0.30');
    });
    it('defaults to ru', () => assert.equal(formatRubles(5), `5,00${NBSP}₽`));
    it('amount and range', () => {
      assert.equal(formatAmount(1234.5, 'ru'), `1${NBSP}234,50`);
      assert.equal(formatRubleRange(1, 2, 'en'), '₽1.00 – ₽2.00');
      assert.equal(formatRubleRange(2, 2.001, 'en'), '₽2.00', 'equal to the kopeck: one figure');
    });
  });

  describe('checkAffordable', () => {
    const estimate = estimateCost({ min_price_per_image: 2.5, max_price_per_image: 4 }, 2); // reserves 8
    it('covers when both figures reach the reservation (equal is enough)', () => {
      assert.deepEqual(checkAffordable(estimate, { balance: 8, budget: 8 }), { ok: true });
      assert.deepEqual(checkAffordable(estimate, { balance: 100 }), { ok: true });
    });
    it('unknown figures do not block', () => assert.deepEqual(checkAffordable(estimate, {}), { ok: true }));
    it('balance short by a kopeck', () => {
      assert.deepEqual(checkAffordable(estimate, { balance: 7.99, budget: 100 }), { ok: false, scope: 'balance', needed: 8, available: 7.99 });
    });
    it('budget short', () => {
      // The contract reserves on the balance: a budget shortfall warns, and refuses only after the gateway refused for it.
      assert.deepEqual(checkAffordable(estimate, { balance: 100, budget: 5 }), { ok: true, budgetShort: { needed: 8, available: 5 } });
      assert.deepEqual(checkAffordable(estimate, { balance: 100, budget: 5, budgetRefusedByGateway: true }), {
        ok: false,
        scope: 'budget',
        needed: 8,
        available: 5,
      });
      assert.deepEqual(checkAffordable(estimate, { balance: 100, budget: 8, budgetRefusedByGateway: true }), { ok: true });
    });
    it('float noise does not refuse an exact amount', () => {
      const e = estimateCost({ min_price_per_image: 0.1, max_price_per_image: 0.1 }, 3);
      assert.deepEqual(checkAffordable(e, { balance: 0.1 + 0.2 }), { ok: true });
    });
  });

  describe('fundsAfter', () => {
    it('subtracts from known figures only, in kopecks', () => {
      assert.deepEqual(fundsAfter({ balance: 0.3, budget: 10 }, 0.1), { balance: 0.2, budget: 9.9 });
      assert.deepEqual(fundsAfter({ balance: 5 }, 7.5), { balance: -2.5, budget: undefined });
      assert.deepEqual(fundsAfter({}, 1), { balance: undefined, budget: undefined });
    });
  });

  describe('cannotAfford', () => {
    it('one refusal for a request or a run, by balance or budget, with the figures', () => {
      const one = cannotAfford({ ok: false, scope: 'balance', needed: 7, available: 2.5 }, 1, 'en');
      assert.equal(one.kind, 'cannot-afford');
      assert.deepEqual([one.scope, one.needed, one.available], ['balance', 7, 2.5]);
      assert.equal(one.message, 'The gateway reserves ₽7.00 for this request, but the account balance is ₽2.50. Lower "n", choose a cheaper model, or top up.');
      const run = cannotAfford({ ok: false, scope: 'budget', needed: 21, available: 5 }, 3, 'en');
      assert.equal(run.scope, 'budget');
      assert.equal(run.message, "Nothing was sent: the 3 requests reserve ₽21.00 in total, but the key's remaining budget is ₽5.00.");
    });
  });
});
