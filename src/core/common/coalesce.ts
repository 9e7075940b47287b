// The latest of a stream of values, passed on at most once per interval: a prompt file of 500 lines
// reports each line, and a notification redrawn 500 times costs the window more than the run itself.

export interface Coalescer<T> {
  /** A new value: passed on now if the interval since the last has passed, else once it has. */
  push(value: T): void;
  /** Drops the value held back and its timer. */
  dispose(): void;
}

/** The clock and timer of a coalescer (tests give their own). */
export interface CoalesceClock {
  now(): number;
  setTimer(run: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

const realClock: CoalesceClock = {
  now: () => Date.now(),
  setTimer: (run, ms) => setTimeout(run, ms),
  clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

/**
 * Calls `emit(latest, pushed)` with the last value pushed and how many were pushed since the last
 * call: at once for the first, then at most once per `intervalMs`; none is lost, the last one held
 * back goes out when the interval ends.
 */
export function coalesce<T>(emit: (latest: T, pushed: number) => void, intervalMs: number, clock: CoalesceClock = realClock): Coalescer<T> {
  let latest: T | undefined;
  let pushed = 0;
  let lastEmit = -Infinity;
  let timer: unknown;
  const clear = () => {
    if (timer !== undefined) clock.clearTimer(timer);
    timer = undefined;
  };
  const emitNow = () => {
    clear();
    if (pushed === 0) return;
    const value = latest as T;
    const count = pushed;
    latest = undefined;
    pushed = 0;
    lastEmit = clock.now();
    emit(value, count);
  };
  return {
    push(value) {
      latest = value;
      pushed++;
      if (timer !== undefined) return;
      const since = clock.now() - lastEmit;
      if (since >= intervalMs) emitNow();
      else timer = clock.setTimer(emitNow, intervalMs - since);
    },
    dispose() {
      clear();
      latest = undefined;
      pushed = 0;
    },
  };
}
