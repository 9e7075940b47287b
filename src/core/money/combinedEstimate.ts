// One estimate for several paid requests (a batch, a comparison): the sum of the reservations
// and of the expected ranges, in kopecks. Pure: no vscode import.
import { type CostEstimate, fromKopecks, toKopecks } from './cost';

export interface CombinedEstimate {
  /** Number of paid requests. */
  requests: number;
  /** Number of images over all requests. */
  images: number;
  /** The sum of what the gateway reserves, request by request. */
  reservation: number;
  expectedMin: number;
  expectedMax: number;
  /** The largest single reservation: what one request in flight holds at most. */
  largestReservation: number;
}

export function combineEstimates(estimates: readonly CostEstimate[]): CombinedEstimate {
  let [reservation, min, max, largest, images] = [0, 0, 0, 0, 0];
  for (const e of estimates) {
    reservation += toKopecks(e.reservation);
    min += toKopecks(e.expectedMin);
    max += toKopecks(e.expectedMax);
    largest = Math.max(largest, toKopecks(e.reservation));
    images += e.n;
  }
  return {
    requests: estimates.length,
    images,
    reservation: fromKopecks(reservation),
    expectedMin: fromKopecks(min),
    expectedMax: fromKopecks(max),
    largestReservation: fromKopecks(largest),
  };
}

/** The combined estimate in the shape of a single one, for checkAffordable and the confirmation. */
export function asCostEstimate(combined: CombinedEstimate): CostEstimate {
  return { n: combined.images, reservation: combined.reservation, expectedMin: combined.expectedMin, expectedMax: combined.expectedMax };
}
