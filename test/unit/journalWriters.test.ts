// One results journal, several writers: windows without a folder share one file, so may two windows
// of a workspace, and a reloaded window writes beside its old extension host. Real processes append,
// update and compact in a loop; a fresh reader then finds every result each of them wrote, in its last state.
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { runWriter, type WriterReport } from './support/journalWriter';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gi-writers-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const store = (file: string) => new HistoryStore(file, { load: () => resultsCode });
const request = { model: 'sketch-mini', prompt: 'a lighthouse' };

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
        runWriter({ file, name, results: 5, updates: 1, agentJournal: agents, waitForGo: true }, (go) => {
          gos.push(go);
          if (gos.length === names.length) for (const start of gos) start();
        }),
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
    assert.deepEqual((await fs.readdir(dir)).sort(), ['results.jsonl'], 'no lock or temporary file is left');
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
