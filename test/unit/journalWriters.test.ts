// One results journal, several writers: windows without a folder share one file, so may two windows
// of a workspace, and a reloaded window writes beside its old extension host. Real processes append,
// update and compact in a loop; a fresh reader then finds every result each of them wrote, in its last state.
// And real pauses: a writer stopped (SIGSTOP) inside a compaction or an append past the lease's stale
// time, while another takes the lock over and writes, loses no one's result when it goes on (SIGCONT).
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { holderFileOf } from '../../src/core/files/lease';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { journalLine } from '../../src/jobs/results/resultsIndex';
import { type PausedWriter, runWriter, type WriterReport } from './support/journalWriter';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gi-writers-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const store = (file: string) => new HistoryStore(file, { load: () => resultsCode });
const request = { model: 'sketch-mini', prompt: 'a lighthouse' };

/** The lease's stale time in the pause tests: short, and above proper-lockfile's floor of 2 s. */
const STALE_MS = 2000;

/**
 * A journal another window wrote long enough to be compacted at the next change (1,010 lines, 10
 * results in their last state): id → last cost.
 */
async function seedJournal(file: string): Promise<Record<string, number>> {
  const lines: string[] = [];
  const last: Record<string, number> = {};
  for (let r = 0; r < 10; r++) {
    const entry = {
      id: `seeded-${r}`,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, r)).toISOString(),
      request,
      model: 'sketch-mini',
      files: [`/w/seeded-${r}.png`],
    };
    for (let state = 0; state <= 100; state++) lines.push(journalLine({ ...entry, costRub: state }));
    last[entry.id] = 100;
  }
  await fs.writeFile(file, `${lines.join('\n')}\n`);
  return last;
}

/** Every result each writer (and the seed) wrote, in its last state, once: what a fresh reader must find. */
async function assertAllThere(file: string, seeded: Record<string, number>, reports: WriterReport[]): Promise<void> {
  const seed: WriterReport = { name: 'seed', last: seeded, tornReports: 0, warnings: [] };
  assert.deepEqual(await lost(file, [seed, ...reports]), [], 'results lost, or found in an older state');
  const index = await store(file).index();
  const written = [seed, ...reports].reduce((n, r) => n + Object.keys(r.last).length, 0);
  assert.equal(index.size, written, 'each result once');
  assert.equal(index.galleryCount, written, "each result's one file once in the gallery");
}

/**
 * Runs `paused` to its pause point, stops it there (SIGSTOP), runs `others` to their end (they wait
 * for its lease to go stale, take it over and write), then resumes it (SIGCONT) and waits for it.
 */
async function pausedWhileOthersWrite(paused: Parameters<typeof runWriter>[0], others: Parameters<typeof runWriter>[0][]): Promise<WriterReport[]> {
  let reportsOfOthers: Promise<WriterReport[]> | undefined;
  let stopped: PausedWriter | undefined;
  const ofPaused = runWriter(paused, {
    paused: (writer) => {
      writer.stop();
      stopped = writer;
      reportsOfOthers = Promise.all(others.map((task) => runWriter(task)));
      void reportsOfOthers.finally(() => writer.resume());
    },
  });
  const first = await ofPaused.catch((error: unknown) => {
    stopped?.resume();
    throw error;
  });
  assert.ok(reportsOfOthers, `${paused.name} reached ${paused.pauseAt}`);
  return [first, ...(await reportsOfOthers)];
}

/** The files in the journal's folder, but the lease's token file (core/files/lease.ts keeps it beside its lock by design). */
const leftBeside = async (file: string) =>
  (await fs.readdir(path.dirname(file))).filter((name) => path.join(path.dirname(file), name) !== holderFileOf(`${file}.lock`)).sort();

/** Results a writer wrote that a fresh reader lacks, or holds in an older state. */
async function lost(file: string, reports: WriterReport[]): Promise<string[]> {
  const index = await store(file).index();
  return reports.flatMap((r) => Object.entries(r.last).flatMap(([id, cost]) => (index.find(id)?.costRub === cost ? [] : [`${r.name}:${id}`])));
}

describe('Results journal with several writers', function () {
  this.timeout(120_000);

  it("two stores on one file: B's compaction keeps A's results, and A's next line lands in the new file", async () => {
    const file = path.join(dir, 'results-without-folder.jsonl');
    const a = store(file);
    const b = store(file);
    const ofA: string[] = [];
    for (let i = 0; i < 5; i++) ofA.push((await a.add({ request, model: 'sketch-mini', files: [`/w/a-${i}.png`] })).id);
    const ofB = await b.add({ request, model: 'sketch-mini', files: ['/w/b.png'] });
    // B updates its result until its line count passes the compaction rule (1,000 lines, more than twice the results).
    for (let i = 0; i < 1000; i++) await b.update(ofB.id, { costRub: i });
    assert.ok((await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length < 1000, 'B compacted the journal');
    ofA.push((await a.add({ request, model: 'sketch-mini', files: ['/w/a-5.png'] })).id);
    await Promise.all([a.close(), b.close()]);
    const restarted = await store(file).index();
    assert.deepEqual(
      ofA.filter((id) => !restarted.find(id)),
      [],
      "every one of A's 6 results is there after a restart",
    );
    assert.equal(restarted.find(ofB.id)?.costRub, 999, "B's result in its last state");
    assert.equal(restarted.size, 7);
  });

  it("windows opened at once beside an agent's journal: each of the agent's results is taken into the window's journal once", async () => {
    // The MCP server started by another agent writes its own journal (agentJournal.ts); every window of
    // the workspace takes its finished results in. Two at once must not take one twice.
    const agents = path.join(dir, 'agents', 'workspace.jsonl');
    const agent = store(agents);
    const made: string[] = [];
    for (let i = 0; i < 20; i++)
      made.push((await agent.add({ request, model: 'sketch-mini', files: [`/w/agent-${i}.png`], costRub: 1, jobId: `job-${i}` })).id);
    await agent.close();
    const file = path.join(dir, 'results.jsonl');
    // Four windows, each started and ready before any reads: their first reads (and takings) come at once.
    const gos: (() => void)[] = [];
    const names = ['A', 'B', 'C', 'D'];
    const reports = await Promise.all(
      names.map((name) =>
        runWriter(
          { file, name, results: 5, updates: 1, agentJournal: agents, waitForGo: true },
          {
            ready: (go) => {
              gos.push(go);
              if (gos.length === names.length) for (const start of gos) start();
            },
          },
        ),
      ),
    );
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean);
    assert.deepEqual(
      made.filter((id) => lines.filter((line) => line.includes(id)).length !== 1),
      [],
      "agent results taken twice, or not at all, into the window's journal",
    );
    const index = await store(file).index();
    assert.equal(index.size, 20 + 5 * names.length);
    assert.deepEqual(await lost(file, reports), []);
  });

  it('a store sees what another one wrote (the gallery is told), and a change of a result another process made keeps its files', async () => {
    const file = path.join(dir, 'results.jsonl');
    const a = store(file);
    const b = store(file);
    await a.index();
    const splices: number[] = [];
    a.onDidChange((change) => splices.push(change.galleryTotal));
    const made = await b.add({ request, model: 'sketch-mini', files: ['/w/one.png', '/w/two.png'] });
    assert.deepEqual((await a.index()).find(made.id)?.files, ['/w/one.png', '/w/two.png']);
    assert.deepEqual(splices, [2]);
    await a.removeFile('/w/one.png');
    await b.update(made.id, { costRub: 3 });
    const fresh = (await store(file).index()).find(made.id);
    assert.deepEqual([fresh?.files, fresh?.costRub], [['/w/two.png'], 3], "B's update started from A's change, not from its own older copy");
  });

  it("a window's journal follows another process's change as it happens: its gallery is told without reading", async () => {
    const file = path.join(dir, 'results.jsonl');
    const window = new HistoryStore(file, { load: () => resultsCode, watch: true });
    await window.index();
    const told = new Promise<number>((resolve) => window.onDidChange((change) => resolve(change.galleryTotal)));
    const report = await runWriter({ file, name: 'other-window', results: 1, updates: 0 });
    assert.equal(await told, 1);
    assert.deepEqual(await lost(file, [report]), []);
    await window.close();
  });

  it('three processes append, update and compact in a loop at once: 0 results lost, 0 lines cut', async () => {
    const file = path.join(dir, 'results.jsonl');
    const started = performance.now();
    const reports = await Promise.all(
      ['window-a', 'window-b', 'reloaded-c'].map((name, i) => runWriter({ file, name, results: 150, updates: 3, reopenEvery: i === 2 ? 25 : undefined })),
    );
    const written = reports.reduce((n, r) => n + Object.keys(r.last).length, 0);
    const missing = await lost(file, reports);
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length;
    console.log(
      `      3 writers, ${written} results, ${written * 4} lines written in ${((performance.now() - started) / 1000).toFixed(1)} s; journal now ${lines} lines; lost ${missing.length}; torn lines cut ${reports.reduce((n, r) => n + r.tornReports, 0)}`,
    );
    assert.equal(written, 450);
    assert.deepEqual(missing, []);
    assert.ok(lines < written * 4, `compactions ran (${lines} lines for ${written * 4} written)`);
    assert.deepEqual(
      reports.map((r) => r.tornReports),
      [0, 0, 0],
      "no writer's open or catch-up cut another's line",
    );
    assert.deepEqual(await leftBeside(file), ['results.jsonl'], 'no lock, compaction claim or temporary file is left');
  });

  it('a compaction stopped past the stale time before its last check, while another writer appends 12.50 ₽: it leaves the file as it is, 0 results lost', async () => {
    const file = path.join(dir, 'results.jsonl');
    const seeded = await seedJournal(file);
    const [a, b] = await pausedWhileOthersWrite({ file, name: 'A', results: 1, updates: 0, cost: 1, staleMs: STALE_MS, pauseAt: 'compaction-written' }, [
      { file, name: 'B', results: 1, updates: 0, cost: 12.5, staleMs: STALE_MS },
    ]);
    assert.ok(
      a!.warnings.some((w) => /lock was taken over/.test(w)),
      `A's lease was taken over while it was stopped: ${a!.warnings.join(' | ')}`,
    );
    await assertAllThere(file, seeded, [a!, b!]);
    assert.equal((await store(file).index()).find(Object.keys(b!.last)[0]!)?.costRub, 12.5);
  });

  it('a compaction stopped past the stale time between its last check and its rename, while another writer appends two results: their lines are copied into the new file, 0 results lost', async () => {
    const file = path.join(dir, 'results.jsonl');
    const seeded = await seedJournal(file);
    const [a, b] = await pausedWhileOthersWrite({ file, name: 'A', results: 1, updates: 0, cost: 1, staleMs: STALE_MS, pauseAt: 'compaction-checked' }, [
      { file, name: 'B', results: 2, updates: 0, cost: 12.5, staleMs: STALE_MS },
    ]);
    assert.ok(
      a!.warnings.some((w) => /lock was taken over/.test(w)),
      `A's lease was taken over while it was stopped: ${a!.warnings.join(' | ')}`,
    );
    await assertAllThere(file, seeded, [a!, b!]);
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length;
    assert.ok(lines < 100, `A's compaction was renamed into place (${lines} lines)`);
  });

  it('an append stopped past the stale time after it opened the file, while another writer compacts: its line is written again into the new file, 0 results lost', async () => {
    const file = path.join(dir, 'results.jsonl');
    const seeded = await seedJournal(file);
    const [b, a] = await pausedWhileOthersWrite({ file, name: 'B', results: 1, updates: 0, cost: 12.5, staleMs: STALE_MS, pauseAt: 'append-opened' }, [
      { file, name: 'A', results: 1, updates: 0, cost: 1, staleMs: STALE_MS },
    ]);
    await assertAllThere(file, seeded, [a!, b!]);
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length;
    assert.ok(lines < 100, `A compacted the journal while B was stopped (${lines} lines)`);
  });

  it('opening while another process appends never cuts its line', async () => {
    const file = path.join(dir, 'results.jsonl');
    const writing = runWriter({ file, name: 'flushing', results: 300, updates: 0 });
    let opens = 0;
    let torn = 0;
    let done = false;
    void writing.finally(() => (done = true));
    while (!done) {
      const reader = new HistoryStore(file, { load: () => resultsCode, onOpened: (r) => (torn += r.tornBytes) });
      await reader.index();
      opens++;
    }
    const report = await writing;
    assert.deepEqual(await lost(file, [report]), []);
    assert.equal(torn, 0, `${opens} openings cut nothing`);
    assert.ok(opens > 1);
  });
});
