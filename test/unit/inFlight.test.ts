// The in-flight records of paid requests (src/jobs/inFlight.ts) through the real job service, and
// the start-up's settling of what a dead process left (src/jobs/interrupted.ts) on hand-made staging.
import * as assert from 'node:assert/strict';
import { link, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { NotRecordedError } from '../../src/core/errors';
import { listRecoverable } from '../../src/core/recoveryFolder';
import { HistoryStore } from '../../src/jobs/history';
import { FINISHED_KEPT_MS, InFlightJournal, type InFlightRecord } from '../../src/jobs/inFlight';
import { holdInterruptedLines } from '../../src/jobs/heldLines';
import { recordInterrupted, settleInterrupted, settleRecord } from '../../src/jobs/interrupted';
import { paintPng } from '../../tools/emulator/png';
import { gatewaySuite, newService, paidRequests } from './support/gateway';

const DEAD_PID = 2 ** 22 + 12345; // above Linux's pid_max: never a live process

describe('in-flight records of paid requests', function () {
  const suite = gatewaySuite({ dir: 'gwi-inflight-', models: true });

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
      { batch: { file: '/p.txt', line: 3, key: 'k' }, settle: async () => void seen.push(await journal.list()) },
    );
    assert.equal(result.files.length, 1);
    const [atSend, , atSettle] = seen;
    assert.equal(atSend?.[0]?.request.prompt, 'recorded', 'the record was there when the request went out');
    assert.deepEqual(atSend[0].batch, { file: '/p.txt', line: 3, key: 'k' });
    assert.equal(atSettle?.[0]?.requestId, paidRequests(suite.emu)[0]!.id, 'the request id is noted from the answer headers');
    assert.deepEqual(atSettle[0].placed, result.files, 'placed files are noted');
    const [finished] = await journal.list();
    assert.ok(finished?.finishedAt, 'kept a while, marked finished, for a history entry lost with a crash');
    assert.deepEqual([finished.placed, finished.costRub], [result.files, result.usage?.cost_rub]);
    await journal.prune(Date.now() + FINISHED_KEPT_MS + 1);
    assert.deepEqual(await journal.list(), [], 'pruned once FINISHED_KEPT_MS passed');
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

  it('a finished job whose history entry was lost with the window (state not yet on disk) gets it back at the next start, once', async () => {
    const store = new Map<string, unknown>();
    const history = new HistoryStore({ get: <T>(k: string) => store.get(k) as T, update: async (k, v) => void store.set(k, v) });
    const record: InFlightRecord = {
      id: 'done1',
      fingerprint: 'f',
      request: { model: 'aurora-1', prompt: 'finished' },
      outputDirectory: '/o',
      namePattern: '{index}',
      stagingDir: '/s',
      reservation: 4,
      batch: { file: '/p.txt', line: 19, key: 'k19' },
      startedAt: new Date().toISOString(),
      pid: DEAD_PID,
      placed: ['/o/finished-1.png'],
      finishedAt: new Date().toISOString(),
      costRub: 3.5,
    };
    const first = await settleRecord(history, record);
    const again = await settleRecord(history, record);
    assert.equal(first.kind, 'finished');
    assert.ok(first.kind === 'finished' && first.restored);
    assert.ok(again.kind === 'finished' && !again.restored);
    assert.deepEqual(
      history.list().map((e) => [e.batch?.line, e.files, e.costRub, e.interrupted]),
      [[19, ['/o/finished-1.png'], 3.5, undefined]],
      'a re-run of the prompt file skips line 19',
    );
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
      fingerprint: 'f',
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
    const store = new Map<string, unknown>();
    const history = new HistoryStore({ get: <T>(k: string) => store.get(k) as T, update: async (k, v) => void store.set(k, v) });
    const entry = await recordInterrupted(history, job);
    await recordInterrupted(history, again);
    assert.equal(history.list().length, 1);
    assert.deepEqual([entry.interrupted, entry.requestId, entry.outcomeUnknown, entry.files], [true, 'req_42', undefined, [path.join(out, 'placed-1.png')]]);
    // A re-run of the prompt file holds line 7 (charged; its images wait for recovery).
    const line = { line: 7, key: 'k7', request: { model: 'aurora-1', prompt: 'settle me' } };
    const { send, held } = holdInterruptedLines('/p.txt', [line], history.list());
    assert.deepEqual([send.length, held.length], [0, 1]);
  });
});
