// The results journal (issue 25): open and index 50,000 results, one synced append, the resume
// planning of a 10,000-line prompt file against them, and a growth table at 1k / 10k / 50k
// results so that anyone can see the cost grows linearly. Each size in its own process. The
// targets are ratios to baselines measured beside them in the same process, so that they hold on
// a slower machine or disk; the absolute figures are shown as information.
import { fork } from 'node:child_process';
import * as path from 'node:path';
import type { JournalFigures, JournalTask } from './journalRows';
import { type BenchContext, type BenchTarget, lpad, median, pad, runsAtLeast, type ScenarioReport } from './scenario';

/** Open and index / read + JSON.parse of the same results as one array (per run, side by side). */
export const TARGET_OPEN_RATIO = 2.5;
/** One append through the results store (locked, the others' lines read, indexed, synced) / a bare locked, synced append of as long a line. */
export const TARGET_APPEND_RATIO = 4;
/** Resume planning / statSync of each planned line's file. */
export const TARGET_PLAN_RATIO = 3.0;
const SIZES = [1_000, 10_000, 50_000];
const QUICK_SIZES = [1_000, 5_000];

function measure(task: JournalTask): Promise<JournalFigures> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'journalRows.js'), [], { stdio: 'inherit' });
    child.once('message', (reply: { ok: boolean; figures?: JournalFigures; error?: string }) => {
      child.kill();
      if (reply.ok) resolve(reply.figures!);
      else reject(new Error(reply.error));
    });
    child.once('exit', (code) => reject(new Error(`the journal row exited with ${code}`)));
    child.send(task);
  });
}

const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(0)} ms`;

export async function journalScenario(ctx: BenchContext): Promise<ScenarioReport> {
  const sizes = ctx.quick ? QUICK_SIZES : SIZES;
  const runs = runsAtLeast(ctx, 5);
  const figures: JournalFigures[] = [];
  for (const entries of sizes) {
    ctx.log(`  results journal: ${entries} results…`);
    figures.push(await measure({ dir: path.join(ctx.tmp, `journal-${entries}`), entries, runs, appends: 200 }));
  }
  const big = figures.at(-1)!;
  const open = median(big.openMs);
  const append = median(big.appendMs);
  const plan = median(big.planMs);
  const bareAppend = median(big.baseline.bareAppendMs);
  const stat = median(big.baseline.statMs);
  const parse = median(big.baseline.parseArrayMs);
  const ratios = {
    open: median(big.openMs.map((v, i) => v / big.baseline.parseArrayMs[i]!)),
    append: append / bareAppend,
    plan: median(big.planMs.map((v, i) => v / big.baseline.statMs[i]!)),
  };
  const lines = [
    `Results journal (JSON Lines in the workspace storage, each append synced; median of ${runs} runs, ${big.appendMs.length} appends):`,
    `  ${big.entries} results (${(big.journalBytes / 1024 / 1024).toFixed(1)} MiB): open and index ${ms(open)}; baseline: read and JSON.parse of the same results as one array ${ms(parse)}`,
    `  one append (written and synced): median ${ms(append)}, max ${ms(Math.max(...big.appendMs))}; baseline: a bare synced append of as long a line under a bare lock (a folder made and removed) ${ms(bareAppend)}; the old history rewrote its 500-result array per result, synced: ${ms(median(big.baseline.oldAppendMs))}`,
    `  resume planning of a ${big.planLines}-line prompt file (every line done, its file checked on disk; unknown PNGs looked up): ${ms(plan)}, ${big.planSkipped} lines skipped; baseline: statSync of each line's file ${ms(stat)}; the old linear scan of its 500 results per line ${ms(median(big.baseline.oldPlanMs))} (it could find at most 500)`,
    '  Growth (each size in a fresh process; open/parse: open and index over a bare parse of the same results, run by run):',
    `  ${pad('results', 10)}${lpad('journal', 10)}${lpad('open+index', 12)}${lpad('per 1k', 10)}${lpad('open/parse', 12)}${lpad('append', 10)}${lpad('plan lines', 12)}${lpad('plan', 10)}${lpad('plan/stat', 11)}`,
    ...figures.map(
      (f) =>
        `  ${pad(String(f.entries), 10)}${lpad(`${(f.journalBytes / 1024 / 1024).toFixed(1)} MiB`, 10)}${lpad(ms(median(f.openMs)), 12)}${lpad(ms((median(f.openMs) * 1000) / f.entries), 10)}` +
        `${lpad(median(f.openMs.map((v, i) => v / f.baseline.parseArrayMs[i]!)).toFixed(2), 12)}${lpad(ms(median(f.appendMs)), 10)}${lpad(String(f.planLines), 12)}${lpad(ms(median(f.planMs)), 10)}` +
        `${lpad(median(f.planMs.map((v, i) => v / f.baseline.statMs[i]!)).toFixed(2), 11)}`,
    ),
  ];
  const quickNote = ctx.quick ? ' (quick: fewer results)' : '';
  const targets: BenchTarget[] = [
    {
      name: `journal: open and index ${big.entries} results / bare parse${quickNote}`,
      value: `${ratios.open.toFixed(2)} (${ms(open)} / ${ms(parse)})`,
      target: `≤ ${TARGET_OPEN_RATIO}`,
      pass: ratios.open <= TARGET_OPEN_RATIO,
      time: true,
    },
    {
      name: 'journal: one append, synced / bare locked synced append',
      value: `${ratios.append.toFixed(2)} (${ms(append)} / ${ms(bareAppend)})`,
      target: `≤ ${TARGET_APPEND_RATIO}`,
      pass: ratios.append <= TARGET_APPEND_RATIO,
      time: true,
    },
    {
      name: `journal: resume planning, ${big.planLines} lines / ${big.planLines} stat calls${quickNote}`,
      value: `${ratios.plan.toFixed(2)} (${ms(plan)} / ${ms(stat)})`,
      target: `≤ ${TARGET_PLAN_RATIO}`,
      pass: ratios.plan <= TARGET_PLAN_RATIO,
      time: true,
    },
  ];
  return { lines, targets, json: { journal: figures, ratios } };
}
