// The batch resume over real files: a first run through the real job service writes PNGs with their
// provenance chunk into a temp folder and records (or fails to record) each line in a real results
// journal; the second run plans as Generate Images from File does (journal, then the provenance of
// the PNGs the journal does not know) and pays only for the line never done. Against the emulator.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { type BatchLine, parseBatchFile } from '../../src/core/requests/batchFile';
import { estimateCost } from '../../src/core/money/cost';
import { readPngTextChunk } from '../../src/core/files/pngText';
import { existsWith, filesIn, findLinesByProvenance } from '../../src/jobs/promptFiles/batchProvenance';
import { type LineOutcome, planResume, type ResumePlan, runBatch, skipFoundByProvenance } from '../../src/jobs/promptFiles/batch';
import { batchReport, skippedSummary } from '../../src/jobs/promptFiles/batchReport';
import { HistoryStore } from '../../src/jobs/results/history';
import { recordFailure, recordResult } from '../../src/jobs/jobRecord';
import { PROVENANCE_KEYWORD } from '../../src/jobs/provenance';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';

const PROMPTS = ['a cat', 'a dog', 'a fox', 'an owl'].join('\n');

describe('batch resume over real files (journal and PNG provenance)', () => {
  const gw = gatewaySuite({ models: true });

  it('a line whose PNG carries its provenance is not paid again though the journal lacks it; the report and the summary say why each line was skipped', async () => {
    const promptFile = path.join(gw.dir, 'prompts.txt');
    await writeFile(promptFile, PROMPTS);
    const lines = parseBatchFile(PROMPTS, 'txt', { model: 'aurora-1', options: { size: SMALL } }).lines;
    const out = path.join(gw.dir, 'generated-images');
    const history = new HistoryStore(path.join(gw.dir, 'results.jsonl'), { load: () => resultsCode });
    const { service } = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), { provenance: () => true });
    const confirmed = (batch: readonly BatchLine[]) =>
      batch.map(
        (l) =>
          estimateCost(
            gw.models.find((m) => m.id === l.request.model)!,
            1,
          ).reservation,
      );
    const run = (batch: BatchLine[], file: string, record: (line: number) => boolean, warnings: string[] = []) =>
      runBatch(batch, {
        jobs: service,
        output: { directory: out, pattern: 'line-{index}-{slug}' },
        concurrency: 1,
        confirmedReservations: confirmed(batch),
        history: {
          promptFile: file,
          record: async (details, result) => {
            // Lines 2 and 3: the process stopped between saving the PNG and writing the journal.
            if (!record(details.batch!.line)) throw new Error('the journal could not be written');
            await recordResult(history, details, result);
          },
          recordFailure: async (details, failure) => {
            await recordFailure(history, details, failure);
          },
          warn: (message) => warnings.push(message),
        },
      });
    try {
      // First run: lines 1-3 are paid for; only line 1 reaches the journal.
      const warnings: string[] = [];
      const first = await run(lines.slice(0, 3), promptFile, (line) => line === 1, warnings);
      assert.deepEqual(
        first.map((o) => o.status),
        ['done', 'done', 'done'],
      );
      assert.equal(warnings.length, 2, 'lines 2 and 3 were not recorded');
      // Line 4 of another prompt file, with the same request: its PNG names other.txt, not prompts.txt.
      const other = await run(lines.slice(3), path.join(gw.dir, 'other.txt'), () => false);
      assert.equal(other[0]!.status, 'done');
      const provenance = JSON.parse((await readPngTextChunk(first[1]!.files[0]!, PROVENANCE_KEYWORD))!) as { batch: unknown };
      assert.deepEqual(provenance.batch, { file: 'prompts.txt', line: 2, key: lines[1]!.key }, 'the real job wrote the line into the PNG');
      const paidBefore = paidRequests(gw.emu).length;
      assert.equal(paidBefore, 4);

      // Second run, planned as batchFromFile's planBatchResume does.
      const index = await history.index();
      const listing = await filesIn(out);
      const fromJournal = planResume(promptFile, lines, index, existsWith(out, listing, existsSync));
      assert.deepEqual(
        fromJournal.todo.map((l) => l.line),
        [2, 3, 4],
        'the journal knows line 1 only',
      );
      const found = await findLinesByProvenance(listing, promptFile, fromJournal.todo, (f) => !!index.findByFile(f));
      assert.deepEqual([...found.keys()].sort(), [2, 3], "other.txt's line 4 is not this file's line 4");
      const plan: ResumePlan = skipFoundByProvenance(fromJournal, found);
      assert.deepEqual(
        plan.skipped.map((o) => [o.line, o.skipReason, o.files]),
        [
          [1, 'files', first[0]!.files],
          [2, 'provenance', first[1]!.files],
          [3, 'provenance', first[2]!.files],
        ],
      );
      const second = await run(plan.todo, promptFile, () => true);
      assert.deepEqual(
        second.map((o) => [o.line, o.status]),
        [[4, 'done']],
      );
      assert.equal(paidRequests(gw.emu).length - paidBefore, 1, 'only line 4 was paid for in the second run');

      const all: LineOutcome[] = [...plan.skipped, ...second];
      const summary =
        'Skipped because they were paid for before: 1 with images in the workspace, 0 with images in the recovery folder (Recover Unsaved Images saves them), 2 found by the provenance in their PNGs.';
      assert.equal(skippedSummary(all), summary);
      assert.equal(skippedSummary(second), '', 'no sentence when nothing was skipped');
      const md = batchReport(promptFile, all, new Date(2026, 0, 1), 'en');
      const rows = md.split('\n').filter((l) => /^\| \d/.test(l));
      assert.match(rows[0]!, /^\| 1 \| a cat \| aurora-1 \| done earlier \(skipped\) \| \[line-1-a-cat/);
      assert.match(rows[1]!, /^\| 2 \| a dog \| aurora-1 \| done earlier \(skipped\): found by the provenance in its PNGs \| \[line-/);
      assert.match(rows[2]!, /^\| 3 \| a fox \| aurora-1 \| done earlier \(skipped\): found by the provenance in its PNGs \|/);
      assert.match(rows[3]!, /^\| 4 \| an owl \| aurora-1 \| done \|/);
      assert.match(md, /1 done, 3 skipped \(done earlier\), 0 failed, 0 with unknown outcome, 0 not sent\./);
      assert.ok(md.includes(summary), 'the report carries the sentence that sums up the skips');

      // Third run: line 4 is now in the journal too; nothing is left to pay for.
      const again = planResume(promptFile, lines, index, existsWith(out, await filesIn(out), existsSync));
      assert.deepEqual(
        again.todo.map((l) => l.line),
        [2, 3],
      );
      assert.equal(
        skipFoundByProvenance(again, await findLinesByProvenance(await filesIn(out), promptFile, again.todo, (f) => !!index.findByFile(f))).todo.length,
        0,
      );
    } finally {
      await history.close();
    }
  });
});
