// Who made each result: every entry point's jobs record it in the results journal (a prompt file's
// line with its file and line, a comparison, the MCP server with its client's name), and the MCP
// server started by another agent records into a file outside the workspace whose finished results
// the window takes into its journal, once. Against the emulator, over real HTTP and stdio.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { estimateCost } from '../../src/core/money/cost';
import { agentJournalFile } from '../../src/jobs/results/agentJournal';
import { runBatch } from '../../src/jobs/promptFiles/batch';
import { runComparison } from '../../src/jobs/compare';
import { HistoryStore } from '../../src/jobs/results/history';
import { recordFailure, recordResult } from '../../src/jobs/jobRecord';
import { SharedJournal } from '../../src/jobs/results/journalFile';
import { type ResultOrigin, originKey, originLabel } from '../../src/jobs/results/resultOrigin';
import { journalLine, ResultsIndex } from '../../src/jobs/results/resultsIndex';
import { DEMO_KEYS } from '../../tools/emulator';
import { gatewaySuite, newService, paidRequests, removeDir, SMALL, tempDir } from './support/gateway';
import { launch, SERVER, serverHome, type ToolResult } from './support/mcp';

const journalCode = () => ({ SharedJournal, ResultsIndex, journalLine });
const storeAt = (file: string, agentJournal?: string) => new HistoryStore(file, { load: journalCode, ...(agentJournal ? { agentJournal } : {}) });

describe('who made each result (origin in the results journal)', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ models: true });
  const reservation = (id: string) =>
    estimateCost(
      gw.models.find((m) => m.id === id)!,
      1,
    ).reservation;

  it('a comparison records each model as made by Compare Models, with the gateway request id', async () => {
    const store = storeAt(path.join(gw.dir, 'compare.jsonl'));
    const jobs = ['aurora-1', 'sketch-mini'].map((model) => ({
      request: { model, prompt: 'a lighthouse', size: SMALL },
      output: { directory: path.join(gw.dir, 'compare'), pattern: '{model}-{index}' },
    }));
    await runComparison(jobs, {
      jobs: newService(gw.client, gw.models, path.join(gw.dir, 'recovery')).service,
      concurrency: 2,
      confirmedReservations: jobs.map((j) => reservation(j.request.model)),
      history: { store, runId: 'run-1', warn: (m) => assert.fail(m) },
    });
    const entries = (await store.index()).comparison('run-1');
    assert.equal(entries.length, 2);
    for (const entry of entries) {
      assert.deepEqual(entry.origin, { kind: 'compare' });
      assert.equal(typeof entry.requestId, 'string', 'the request id of the answer is recorded');
    }
    await store.close();
  });

  it("a prompt file's line records its file and line as who made it", async () => {
    const store = storeAt(path.join(gw.dir, 'batch.jsonl'));
    const promptFile = path.join(gw.dir, 'prompts.txt');
    const lines = [3, 7].map((line) => ({ line, key: `k${line}`, request: { model: 'aurora-1', prompt: `line ${line}`, size: SMALL } }));
    await runBatch(lines, {
      jobs: newService(gw.client, gw.models, path.join(gw.dir, 'recovery')).service,
      output: { directory: path.join(gw.dir, 'batch'), pattern: '{slug}-{index}' },
      concurrency: 1,
      confirmedReservations: lines.map(() => reservation('aurora-1')),
      history: {
        promptFile,
        record: (details, result) => recordResult(store, details, result),
        recordFailure: (details, failure) => recordFailure(store, details, failure),
        warn: (m) => assert.fail(m),
      },
    });
    const index = await store.index();
    const origins = lines.map((l) => index.findBatch({ file: promptFile, line: l.line, key: l.key })[0]?.origin);
    assert.deepEqual(origins, [
      { kind: 'promptFile', file: promptFile, line: 3 },
      { kind: 'promptFile', file: promptFile, line: 7 },
    ]);
    assert.equal(originLabel(origins[0]), 'Prompt file prompts.txt, line 3');
    await store.close();
  });

  it('old entries without an origin, and damaged origins or those of unknown kinds, read as "unknown"', () => {
    assert.equal(originKey(undefined), 'unknown');
    assert.equal(originLabel(undefined), 'unknown');
    // As a damaged or newer journal may hold them.
    assert.equal(originKey({ kind: 'robot' } as unknown as ResultOrigin), 'unknown');
    assert.equal(originKey('palette' as unknown as ResultOrigin), 'unknown');
    assert.equal(originKey({ kind: 'mcp', client: { name: 'x' } } as unknown as ResultOrigin), 'mcp');
    assert.equal(originKey({ kind: 'mcp', client: 'Claude Code' }), 'mcp:Claude Code');
    assert.equal(originLabel({ kind: 'mcp', client: 'Claude Code' }), 'MCP: Claude Code');
    assert.equal(originLabel({ kind: 'mcp' }), 'MCP');
  });

  describe('the MCP server (dist/mcp.js over stdio)', () => {
    let workspace: string;
    before(async function () {
      if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
      workspace = await fs.realpath(await tempDir('gwi-origin-ws-'));
    });
    after(() => removeDir(workspace));

    const generate = async (env: Record<string, string>, prompt: string) => {
      const { client } = await launch({
        GATEWAY_IMAGES_BASE_URL: gw.emu.url,
        GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
        GATEWAY_IMAGES_WORKSPACE: workspace,
        GATEWAY_IMAGES_RECOVERY_DIR: path.join(workspace, '..', `${path.basename(workspace)}-recovery`),
        ...env,
      });
      try {
        const result = (await client.callTool({ name: 'generate_image', arguments: { prompt, model: 'aurora-1', size: SMALL } })) as ToolResult;
        assert.equal(result.isError, undefined, JSON.stringify(result.content));
        return result.structuredContent as { cost_rub: number; files: { path: string }[] };
      } finally {
        await client.close();
      }
    };

    it("started by VS Code, it records into the journal it is given, under MCP with the client's name from initialize", async () => {
      const journal = path.join(workspace, '..', `${path.basename(workspace)}-window.jsonl`);
      const paid = paidRequests(gw.emu).length;
      const answer = await generate({ GATEWAY_IMAGES_RESULTS_JOURNAL: journal }, 'a harbour at night');
      assert.equal(paidRequests(gw.emu).length, paid + 1);
      const store = storeAt(journal);
      const entries = (await store.index()).createdBetween(new Date(0), new Date(Date.now() + 60_000));
      assert.equal(entries.length, 1);
      assert.deepEqual(entries[0]!.origin, { kind: 'mcp', client: 'gateway-images-test' });
      assert.equal(entries[0]!.costRub, answer.cost_rub);
      assert.deepEqual(
        entries[0]!.files.map((f) => path.relative(workspace, f)),
        answer.files.map((f) => f.path),
      );
      await store.close();
      await fs.rm(journal, { force: true });
    });

    it('started by another agent, it records outside the workspace; the window takes its finished results once, and keeps its own changes', async () => {
      await generate({}, 'a mill by a river');
      const agents = agentJournalFile(workspace, serverHome());
      assert.ok(existsSync(agents), `nothing recorded in ${agents}`);
      assert.ok(path.relative(workspace, agents).startsWith('..'), 'the agents journal is outside the workspace');
      const windowJournal = path.join(await tempDir('gwi-origin-window-'), 'results.jsonl');
      const window = storeAt(windowJournal, agents);
      const [taken] = (await window.index()).createdBetween(new Date(0), new Date(Date.now() + 60_000));
      assert.deepEqual(taken?.origin, { kind: 'mcp', client: 'gateway-images-test' });
      // Another window of the workspace reads the same journal: nothing is taken twice.
      const other = storeAt(windowJournal, agents);
      assert.equal((await other.index()).size, 1);
      await window.removeFile(taken.files[0]!);
      const again = await storeAt(windowJournal, agents).index();
      assert.equal(again.size, 1);
      assert.deepEqual(again.find(taken.id)!.files, [], 'a file deleted in the window came back from the agents journal');
      const lines = (await fs.readFile(windowJournal, 'utf8')).split('\n').filter(Boolean);
      assert.equal(lines.filter((l) => l.includes(taken.id)).length, 2, 'taken once, then the deletion');
      await Promise.all([window.close(), other.close()]);
      await removeDir(path.dirname(windowJournal));
    });
  });
});
