// Writes that stand alone: a job's writes into the results journal on a disk that is really full
// (tmpfs) for a while. A write that fails does not stop the next; the job's end writes the whole
// state; what still fails then is written at the next start from the job's in-flight record; the
// user is told once, plainly. Real jobs against the emulator (a result, and a paid failure whose
// kept answer says what it cost).
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { accountIdentity } from '../../src/core/gateway/identity';
import { InFlightJournal } from '../../src/jobs/inFlight';
import { settleRecord } from '../../src/jobs/interrupted';
import { JobHistoryRecord } from '../../src/jobs/jobRecord';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { settleBy } from '../../src/jobs/settle';
import { DEMO_KEYS, gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';
import { fillUp, orSkip, TmpfsMounts } from './support/tmpfs';

const request = { model: 'aurora-1', prompt: 'a lighthouse on a full disk' };
const details = { request, model: 'aurora-1' };

describe('Writes that stand alone: a job whose journal writes fail for a while (full tmpfs)', function () {
  this.timeout(30_000);
  const mounts = new TmpfsMounts();
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(os.tmpdir(), 'gi-job-writes-'))));
  afterEach(() => {
    mounts.unmountAll();
    rmSync(root, { recursive: true, force: true });
  });

  /** The journal on a 1 MB tmpfs, its store opened (read) while the disk had room; `told`: what the user was told. */
  async function journalOnTmpfs(): Promise<{ dir: string; file: string; history: HistoryStore; told: string[] }> {
    const dir = await mounts.mount(path.join(root, 'journal'), 1);
    const file = path.join(dir, 'results.jsonl');
    const told: string[] = [];
    const history = new HistoryStore(file, { load: () => resultsCode, onUnwritable: (message) => told.push(message) });
    await history.index();
    return { dir, file, history, told };
  }

  const freshRead = (file: string) => new HistoryStore(file, { load: () => resultsCode }).index();

  it(
    'the first two writes fail: the next one lands, finish() is written with its cost, and the user is told once',
    orSkip(async () => {
      const { dir, file, history, told } = await journalOnTmpfs();
      const record = new JobHistoryRecord(history, details);
      await fillUp(dir);
      await assert.rejects(record.saved('/w/a-1.png'), /ENOSPC/);
      await assert.rejects(record.saved('/w/a-2.png'), /ENOSPC/);
      await rm(path.join(dir, 'filler'));
      await record.saved('/w/a-3.png');
      assert.deepEqual(
        (await freshRead(file)).find(record.entryId!)?.files,
        ['/w/a-1.png', '/w/a-2.png', '/w/a-3.png'],
        'the write after the failed ones landed, whole',
      );
      await record.finish({ files: ['/w/a-1.png', '/w/a-2.png', '/w/a-3.png'], model: 'aurora-1', usage: { cost_rub: 42 } });
      const index = await freshRead(file);
      assert.equal(index.size, 1, 'one entry for the job');
      assert.equal(index.find(record.entryId!)?.costRub, 42);
      assert.equal(told.length, 1, `told once: ${JSON.stringify(told)}`);
      assert.match(
        told[0]!,
        /^The results of this workspace could not be written \(ENOSPC: no space left on device.*\)\. Your images are saved; their results will be written when possible\.$/,
      );
      await history.close();
    }),
  );

  describe('a job whose last write fails too: written at the next start from its in-flight record', () => {
    const gw = gatewaySuite({ dir: 'gwi-job-writes-', models: true });

    /** Runs one job with every journal write refused (a full disk), as the window does; then the next start settles what it left. */
    async function runOnFullDisk(name: string, fault?: 'stray-character') {
      const { dir, file, history, told } = await journalOnTmpfs();
      const inFlight = new InFlightJournal(path.join(gw.dir, `in-flight-${name}`));
      const rig = newService(gw.client, gw.models, path.join(gw.dir, `recovery-${name}`), { inFlight });
      const record = new JobHistoryRecord(history, { request: { model: 'aurora-1', prompt: name }, model: 'aurora-1' });
      const warnings: string[] = [];
      const warn = (message: string) => warnings.push(message);
      await fillUp(dir);
      if (fault) gw.emu.state.armFault({ fault, imageIndex: 0 });
      let error: unknown;
      try {
        await rig.service.run(
          { request: { model: 'aurora-1', prompt: name, size: SMALL }, output: { directory: path.join(gw.dir, `out-${name}`), pattern: '{slug}-{index}' } },
          {
            onEvent: (event) => void (event.type === 'image-saved' && record.saved(event.file).catch(() => undefined)),
            settle: settleBy((done) => record.finish(done), warn, 'The result'),
            settleFailure: settleBy((failure) => record.failed(failure), warn, 'The paid request'),
          },
        );
      } catch (failure) {
        error = failure;
      }
      assert.equal(!!error, !!fault, `the job ${fault ? 'failed after it was paid' : 'succeeded'}: ${String(error)}`);
      assert.equal((await freshRead(file)).size, 0, 'nothing could be written');
      assert.match(warnings.join(' '), /not recorded in the results journal \(its in-flight record stays for the next start\)/);
      assert.equal(told.length, 1, `told once: ${JSON.stringify(told)}`);
      await history.close();
      // The next start: the disk has room again, and the record the job left is settled.
      await rm(path.join(dir, 'filler'));
      const [left, ...more] = await inFlight.list();
      assert.ok(left && !more.length, 'the in-flight record stayed');
      const next = new HistoryStore(file, { load: () => resultsCode });
      const settled = await settleRecord(next, left, path.join(gw.dir, `fallback-${name}`));
      await inFlight.remove(left.id);
      assert.equal(settled.kind, 'finished', 'an ended job: only its entry is written');
      return { entry: (await freshRead(file)).findByJob(left.id), paid: paidRequests(gw.emu).at(-1)! };
    }

    it(
      'a result: written with its cost, request id and key at the next start',
      orSkip(async () => {
        const { entry, paid } = await runOnFullDisk('result');
        assert.ok(entry, 'the result is in the journal');
        assert.equal(entry.costRub, paid.chargedRub);
        assert.ok(paid.chargedRub > 0);
        assert.equal(entry.requestId, paid.id);
        assert.equal(entry.identity, accountIdentity(gw.emu.url, DEMO_KEYS.unlimited));
        assert.equal(entry.files.length, 1);
      }),
    );

    it(
      'a paid failure (its answer could not be read): written as paid, with its cost and key, at the next start',
      orSkip(async () => {
        const { entry, paid } = await runOnFullDisk('failure', 'stray-character');
        assert.ok(entry, 'the paid failure is in the journal');
        assert.match(entry.failed ?? '', /not valid base64/);
        assert.equal(entry.costRub, paid.chargedRub);
        assert.equal(entry.identity, accountIdentity(gw.emu.url, DEMO_KEYS.unlimited));
        assert.equal(entry.interrupted, undefined, 'recorded as the failure it was, not as a closed window');
      }),
    );
  });
});
