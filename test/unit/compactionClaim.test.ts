// One compaction of the results journal at a time (compactionClaim.ts): a claim holds while its
// process lives, however long it is stopped; a dead process's claim is taken over; a claim file not
// written yet is its maker's for a while; the claim is given up only by its own holder.
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claimCompaction } from '../../src/jobs/results/compactionClaim';

describe('the compaction claim of the results journal', () => {
  let dir: string;
  let journal: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gi-claim-'));
    journal = path.join(dir, 'results.jsonl');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const claimOf = (pid: number, host = os.hostname(), at = new Date()) => JSON.stringify({ pid, host, at: at.toISOString(), token: 'x' });

  it('is refused while another live process holds it (stopped or not), and given up by its holder only', async () => {
    const release = await claimCompaction(journal);
    assert.ok(release, 'free: claimed');
    assert.equal(await claimCompaction(journal, () => true), undefined, 'held by a live process: no second compaction');
    await release();
    assert.deepEqual(await fs.readdir(dir), [], 'given up: the claim file is gone');
    await fs.writeFile(`${journal}.compacting`, claimOf(process.pid));
    const other = await claimCompaction(journal, () => false);
    assert.ok(other, "a dead process's claim is taken over");
    await fs.writeFile(`${journal}.compacting`, claimOf(4242));
    await other();
    assert.deepEqual(await fs.readdir(dir), ['results.jsonl.compacting'], "a claim that is no longer this one's is left alone");
  });

  it("a claim file without its record is its maker's for a minute; another machine's claim holds for ten", async () => {
    const file = `${journal}.compacting`;
    await fs.writeFile(file, '');
    assert.equal(await claimCompaction(journal, () => false), undefined, 'just made, not written yet');
    const old = new Date(Date.now() - 2 * 60_000);
    await fs.utimes(file, old, old);
    assert.ok(await claimCompaction(journal, () => false), 'left unwritten by a crash: taken over');
    await fs.writeFile(file, claimOf(4242, 'another-machine'));
    assert.equal(await claimCompaction(journal, () => false), undefined, "another machine's claim cannot be checked by its process: it holds");
    const older = new Date(Date.now() - 11 * 60_000);
    await fs.utimes(file, older, older);
    assert.ok(await claimCompaction(journal, () => true), 'until it is ten minutes old');
  });
});
