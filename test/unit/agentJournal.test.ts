// The agents' journal under the home folder (~/.gateway-images/results): it holds prompts, so only
// its owner reads it (the file 0600, its folders 0700, the existing ones made so too, a rewrite keeps
// the mode), and it keeps only the newest results (agentJournalBound.ts): past its bound it is cut,
// newest kept, and the server and the windows that read it still see the newest.
import * as assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { replaceFileWith } from '../../src/core/files/replaceFile';
import { agentJournalFile, agentJournalFolder, isAgentJournal, secureAgentJournal } from '../../src/jobs/results/agentJournal';
import { boundJournal, newestResults } from '../../src/jobs/results/agentJournalBound';
import { HistoryStore } from '../../src/jobs/results/history';
import { SharedJournal } from '../../src/jobs/results/journalFile';
import type { HistoryEntry } from '../../src/jobs/results/resultTypes';
import { journalLine, ResultsIndex } from '../../src/jobs/results/resultsIndex';
import { removeDir, tempDir } from './support/gateway';
import { launch } from './support/mcp';

const posix = process.platform !== 'win32';
const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o777;
const journalCode = () => ({ SharedJournal, ResultsIndex, journalLine });

/** A finished result (it has its job's id: a window takes it), written at `i` minutes past 2026-11-20. */
function result(i: number, over: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    id: `r${i}`,
    createdAt: new Date(Date.UTC(2026, 10, 20, 0, i)).toISOString(),
    request: { model: 'aurora-1', prompt: `a private prompt number ${i}` },
    model: 'aurora-1',
    files: [`/w/r${i}.png`],
    costRub: 1,
    jobId: `job-${i}`,
    origin: { kind: 'mcp', client: 'agent' },
    ...over,
  };
}

async function writeJournal(file: string, entries: HistoryEntry[]): Promise<void> {
  await fs.writeFile(file, entries.map((e) => `${journalLine(e)}\n`).join(''));
}

/** The ids in the file, in order, one per line. */
async function idsIn(file: string): Promise<string[]> {
  const text = await fs.readFile(file, 'utf8');
  return [...text.matchAll(/^\{"put":\{"id":"([^"]+)"/gm)].map((m) => m[1]!);
}

describe("the agents' journal: private and bounded", function () {
  this.timeout(60_000);
  let home: string;
  let workspace: string;
  let file: string;

  beforeEach(async () => {
    home = await tempDir('gwi-agents-home-');
    workspace = realpathSync(await tempDir('gwi-agents-ws-'));
    file = agentJournalFile(workspace, home);
  });
  afterEach(async () => {
    await removeDir(home);
    await removeDir(workspace);
  });

  (posix ? it : it.skip)('0600 in 0700 folders: made so when missing, the existing ones (0644 in 0755) changed, and a rewrite keeps the mode', async () => {
    await secureAgentJournal(file, home);
    assert.equal(await modeOf(path.join(home, '.gateway-images')), 0o700);
    assert.equal(await modeOf(agentJournalFolder(home)), 0o700);
    assert.equal(await modeOf(file), 0o600);
    assert.equal((await fs.stat(file)).size, 0, 'made empty: the first append does not make it');

    const other = agentJournalFile(path.join(workspace, 'other'), home);
    await fs.chmod(path.join(home, '.gateway-images'), 0o755);
    await fs.chmod(agentJournalFolder(home), 0o755);
    await fs.writeFile(other, `${journalLine(result(1))}\n`, { mode: 0o644 });
    await fs.chmod(other, 0o644);
    await secureAgentJournal(other, home);
    assert.deepEqual(await Promise.all([path.join(home, '.gateway-images'), agentJournalFolder(home), other].map(modeOf)), [0o700, 0o700, 0o600]);
    assert.deepEqual(await idsIn(other), ['r1'], 'its contents stay');

    // A compaction renames a new file over it: the new file has the old one's mode.
    await replaceFileWith(other, `${journalLine(result(2))}\n`, { durable: false });
    assert.equal(await modeOf(other), 0o600);

    // Another journal (the window's, or one set by hand) is left as it is.
    const elsewhere = path.join(workspace, 'results.jsonl');
    await fs.writeFile(elsewhere, '', { mode: 0o644 });
    await fs.chmod(elsewhere, 0o644);
    assert.equal(isAgentJournal(elsewhere, home), false);
    await secureAgentJournal(elsewhere, home);
    assert.equal(await modeOf(elsewhere), 0o644);
  });

  it('past its bound it is cut to the newest results (each in its latest state), and within it is left as it is', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const entries = Array.from({ length: 120 }, (_, i) => result(i));
    // Result 3 changed later (a file deleted): its latest line is the one kept, where it was first written.
    await writeJournal(file, [...entries, result(115, { files: [] })]);
    const journal = new SharedJournal(file);

    assert.equal(await boundJournal(journal, { results: 200, bytes: 1 << 20 }), 0, 'within the bound');
    assert.equal((await idsIn(file)).length, 121, 'left as it is');

    assert.equal(await boundJournal(journal, { results: 100, bytes: 1 << 20 }), 45, '120 results cut to 75');
    const kept = await idsIn(file);
    assert.deepEqual(
      kept,
      entries.slice(45).map((e) => e.id),
    );
    assert.match(await fs.readFile(file, 'utf8'), /\{"put":\{"id":"r115",[^\n]*"files":\[\]/, 'the latest state of r115');

    // By size: the newest that fit in three quarters of the bytes.
    const lineBytes = Buffer.byteLength(journalLine(result(100))) + 1;
    assert.equal(await boundJournal(journal, { results: 1000, bytes: 20 * lineBytes }), 75 - 15);
    assert.deepEqual(
      await idsIn(file),
      entries.slice(105).map((e) => e.id),
    );
    // The newest result is kept even when it alone is past the bound.
    assert.deepEqual(newestResults((await journal.read(false)) as Parameters<typeof newestResults>[0], { results: 10, bytes: 1 }).length, 1);
  });

  it('the server and a window that read it before the cut still see the newest results, and a window takes a new one', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeJournal(
      file,
      Array.from({ length: 40 }, (_, i) => result(i)),
    );
    // The server's own store has read the journal; a window has taken its results into its own journal.
    const server = new HistoryStore(file, { load: journalCode });
    assert.equal((await server.index()).size, 40);
    const windowFile = path.join(workspace, 'window.jsonl');
    const window = new HistoryStore(windowFile, { load: journalCode, agentJournal: file });
    assert.equal((await window.index()).size, 40);

    assert.equal(await boundJournal(new SharedJournal(file), { results: 20, bytes: 1 << 20 }), 25);
    // The server finds another file there and reads it whole: the newest 15.
    const afterCut = await server.index();
    assert.equal(afterCut.size, 15);
    assert.ok(afterCut.find('r39') && !afterCut.find('r24'));
    // A new result of the server after the cut: the window takes it, and keeps what it took before.
    await server.put(result(40));
    await server.update('r40', { costRub: 2 });
    const seen = await window.index();
    assert.equal(seen.size, 41);
    assert.equal(seen.find('r40')?.costRub, 2);
    assert.ok(seen.find('r0'), 'what the window took before the cut stays in its journal');
    await Promise.all([server.close(), window.close()]);
  });

  it('the MCP server started by another agent makes the journal private and cuts it to its bound at the start', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
    // 2,100 finished results: past the bound of 2,000.
    await writeJournal(
      file,
      Array.from({ length: 2100 }, (_, i) => result(i)),
    );
    if (posix) await fs.chmod(file, 0o644);
    const { client, output } = await launch({
      HOME: home,
      GATEWAY_IMAGES_BASE_URL: 'http://127.0.0.1:9',
      GATEWAY_IMAGES_API_KEY: 'gw-unused',
      GATEWAY_IMAGES_WORKSPACE: workspace,
    });
    try {
      const deadline = Date.now() + 20_000;
      while ((await idsIn(file)).length > 1500 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const ids = await idsIn(file);
      assert.equal(ids.length, 1500, output.stderr);
      assert.deepEqual(ids.slice(0, 1), ['r600']);
      assert.deepEqual(ids.slice(-1), ['r2099']);
      if (posix) assert.deepEqual(await Promise.all([path.join(home, '.gateway-images'), agentJournalFolder(home), file].map(modeOf)), [0o700, 0o700, 0o600]);
      // The server says so once the cut is done: its line may reach this process's pipe after the file changed.
      const told = /its 600 oldest results were dropped, the newest kept/;
      while (!told.test(output.stderr) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.match(output.stderr, told);
    } finally {
      await client.close();
    }
  });
});
