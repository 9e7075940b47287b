// The in-flight records of paid requests (src/jobs/inFlight.ts) through the real job service, and
// the start-up's settling of what a dead process left (src/jobs/interrupted.ts) on hand-made staging.
import * as assert from 'node:assert/strict';
import { link, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { NotRecordedError } from '../../src/core/gateway/errors';
import { listRecoverable } from '../../src/core/files/recoveryFolder';
import { HistoryStore } from '../../src/jobs/results/history';
import { InFlightJournal, type InFlightRecord } from '../../src/jobs/inFlight';
import { holdPaidLines } from '../../src/jobs/promptFiles/heldLines';
import { recordInterrupted, settleInterrupted, settleRecord } from '../../src/jobs/interrupted';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { paintPng } from '../../tools/emulator/png';
import { gatewaySuite, newService, paidRequests } from './support/gateway';

const DEAD_PID = 2 ** 22 + 12345; // above Linux's pid_max: never a live process

describe('in-flight records of paid requests', function () {
  const suite = gatewaySuite({ dir: 'gwi-inflight-', models: true });
  const opened: HistoryStore[] = [];
  afterEach(async () => void (await Promise.all(opened.splice(0).map((history) => history.close()))));

  /** The results journal of a workspace, on a file, as the extension opens it. */
  function journalOf(name: string): HistoryStore {
    const history = new HistoryStore(path.join(suite.dir, `${name}.jsonl`), { load: () => resultsCode });
    opened.push(history);
    return history;
  }

  it('is written before the request is sent, holds the request id once the answer arrived, and is gone when the job ends', async () => {
    const journal = new InFlightJournal(path.join(suite.dir, 'in-flight'));
    const seen: InFlightRecord[][] = [];
    const rig = newService(suite.client, suite.models, path.join(suite.dir, 'recovery'), {
      inFlight: journal,
      onEvent: (event) => {
        if (event.type === 'sent' || event.type === 'image-saved') void journal.list().then((records) => seen.push(records));
      },
    });
    const result = await rig.service.run(
      { request: { model: 'aurora-1', prompt: 'recorded', size: '64x64' }, output: { directory: path.join(suite.dir, 'out'), pattern: '{slug}-{index}' } },
      { settle: async () => void seen.push(await journal.list()) },
    );
    assert.equal(result.files.length, 1);
    const [atSend, , atSettle] = seen;
    assert.equal(atSend?.[0]?.request.prompt, 'recorded', 'the record was there when the request went out');
    assert.equal(atSettle?.[0]?.requestId, paidRequests(suite.emu)[0]!.id, 'the request id is noted from the answer headers');
    assert.deepEqual(atSettle[0].placed, result.files, 'placed files are noted');
    assert.deepEqual(
      [atSettle[0].finished?.model, atSettle[0].finished?.costRub],
      [result.model, result.usage?.cost_rub],
      'while the result is recorded, the record holds it (a crash then leaves it for the next start)',
    );
    assert.equal(atSettle[0].id, result.jobId);
    assert.deepEqual(await journal.list(), [], 'gone once the result is recorded');
    // A failed job's record goes at once.
    suite.emu.state.armFault({ fault: 'html-500' });
    await assert.rejects(
      rig.service.run({
        request: { model: 'aurora-1', prompt: 'fails', size: '64x64' },
        output: { directory: path.join(suite.dir, 'out'), pattern: '{slug}-{index}' },
      }),
    );
    assert.deepEqual(await journal.list(), []);
  });

  it('stays, marked finished, when the result could not be recorded (the next start records it); a prompt-file line is named in it', async () => {
    const journal = new InFlightJournal(path.join(suite.dir, 'in-flight-kept'));
    const rig = newService(suite.client, suite.models, path.join(suite.dir, 'recovery'), { inFlight: journal });
    const result = await rig.service.run(
      {
        request: { model: 'aurora-1', prompt: 'not recorded', size: '64x64' },
        output: { directory: path.join(suite.dir, 'out'), pattern: '{slug}-{index}' },
        batch: { file: '/p.txt', line: 3, key: 'k' },
      },
      { settle: () => Promise.reject(new Error('disk full')) },
    );
    assert.equal(result.files.length, 1, 'the job itself succeeded');
    const [kept, ...more] = await journal.list();
    assert.equal(more.length, 0);
    assert.deepEqual([kept?.batch, kept?.placed, kept?.finished?.costRub], [{ file: '/p.txt', line: 3, key: 'k' }, result.files, result.usage?.cost_rub]);
  });

  it('refuses to send when the record cannot be written (NotRecordedError): nothing sent, nothing charged', async () => {
    const blocked = path.join(suite.dir, 'a-file');
    await writeFile(blocked, 'not a folder');
    const rig = newService(suite.client, suite.models, path.join(suite.dir, 'recovery'), { inFlight: new InFlightJournal(path.join(blocked, 'in-flight')) });
    await assert.rejects(
      rig.service.run({ request: { model: 'aurora-1', prompt: 'not recorded', size: '64x64' }, output: { directory: suite.dir, pattern: '{index}' } }),
      (error) => error instanceof NotRecordedError && /Not sent: the record of the request could not be written/.test(error.message),
    );
    assert.equal(paidRequests(suite.emu).length, 0);
  });

  it('leftBehind: records of dead processes only (not this one, not a live one); a record cut short is removed', async () => {
    const dir = path.join(suite.dir, 'records');
    const journal = new InFlightJournal(dir);
    const start = { request: { model: 'm', prompt: 'p' }, outputDirectory: '/o', namePattern: '{index}', stagingDir: '/s', reservation: 1 };
    await journal.begin({ ...start, id: 'mine' });
    await new InFlightJournal(dir, DEAD_PID).begin({ ...start, id: 'dead' });
    await new InFlightJournal(dir, process.ppid).begin({ ...start, id: 'alive' });
    await writeFile(path.join(dir, 'torn.json'), '{"id":"torn","requ');
    assert.deepEqual(
      (await journal.leftBehind()).map((r) => r.id),
      ['dead'],
    );
    assert.ok(!(await readdir(dir)).includes('torn.json'));
  });

  it('a job that died after its result was noted but before it was in the results journal gets its entry at the next start, once', async () => {
    const history = journalOf('finished');
    const record: InFlightRecord = {
      id: 'done1',
      request: { model: 'aurora-1', prompt: 'finished' },
      outputDirectory: '/o',
      namePattern: '{index}',
      stagingDir: '/s',
      reservation: 4,
      batch: { file: '/p.txt', line: 19, key: 'k19' },
      startedAt: new Date().toISOString(),
      pid: DEAD_PID,
      placed: ['/o/finished-1.png'],
      finished: { at: new Date().toISOString(), model: 'aurora-1', costRub: 3.5 },
    };
    const first = await settleRecord(history, record);
    const again = await settleRecord(history, record);
    assert.equal(first.kind, 'finished');
    assert.ok(first.kind === 'finished' && first.restored);
    assert.ok(again.kind === 'finished' && !again.restored);
    await history.reopen();
    const index = await history.index();
    assert.deepEqual(
      index.findBatch({ file: '/p.txt', line: 19, key: 'k19' }).map((e) => [e.files, e.costRub, e.interrupted, e.jobId]),
      [[['/o/finished-1.png'], 3.5, undefined, 'done1']],
      'one entry, found by its line: a re-run of the prompt file skips line 19',
    );
    assert.equal(index.size, 1);
  });

  it('a job whose result is in the results journal (its id written with the final state) is not recorded again', async () => {
    const history = journalOf('recorded');
    await history.add({ request: { model: 'aurora-1', prompt: 'recorded' }, model: 'aurora-1', files: ['/o/recorded-1.png'], jobId: 'done2' });
    const record: InFlightRecord = {
      id: 'done2',
      request: { model: 'aurora-1', prompt: 'recorded' },
      outputDirectory: '/o',
      namePattern: '{index}',
      stagingDir: '/s',
      reservation: 4,
      startedAt: new Date().toISOString(),
      pid: DEAD_PID,
      placed: ['/o/recorded-1.png'],
      finished: { at: new Date().toISOString(), model: 'aurora-1', costRub: 3.5 },
    };
    const settled = await settleRecord(history, record);
    assert.ok(settled.kind === 'finished' && !settled.restored);
    assert.equal((await history.index()).size, 1);
  });

  it('settles what a dead job staged: linked images stay, a whole .img and a .part go to a manifest Recover lists at once, the history says interrupted', async () => {
    const staging = path.join(suite.dir, 'staging');
    const out = path.join(suite.dir, 'settle-out');
    await mkdir(staging, { recursive: true });
    await mkdir(out, { recursive: true });
    const png = (i: number) => paintPng({ width: 32, height: 32, transparent: false, identity: `settle ${i}` });
    const id = 'job1';
    await writeFile(path.join(staging, `${id}-0.img`), png(0));
    await link(path.join(staging, `${id}-0.img`), path.join(out, 'placed-1.png'));
    await writeFile(path.join(staging, `${id}-1.img`), png(1));
    await writeFile(path.join(staging, `${id}-2.img`), png(2).subarray(0, 100)); // renamed, but its tail never reached the disk
    await writeFile(path.join(staging, `${id}-3.part`), png(3).subarray(0, 60));
    await writeFile(path.join(out, `.${id}-1.img.copying`), png(1).subarray(0, 10));
    const record: InFlightRecord = {
      id,
      request: { model: 'aurora-1', prompt: 'settle me', n: 4 },
      outputDirectory: out,
      namePattern: '{slug}-{index}',
      stagingDir: staging,
      reservation: 16,
      batch: { file: '/p.txt', line: 7, key: 'k7' },
      startedAt: new Date().toISOString(),
      pid: DEAD_PID,
      answeredAt: new Date().toISOString(),
      requestId: 'req_42',
    };
    const job = await settleInterrupted(record, path.join(suite.dir, 'fallback'));
    assert.equal(job.charged, true);
    assert.deepEqual(job.placed, [path.join(out, 'placed-1.png')]);
    assert.deepEqual(job.kept && { images: job.kept.images, incomplete: job.kept.incomplete }, { images: 1, incomplete: 2 });
    assert.deepEqual(await readdir(out), ['placed-1.png'], 'the temporary copy is gone; nothing partial under a final name');
    assert.ok(!(await readdir(staging)).includes(`${id}-0.img`), 'the staged name of a placed image goes');
    const [waiting] = await listRecoverable(staging);
    assert.equal(waiting?.requestId, 'req_42');
    assert.deepEqual(
      waiting.files.map((f) => [f.suggestedName, !!f.incomplete]),
      [
        ['settle-me-2.png', false],
        ['settle-me-3-incomplete.png', false],
        ['settle-me-4-incomplete.png', true],
      ],
    );
    // Twice (a crash while settling) gives the same manifest, and one history entry.
    const again = await settleInterrupted(record, path.join(suite.dir, 'fallback'));
    assert.equal(JSON.parse(await readFile(again.kept!.manifestPath, 'utf8')).files.length, 3);
    const history = journalOf('settled');
    const entry = await recordInterrupted(history, job);
    await recordInterrupted(history, again);
    assert.equal((await history.index()).size, 1);
    assert.deepEqual([entry.interrupted, entry.requestId, entry.outcomeUnknown, entry.files], [true, 'req_42', undefined, [path.join(out, 'placed-1.png')]]);
    assert.deepEqual(entry.recovered?.files, [path.join(staging, `${id}-1.img`)], 'its whole image in the recovery folder: a re-run skips the line as done');
  });

  it('a re-run of a prompt file holds a line whose newest result is interrupted, and a line in flight now; the others go', async () => {
    const history = journalOf('held');
    const request = { model: 'aurora-1', prompt: 'line' };
    const tag = (line: number) => ({ file: '/p.txt', line, key: `k${line}` });
    await history.add({ request, model: 'aurora-1', files: [], batch: tag(1), interrupted: true, outcomeUnknown: true });
    // Line 2 was interrupted once and then done: its newest result counts.
    await history.add({ request, model: 'aurora-1', files: [], batch: tag(2), interrupted: true, outcomeUnknown: true });
    await history.add({ request, model: 'aurora-1', files: [], batch: tag(2) });
    const lines = [1, 2, 3, 4].map((n) => ({ line: n, key: `k${n}`, request }));
    const { send, held } = holdPaidLines('/p.txt', lines, await history.index(), [tag(3)]);
    assert.deepEqual(
      send.map((l) => l.line),
      [2, 4],
    );
    assert.deepEqual(
      held.map((h) => [h.line.line, h.entry?.outcomeUnknown]),
      [
        [1, true],
        [3, undefined],
      ],
    );
  });
});
