// Batch runs through the real job service against the emulator: bounded concurrency, cancel
// (lines not started are never sent), resume, and the Markdown report.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { type BatchLine, parseBatchFile } from '../../src/core/requests/batchFile';
import { estimateCost } from '../../src/core/money/cost';
import { type LineOutcome, planResume, runBatch, skipFoundByProvenance, summarize } from '../../src/jobs/promptFiles/batch';
import { batchReport, reportPathFor } from '../../src/jobs/promptFiles/batchReport';
import { runBounded } from '../../src/jobs/pool';
import { type HistoryEntry, journalLine, ResultsIndex } from '../../src/jobs/results/resultsIndex';
import { gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';

const FIVE = ['a cat', 'a dog', 'a fox', 'an owl', 'a bee'].join('\n');

describe('batch runs', () => {
  const gw = gatewaySuite({ models: true });

  const lines = () => parseBatchFile(FIVE, 'txt', { model: 'aurora-1', options: { size: SMALL } }).lines;
  /** The reservation of each line at the catalog's prices: what the run's confirmation showed. */
  const confirmedFor = (batch: readonly BatchLine[]) =>
    batch.map(
      (line) =>
        estimateCost(
          gw.models.find((m) => m.id === line.request.model)!,
          line.request.n ?? 1,
        ).reservation,
    );
  const rig = () => newService(gw.client, gw.models, path.join(gw.dir, 'recovery'));

  it('the pool never runs more than the limit and starts nothing after an abort', async () => {
    let running = 0;
    let peak = 0;
    const controller = new AbortController();
    const started: number[] = [];
    const results = await runBounded(
      [0, 1, 2, 3, 4, 5, 6],
      3,
      async (item) => {
        started.push(item);
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        if (item === 0) controller.abort();
        return item * 2;
      },
      controller.signal,
    );
    assert.equal(peak, 3);
    assert.deepEqual(started, [0, 1, 2]);
    assert.deepEqual(results, [0, 2, 4, undefined, undefined, undefined, undefined]);
  });

  it('runs every line once, with the concurrency asked for, and reports progress with money spent', async () => {
    const progress: number[] = [];
    let spent = 0;
    // Each generation takes a while, so lines that may run together do.
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 100, times: -1 });
    let sending = 0;
    let peak = 0;
    const service = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), {
      onEvent: (event) => {
        if (event.type === 'sending') peak = Math.max(peak, ++sending);
      },
    }).service;
    const outcomes = await runBatch(lines(), {
      jobs: service,
      output: { directory: path.join(gw.dir, 'all'), pattern: 'line-{index}-{slug}' },
      concurrency: 2,
      confirmedReservations: confirmedFor(lines()),
      onProgress: (_o, p) => {
        sending--;
        progress.push(p.finished);
        spent = p.spent;
      },
    });
    assert.equal(peak, 2, 'lines in flight at once');
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['done', 'done', 'done', 'done', 'done'],
    );
    assert.equal(paidRequests(gw.emu).length, 5);
    assert.deepEqual(progress, [1, 2, 3, 4, 5]);
    assert.equal(spent, summarize(outcomes).spent);
    assert.ok(spent > 0);
  });

  it('cancelled after 2 lines: the rest are never sent', async () => {
    const controller = new AbortController();
    const outcomes = await runBatch(lines(), {
      jobs: rig().service,
      output: { directory: path.join(gw.dir, 'cancel'), pattern: 'line-{index}-{slug}' },
      concurrency: 1,
      confirmedReservations: confirmedFor(lines()),
      signal: controller.signal,
      onProgress: (_o, p) => p.finished === 2 && controller.abort(),
    });
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['done', 'done', 'not-sent', 'not-sent', 'not-sent'],
    );
    assert.equal(paidRequests(gw.emu).length, 2);
  });

  it('a failing line fails alone', async () => {
    // The gateway's own refusal (a 500 would be an unknown outcome).
    gw.emu.state.armFault({ fault: 'rate-limit' });
    const outcomes = await runBatch(lines().slice(0, 3), {
      jobs: rig().service,
      output: { directory: path.join(gw.dir, 'fail'), pattern: 'x-{index}' },
      concurrency: 1,
      confirmedReservations: confirmedFor(lines().slice(0, 3)),
    });
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['failed', 'done', 'done'],
    );
    assert.match(outcomes[0]!.error!, /Too many requests/);
  });

  it('sends at most what was confirmed: a line whose price rose after the confirmation is refused, not sent, and says so', async () => {
    const batch = parseBatchFile('a cat\na dog', 'txt', { model: 'aurora-1', options: { size: SMALL } }).lines;
    const confirmed = confirmedFor(batch);
    // The catalog refreshed in the background after the confirmation: aurora-1 costs more now.
    const raised = gw.models.map((m) => (m.id === 'aurora-1' ? { ...m, max_price_per_image: m.max_price_per_image + 1 } : m));
    const rig = newService(gw.client, raised, path.join(gw.dir, 'recovery'), { confirmAbove: () => 0 });
    const outcomes = await runBatch(batch, {
      jobs: rig.service,
      output: { directory: path.join(gw.dir, 'rose'), pattern: 'x-{index}' },
      concurrency: 1,
      confirmedReservations: [confirmed[0]! + 1, confirmed[1]!],
    });
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['done', 'not-sent'],
      'line 1 was confirmed at the new price, line 2 at the old one',
    );
    assert.match(outcomes[1]!.error!, /aurora-1 now reserves .+, more than the .+ confirmed/);
    assert.equal(paidRequests(gw.emu).length, 1);
    assert.equal(rig.confirms, 0, 'a confirmed line asked again');
  });

  it('resume skips lines done before (same file, line and request, files still there)', () => {
    const all = lines();
    const file = '/w/prompts.txt';
    const entry = (line: number, key: string, files: string[]): HistoryEntry => ({
      id: String(line),
      createdAt: '',
      request: all[0]!.request,
      model: 'aurora-1',
      files,
      batch: { file, line, key },
      costRub: 3,
    });
    const history = new ResultsIndex();
    for (const result of [
      entry(1, all[0]!.key, ['/out/a.png']),
      entry(2, 'changed-line', ['/out/b.png']),
      entry(3, all[2]!.key, ['/out/gone.png']),
      { ...entry(4, all[3]!.key, []), id: '4r', recovered: { files: ['/recovery/x-0.png'] } },
    ])
      history.put(journalLine(result));
    const plan = planResume(file, all, history, (p) => p !== '/out/gone.png');
    assert.deepEqual(
      plan.todo.map((l) => l.line),
      [2, 3, 5],
    );
    assert.deepEqual(plan.skipped, [
      { line: 1, prompt: 'a cat', model: 'aurora-1', status: 'skipped', files: ['/out/a.png'], costRub: 3, skipReason: 'files' },
      { line: 4, prompt: 'an owl', model: 'aurora-1', status: 'skipped', files: ['/recovery/x-0.png'], costRub: 3, skipReason: 'recovery' },
    ]);
    assert.equal(planResume('/other.txt', all, history, () => true).skipped.length, 0);
    const withProvenance = skipFoundByProvenance(plan, new Map([[5, ['/out/bee.png']]]));
    assert.deepEqual(
      withProvenance.todo.map((l) => l.line),
      [2, 3],
    );
    assert.deepEqual(
      withProvenance.skipped.map((l) => [l.line, l.skipReason]),
      [
        [1, 'files'],
        [4, 'recovery'],
        [5, 'provenance'],
      ],
    );
  });

  it('writes a Markdown report with links relative to the prompt file', () => {
    const file = path.join('/w', 'prompts', 'set.txt');
    assert.equal(reportPathFor(file), path.join('/w', 'prompts', 'set.report.md'));
    const outcomes: LineOutcome[] = [
      { line: 3, prompt: 'a | pipe', model: 'aurora-1', status: 'failed', files: [], error: 'HTTP 500' },
      { line: 1, prompt: 'a cat', model: 'aurora-1', status: 'done', files: [path.join('/w', 'generated images', 'cat (1).png')], costRub: 2.5 },
      { line: 2, prompt: 'a dog', model: 'aurora-1', status: 'skipped', files: [], costRub: 9 },
    ];
    const md = batchReport(file, outcomes, new Date(2026, 0, 1), 'en');
    const rows = md.split('\n').filter((l) => /^\| \d/.test(l));
    assert.equal(rows.length, 3);
    assert.match(rows[0]!, /^\| 1 \| a cat \| aurora-1 \| done \| \[cat \(1\)&#46;png\]\(\.\.\/generated%20images\/cat%20%281%29\.png\) \| ₽2\.50 \|/);
    assert.match(rows[2]!, /a &#124; pipe .* failed .* HTTP 500/);
    assert.match(md, /1 done, 1 skipped \(done earlier\), 1 failed, 0 with unknown outcome, 0 not sent\. Spent in this run: ₽2\.50\./);
  });
});
