// Waiting on state, for the e2e helpers and tests.
import { setTimeout as sleep } from 'timers/promises';

/**
 * Polls `probe` until it returns a value other than undefined or false, and returns that value:
 * a wait on a state the test can read (a file, the emulator's log, the DOM), never on time alone.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string | (() => string | Promise<string>),
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`Waited ${Math.round(timeoutMs / 1000)} s for ${typeof what === 'string' ? what : await what()}`);
    await sleep(100);
  }
}
