// The coalescer behind a prompt file's progress notification: the first value at once, then at most
// one per interval, the last one held back passed on when the interval ends, and the count of values
// each call stands for.
import * as assert from 'node:assert/strict';
import { coalesce, type CoalesceClock } from '../../src/core/common/coalesce';

/** A clock that moves only when told, with the one timer a coalescer sets. */
function manualClock() {
  let now = 0;
  let timer: { at: number; run: () => void } | undefined;
  const clock: CoalesceClock = {
    now: () => now,
    setTimer: (run, ms) => (timer = { at: now + ms, run }),
    clearTimer: (t) => {
      if (t === timer) timer = undefined;
    },
  };
  const advance = (ms: number) => {
    now += ms;
    if (timer && timer.at <= now) {
      const due = timer;
      timer = undefined;
      due.run();
    }
  };
  return { clock, advance, pending: () => timer !== undefined };
}

describe('coalesce: the latest value at most once per interval', () => {
  it('passes the first value on at once, holds the next ones back, and passes the latest with their count when the interval ends', () => {
    const { clock, advance } = manualClock();
    const seen: [number, number][] = [];
    const c = coalesce<number>((v, n) => seen.push([v, n]), 250, clock);
    c.push(1);
    assert.deepEqual(seen, [[1, 1]]);
    advance(100);
    c.push(2);
    c.push(3);
    assert.deepEqual(seen, [[1, 1]], 'within the interval nothing more is passed on');
    advance(149);
    assert.deepEqual(seen, [[1, 1]]);
    advance(1);
    assert.deepEqual(seen, [
      [1, 1],
      [3, 2],
    ]);
  });

  it('passes a value on at once when the interval has passed since the last', () => {
    const { clock, advance, pending } = manualClock();
    const seen: number[] = [];
    const c = coalesce<number>((v) => seen.push(v), 250, clock);
    c.push(1);
    advance(300);
    c.push(2);
    assert.deepEqual(seen, [1, 2]);
    assert.equal(pending(), false, 'no timer is left');
  });

  it('the counts add up to every value pushed: 500 lines in steps of 7 ms make 100 % of the increments', () => {
    const { clock, advance } = manualClock();
    let counted = 0;
    let calls = 0;
    let last = 0;
    const c = coalesce<number>(
      (v, n) => {
        counted += n;
        calls++;
        last = v;
      },
      250,
      clock,
    );
    for (let line = 1; line <= 500; line++) {
      c.push(line);
      advance(7);
    }
    advance(250); // the last interval ends: what it held goes out
    assert.equal(counted, 500);
    assert.equal(last, 500);
    assert.ok(calls <= 16, `${calls} calls for 3.5 s of lines at most one per 250 ms`);
  });

  it('dispose drops the value held back and its timer', () => {
    const { clock, advance, pending } = manualClock();
    const seen: number[] = [];
    const c = coalesce<number>((v) => seen.push(v), 250, clock);
    c.push(1);
    advance(10);
    c.push(2);
    assert.equal(pending(), true);
    c.dispose();
    assert.equal(pending(), false);
    advance(1000);
    assert.deepEqual(seen, [1], 'a disposed coalescer passes nothing on');
  });
});
