// The one lease module for every cross-process lock (src/core/files/lease.ts): a holder may be paused
// between any two instructions, so it confirms the lease before what only a holder may do. Pauses are
// real: a holder process stopped with SIGSTOP past the stale time, and woken with SIGCONT.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { holderFileOf, type Lease, LeaseLostError, takeLease } from '../../src/core/files/lease';
import { caught, waitFor } from './support/gateway';
import { type LeaseHolder, startLeaseHolder } from './support/leaseHolder';

const STALE_MS = 2000;

describe('Leases: a lock that a paused holder loses', function () {
  this.timeout(60_000);
  let dir: string;
  let target: string;
  let lockPath: string;
  const holders: LeaseHolder[] = [];
  const leases: Lease[] = [];
  const take = async (onLost?: (error: LeaseLostError) => void) => {
    const lease = await takeLease(target, { lockPath, wait: 'no', staleMs: STALE_MS, onLost });
    leases.push(lease);
    return lease;
  };
  const identity = () => {
    const stat = statSync(lockPath);
    return `${stat.ino}:${stat.birthtimeMs}`;
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gwi-lease-'));
    target = path.join(dir, 'run-1');
    lockPath = `${target}.lock`;
  });

  afterEach(async () => {
    for (const holder of holders.splice(0)) {
      process.kill(holder.pid, 'SIGCONT');
      await holder.kill();
    }
    for (const lease of leases.splice(0)) await lease.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a held lease confirms; another taker is refused at once with ELOCKED', async () => {
    const holder = await startLeaseHolder(target, lockPath, STALE_MS);
    holders.push(holder);
    assert.deepEqual(await holder.ask('confirm'), { done: 'confirm', ok: true, lostTold: 0 });
    const refused = await caught<NodeJS.ErrnoException>(() => take());
    assert.equal(refused.code, 'ELOCKED');
    // Refreshed while held: still its own past the stale time.
    const made = identity();
    const since = statSync(lockPath).mtimeMs;
    await waitFor(() => statSync(lockPath).mtimeMs > since + STALE_MS / 2, 10_000);
    assert.deepEqual(await holder.ask('confirm'), { done: 'confirm', ok: true, lostTold: 0 });
    assert.equal(identity(), made);
  });

  it("a holder paused past the stale time: another takes the lease; the woken holder's confirm rejects with LeaseLostError, onLost is told once, and its release leaves the new holder's lock", async () => {
    const holder = await startLeaseHolder(target, lockPath, STALE_MS);
    holders.push(holder);
    process.kill(holder.pid, 'SIGSTOP');
    // Stopped, it refreshes nothing: the lock goes stale, and another process may take it.
    await waitFor(() => Date.now() - statSync(lockPath).mtimeMs > STALE_MS + 300, 20_000);
    let toldNew = 0;
    const taker = await take(() => toldNew++);
    const takers = identity();
    process.kill(holder.pid, 'SIGCONT');

    const confirmed = await holder.ask('confirm');
    assert.equal(confirmed.ok, false, 'the woken holder does not hold the lease');
    assert.equal(confirmed.lostError, true, confirmed.error);
    const released = await holder.ask('release');
    assert.equal(released.ok, true, released.error);
    // Told once, however it learned it (its refresh timer, confirm, release).
    assert.equal(released.lostTold, 1);
    assert.ok(existsSync(lockPath), "the new holder's lock folder is still there");
    assert.equal(identity(), takers);
    await taker.confirm();
    assert.equal(toldNew, 0);
    const again = await caught<NodeJS.ErrnoException>(() => takeLease(target, { lockPath, wait: 'no', staleMs: STALE_MS }));
    assert.equal(again.code, 'ELOCKED', 'the file is still held, by the new holder');
  });

  it('a lease not refreshed within the stale time is lost, even with nobody taking it over; its release frees the file', async () => {
    const lost: LeaseLostError[] = [];
    const lease = await take((error) => lost.push(error));
    await lease.confirm();
    // As if this process had been stopped: the lock's last refresh is older than the stale time.
    const past = new Date(Date.now() - STALE_MS - 1000);
    utimesSync(lockPath, past, past);
    const error = await caught(() => lease.confirm());
    assert.ok(error instanceof LeaseLostError, String(error));
    assert.ok(lease.lost);
    await assert.rejects(lease.confirm(), LeaseLostError);
    assert.equal(lost.length, 1, 'onLost told once');
    await lease.release();
    assert.equal(existsSync(lockPath), false, 'its own folder is removed: the file is not held until the window closes');
    const next = await take();
    await next.confirm();
  });

  it("a lock folder made again by another holder (the same inode, on a file system without birth times) is told apart by the holder's token", async () => {
    const lease = await take();
    const made = identity();
    // Another process took the lease over, and its folder got the old inode back: only the token differs.
    writeFileSync(holderFileOf(lockPath), 'another-process-token');
    await assert.rejects(lease.confirm(), LeaseLostError);
    await lease.release();
    assert.ok(existsSync(lockPath), "a lost lease never removes a folder that may be another holder's");
    assert.equal(identity(), made);
    rmSync(lockPath, { recursive: true });
  });
});
