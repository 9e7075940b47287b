// The deadline of one gateway call merged with the caller's cancel (AbortSignal.timeout and
// AbortSignal.any), and which of the two a failure is reported as. Waits on the signals' events.
import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import { Deadline } from '../../src/core/gateway/deadline';
import { CancelledError, ConnectionError, TimeoutError } from '../../src/core/gateway/errors';

describe('Deadline', () => {
  it('the deadline passing aborts the signal and reads as a timeout', async () => {
    const deadline = new Deadline(20);
    await once(deadline.signal, 'abort');
    assert.throws(() => deadline.throwIfAborted(), TimeoutError);
    const error = deadline.translate(new Error('whatever undici threw'));
    assert.ok(error instanceof TimeoutError && error.timeoutMs === 20, String(error));
  });

  it("the caller's cancel aborts the signal and reads as cancelled, even once the deadline passed too", async () => {
    const caller = new AbortController();
    const deadline = new Deadline(20, caller.signal);
    assert.equal(deadline.signal.aborted, false);
    caller.abort();
    assert.equal(deadline.signal.aborted, true);
    assert.ok(deadline.translate(new Error('aborted')) instanceof CancelledError);
    await once(AbortSignal.timeout(20), 'abort');
    assert.ok(deadline.translate(new Error('aborted')) instanceof CancelledError, 'the first to fire decides');
  });

  it('a deadline that passed first stays a timeout when the caller cancels afterwards', async () => {
    const caller = new AbortController();
    const deadline = new Deadline(20, caller.signal);
    await once(deadline.signal, 'abort');
    caller.abort();
    assert.ok(deadline.translate(new Error('late cancel')) instanceof TimeoutError);
  });

  it('a caller already cancelled: aborted from the start', () => {
    const caller = new AbortController();
    caller.abort();
    const deadline = new Deadline(60_000, caller.signal);
    assert.throws(() => deadline.throwIfAborted(), CancelledError);
  });

  it("undici's own failures: its timeouts, an abort, and anything else as a connection error with the code", () => {
    const deadline = new Deadline(60_000);
    const coded = (code: string) => Object.assign(new Error(`failed ${code}`), { code });
    assert.ok(deadline.translate(coded('UND_ERR_HEADERS_TIMEOUT')) instanceof TimeoutError);
    assert.ok(deadline.translate(coded('UND_ERR_BODY_TIMEOUT')) instanceof TimeoutError);
    assert.ok(deadline.translate(coded('UND_ERR_ABORTED')) instanceof CancelledError);
    const refused = deadline.translate(new Error('fetch failed', { cause: coded('ECONNREFUSED') }));
    assert.ok(refused instanceof ConnectionError);
    assert.match(refused.message, /ECONNREFUSED/);
  });
});
