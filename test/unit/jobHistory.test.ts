// The results journal: one entry per job, updated as each image is saved; the index's lookups;
// compaction; a torn last line; the one-time migration of the old workspace-state array.
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { holderFileOf } from '../../src/core/files/lease';
import { spendWindowBounds } from '../../src/core/money/spendChart';
import { journalLine, type ResultsIndex } from '../../src/jobs/results/resultsIndex';
import { HistoryStore, type HistoryEntry, type LegacyHistory, type ResultsOpenReport } from '../../src/jobs/results/history';
import { JobHistoryRecord } from '../../src/jobs/jobRecord';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { GalleryList } from '../../src/studio/gallery/galleryList';

const request = { model: 'aurora-1', prompt: 'a fox' };
const details = { request, model: 'aurora-1' };

let dir: string;
const opened: HistoryStore[] = [];
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gi-journal-'))));
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** A store on `file`, closed after the test. */
function store(file: string, legacy?: LegacyHistory, onOpened?: (report: ResultsOpenReport) => void): HistoryStore {
  const history = new HistoryStore(file, { load: () => resultsCode, legacy, onOpened });
  opened.push(history);
  return history;
}

/** Every result of the index, oldest first, whole. */
const everything = (index: ResultsIndex) => [...index.lines()].map((line) => index.find((JSON.parse(line.split('\t')[0]!) as { put: { id: string } }).put.id)!);
const thisMonth = (index: ResultsIndex) => index.createdBetween(spendWindowBounds(new Date()).from, spendWindowBounds(new Date()).to);

const journalFile = () => path.join(dir, 'results.jsonl');
const lineCount = async () => (await fs.readFile(journalFile(), 'utf8')).split('\n').filter(Boolean).length;

function entry(id: string, files: string[], extra: Partial<HistoryEntry> = {}): HistoryEntry {
  return { id, createdAt: '2026-01-02T10:00:00.000Z', request, model: 'aurora-1', files, ...extra };
}

/** The old workspace-state array (newest first), cleared through an asynchronous update as a Memento does. */
function legacyState(entries: HistoryEntry[] | undefined): LegacyHistory & { value: unknown } {
  const state = {
    value: entries as unknown,
    read: () => state.value,
    clear: () => new Promise<void>((resolve) => setTimeout(() => ((state.value = undefined), resolve()), 5)),
  };
  return state;
}

describe('JobHistoryRecord', () => {
  it('adds the entry with the first saved image and appends the next ones, then the cost', async () => {
    const history = store(journalFile());
    let changes = 0;
    history.onDidChange(() => changes++);
    const record = new JobHistoryRecord(history, details);
    const first = record.saved('/w/a-1.png');
    void record.saved('/w/a-2.png');
    await first;
    assert.equal((await history.index()).size, 1, 'the first image shows before the job ends');
    await record.finish({ files: ['/w/a-1.png', '/w/a-2.png', '/w/a-3.png'], model: 'aurora-1', usage: { cost_rub: 12.5 } });
    const index = await history.index();
    assert.equal(index.size, 1, 'one entry per job');
    const [only] = everything(index);
    assert.deepEqual(only!.files, ['/w/a-1.png', '/w/a-2.png', '/w/a-3.png']);
    assert.equal(only!.costRub, 12.5);
    // The first write ran with both files known (each write writes the state as it is then): the second had nothing new to write.
    assert.equal(changes, 2);
    await history.close();
    const again = store(journalFile());
    assert.deepEqual(everything(await again.index()), [only], 'the journal holds the last state after a restart');
  });

  it("a region edit's finish step records again: the composite's files and the mask kept beside it, one entry", async () => {
    const history = store(journalFile());
    const started = { original: '/w/photo.png', mask: '/storage/painted-masks/1.png', feather: 8, box: { x: 1, y: 2, width: 3, height: 4 } };
    const region = { ...started, crop: { x: 0, y: 0, width: 8, height: 8, ratio: '1:1' }, description: 'region 3×4 of 16×16, sent as 1:1' };
    const record = new JobHistoryRecord(history, { ...details, region });
    await record.finish({ files: ['/w/photo.region-1.jpg'], model: 'aurora-1', usage: { cost_rub: 4 } });
    const finished = { ...region, mask: '/w/photo.region-1.mask.png' };
    await record.finish({ files: ['/w/photo.region-1.png'], model: 'aurora-1', usage: { cost_rub: 4 }, region: finished });
    const all = everything(await history.index());
    assert.equal(all.length, 1, 'one entry per job');
    assert.deepEqual(all[0]!.files, ['/w/photo.region-1.png']);
    assert.deepEqual(all[0]!.region, finished);
    assert.equal(all[0]!.costRub, 4);
  });

  it('a job that failed after saving an image keeps that image in the history', async () => {
    const history = store(journalFile());
    await new JobHistoryRecord(history, details).saved('/w/b-1.png');
    assert.deepEqual(
      everything(await history.index()).map((e) => e.files),
      [['/w/b-1.png']],
    );
  });

  it('nothing saved and nothing kept for recovery: no entry', async () => {
    const history = store(journalFile());
    await new JobHistoryRecord(history, details).finish({ files: [], model: 'aurora-1' });
    assert.equal((await history.index()).size, 0);
  });

  it('a paid job whose images all went to the recovery folder is recorded with where they are', async () => {
    const history = store(journalFile());
    const batch = { file: '/w/p.txt', line: 3, key: 'k' };
    await new JobHistoryRecord(history, { ...details, batch }).finish({
      files: [],
      model: 'aurora-1',
      usage: { cost_rub: 1 },
      recovered: { manifestPath: '/r/job.json', files: ['/r/job-0.png'] },
    });
    const [found] = (await history.index()).findBatch(batch);
    assert.deepEqual(found!.recovered, { manifestPath: '/r/job.json', files: ['/r/job-0.png'] });
    assert.deepEqual(found!.files, []);
    assert.equal(found!.costRub, 1);
  });

  it('never stores the reference images sent as data URLs', async () => {
    const history = store(journalFile());
    await new JobHistoryRecord(history, {
      ...details,
      request: { ...request, input_references: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
    }).saved('/w/c.png');
    assert.doesNotMatch(await fs.readFile(journalFile(), 'utf8'), /data:image/);
  });
});

describe('Results journal', () => {
  it('finds results by id, file, prompt-file line, comparison run and day', async () => {
    const history = store(journalFile());
    const batch = { file: '/w/p.txt', line: 2, key: 'k2' };
    const a = await history.add({ ...details, files: ['/w/a.png'], batch });
    const b = await history.add({ ...details, files: ['/w/b-1.png', '/w/b-2.png'], comparison: 'run-1', costRub: 4 });
    const c = await history.add({ ...details, files: ['/w/c.png'], comparison: 'run-1' });
    const index = await history.index();
    assert.deepEqual(index.find(b.id), b);
    assert.deepEqual(index.findByFile('/w/b-2.png'), b);
    const { request: _request, ...summary } = a;
    assert.deepEqual(index.findBatch(batch), [summary], 'the summary: what the resume needs, without reading the request');
    assert.deepEqual(index.findBatch({ ...batch, key: 'edited line' }), []);
    assert.deepEqual(
      index.comparison('run-1').map((e) => e.id),
      [b.id, c.id],
    );
    assert.equal(thisMonth(index).length, 3);
    assert.equal(index.createdBetween(new Date(2001, 0, 1), new Date(2001, 0, 2)).length, 0);
  });

  it('the gallery lists each file, newest result first, and a change reports only its splice', async () => {
    const history = store(journalFile());
    const splices: unknown[] = [];
    history.onDidChange((change) => splices.push(change.gallery));
    const older = await history.add({ ...details, files: ['/w/old.png'] });
    const newer = await history.add({ ...details, files: ['/w/new-1.png'] });
    await history.update(older.id, { files: ['/w/old.png', '/w/old-2.png'] });
    await history.update(newer.id, { costRub: 3 });
    const index = await history.index();
    assert.deepEqual(
      index.galleryPage(0, 10).map((s) => s.file),
      ['/w/new-1.png', '/w/old.png', '/w/old-2.png'],
    );
    const files = (list: unknown) =>
      (list as { start: number; deleteCount: number; items: { file: string }[] }[]).map((s) => [s.start, s.deleteCount, s.items.map((i) => i.file)]);
    assert.deepEqual(splices.map(files), [
      [[0, 0, ['/w/old.png']]],
      [[0, 0, ['/w/new-1.png']]],
      [[1, 1, ['/w/old.png', '/w/old-2.png']]],
      [[0, 1, ['/w/new-1.png']]],
    ]);
    assert.deepEqual(
      index.galleryPage(1, 1).map((s) => s.file),
      ['/w/old.png'],
    );

    // The page's copy follows the splices and ends equal to the host's list.
    const page = new GalleryList<string>();
    page.reset(0, 0, []);
    for (const list of splices) {
      const changes = (list as { start: number; deleteCount: number; items: { file: string }[] }[]).map((s) => ({ ...s, items: s.items.map((i) => i.file) }));
      assert.ok(page.apply(changes, page.total + changes.reduce((n, s) => n + s.items.length - s.deleteCount, 0)));
    }
    assert.deepEqual(
      [0, 1, 2].map((i) => page.at(i)),
      ['/w/new-1.png', '/w/old.png', '/w/old-2.png'],
    );
  });

  it('a file deleted from the gallery leaves the gallery and the lookup by file; its cost still counts', async () => {
    const history = store(journalFile());
    const result = await history.add({ ...details, files: ['/w/a.png', '/w/b.png'], costRub: 5 });
    await history.removeFile('/w/a.png');
    await history.removeFile('/w/b.png');
    const index = await history.index();
    assert.equal(index.findByFile('/w/a.png'), undefined);
    assert.equal(index.galleryCount, 0);
    assert.deepEqual(
      thisMonth(index).map((e) => [e.id, e.costRub]),
      [[result.id, 5]],
    );
    await history.close();
    const reopened = await store(journalFile()).index();
    assert.equal(reopened.galleryCount, 0, 'the deletion is in the journal');
  });

  it('compacts atomically once the lines are more than twice the results, keeping every result as it is', async function () {
    // 1,200 changes, each under the lease and synced: seconds, more on a loaded machine.
    this.timeout(60_000);
    const history = store(journalFile());
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await history.add({ ...details, files: [`/w/${i}.png`] })).id);
    // 3 more lines per result: 1,200 lines for 300 results; compaction runs when line 1,000 is past 2 × 300.
    for (let round = 0; round < 3; round++) for (const id of ids) await history.update(id, { costRub: round });
    const lines = await lineCount();
    assert.ok(lines < 1000, `the journal was compacted (${lines} lines)`);
    // The lease's token file stays beside its lock by design (core/files/lease.ts): no lock folder, claim or temporary file does.
    assert.deepEqual(
      (await fs.readdir(dir)).filter((name) => path.join(dir, name) !== holderFileOf(`${journalFile()}.lock`)),
      ['results.jsonl'],
      'no temporary file is left',
    );
    await history.close();
    const reopened = await store(journalFile()).index();
    assert.equal(reopened.size, 300);
    assert.deepEqual(
      everything(reopened).map((e) => e.id),
      ids,
      'the order is kept',
    );
    assert.ok(
      everything(reopened).every((e) => e.costRub === 2),
      'every result has its last state',
    );
  });

  it('a torn last line (a crash while appending) is skipped, reported and cut off; the next append is whole', async () => {
    const first = store(journalFile());
    await first.add({ ...details, files: ['/w/kept.png'] });
    await first.close();
    await fs.appendFile(journalFile(), '{"put":{"id":"torn","createdAt":"2026-');
    const reports: number[] = [];
    const history = store(journalFile(), undefined, (r) => reports.push(r.tornBytes));
    assert.equal((await history.index()).size, 1);
    assert.deepEqual(reports, [38]);
    await history.add({ ...details, files: ['/w/after.png'] });
    await history.close();
    const again = store(journalFile());
    assert.deepEqual(
      everything(await again.index()).map((e) => e.files[0]),
      ['/w/kept.png', '/w/after.png'],
    );
    assert.equal((await again.report()).tornBytes, 0);
  });

  it('a last line cut inside its details is torn too; a last line that lost only its newline is kept', async () => {
    const whole = journalLine(entry('whole', ['/w/whole.png']));
    const cut = journalLine(entry('cut', ['/w/cut.png']));
    await fs.writeFile(journalFile(), `${whole}\n${cut.slice(0, cut.indexOf('\t') + 12)}`);
    const history = store(journalFile());
    assert.deepEqual(
      everything(await history.index()).map((e) => e.id),
      ['whole'],
    );
    assert.equal((await history.report()).tornBytes, cut.indexOf('\t') + 12, 'the whole unfinished line is cut off');
    await history.close();
    await fs.writeFile(journalFile(), `${whole}\n${cut}`);
    const again = store(journalFile());
    assert.deepEqual(
      everything(await again.index()).map((e) => [e.id, e.request.prompt]),
      [
        ['whole', 'a fox'],
        ['cut', 'a fox'],
      ],
    );
    assert.equal((await again.report()).tornBytes, 0);
    assert.ok((await fs.readFile(journalFile(), 'utf8')).endsWith('\n'));
  });

  it('a bad line in the middle is skipped and counted; the others are read', async () => {
    const good = (id: string) => JSON.stringify({ put: entry(id, [`/w/${id}.png`]) });
    await fs.writeFile(journalFile(), `${good('a')}\nnot json\n${JSON.stringify({ put: { id: 'no shape' } })}\n${good('b')}\n`);
    const history = store(journalFile());
    assert.equal((await history.index()).size, 2);
    assert.equal((await history.report()).skippedLines, 2);
  });

  it('migrates the old workspace-state array once, losing nothing, and clears it only after the journal is written', async () => {
    const old = [
      entry('new', ['/w/new.png'], { costRub: 2, batch: { file: '/w/p.txt', line: 1, key: 'k' } }),
      entry('old', ['/w/old.png'], { references: ['/w/src.png'] }),
    ];
    const legacy = legacyState(structuredClone(old));
    const history = store(journalFile(), legacy);
    const index = await history.index();
    assert.equal(legacy.value, undefined, 'the old array is cleared');
    assert.deepEqual(
      index.galleryPage(0, 10).map((s) => s.entry),
      old,
      'every result, every field, in the same order',
    );
    assert.equal((await history.report()).migrated, 2);
    assert.deepEqual(
      index.findBatch({ file: '/w/p.txt', line: 1, key: 'k' }).map((e) => e.id),
      ['new'],
    );
    await history.close();
    const restarted = store(journalFile(), legacyState(undefined));
    assert.deepEqual(everything(await restarted.index()), [old[1], old[0]], 'the journal holds them, oldest first');
  });

  it('a migration interrupted before the old array was cleared runs again without duplicates', async () => {
    const old = [entry('b', ['/w/b.png']), entry('a', ['/w/a.png'])];
    const interrupted = legacyState(structuredClone(old));
    interrupted.clear = () => Promise.reject(new Error('the window closed'));
    assert.equal((await store(journalFile(), interrupted).index()).size, 2);
    assert.ok(interrupted.value, 'not cleared');
    const history = store(journalFile(), legacyState(structuredClone(old)));
    assert.deepEqual(
      everything(await history.index()).map((e) => e.id),
      ['a', 'b'],
    );
    assert.equal((await history.report()).migrated, 0);
  });

  it('reopen reads the file again and tells listeners to read the gallery again', async () => {
    const history = store(journalFile());
    await history.add({ ...details, files: ['/w/a.png'] });
    const changes: unknown[] = [];
    history.onDidChange((c) => changes.push(c.gallery));
    await fs.writeFile(journalFile(), '');
    assert.equal((await history.reopen()).entries, 0);
    assert.deepEqual(changes, ['reset']);
  });
});

describe('GalleryList (the page side)', () => {
  it('knows which items are missing and starts over when a change was missed', () => {
    const list = new GalleryList<number>();
    list.reset(10, 0, [0, 1, 2]);
    assert.deepEqual(list.missing(0, 10, 4), { start: 3, count: 4 });
    assert.ok(list.page(10, 5, [5, 6]));
    assert.deepEqual(list.missing(3, 10, 100), { start: 3, count: 2 });
    assert.equal(list.page(11, 0, []), false, 'a page of a longer list: out of step');
    assert.ok(list.apply([{ start: 0, deleteCount: 0, items: [-1] }], 11));
    assert.equal(list.at(0), -1);
    assert.equal(list.at(6), 5);
    assert.equal(list.apply([{ start: 0, deleteCount: 1, items: [] }], 11), false, 'lengths disagree');
  });
});
