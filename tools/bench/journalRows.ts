// The results journal's figures, measured in a process of their own (forked by journal.ts):
// open and index, one synced append, and the resume planning of a prompt file, at a given number
// of results; with the baselines of the same run that the targets are ratios to (a bare parse of
// the same data as one JSON array, a bare synced append of a line as long under a bare lock, a
// stat of each line's file), and for comparison the old 500-entry history's rewrite per result
// and its linear resume scan.
import { existsSync, mkdirSync, promises as fs, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { type BatchLine, requestKey } from '../../src/core/requests/batchFile';
import { planResume, skipFoundByProvenance } from '../../src/jobs/promptFiles/batch';
import { existsWith, filesIn, findLinesByProvenance } from '../../src/jobs/promptFiles/batchProvenance';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { type HistoryEntry, journalLine } from '../../src/jobs/results/resultsIndex';

export interface JournalFigures {
  entries: number;
  journalBytes: number;
  openMs: number[];
  appendMs: number[];
  planLines: number;
  planSkipped: number;
  planMs: number[];
  baseline: {
    /** Read and JSON.parse of the same results as one array, each run beside an open. */
    parseArrayMs: number[];
    /**
     * The least a synced append among several writers does: take a lock (make a folder beside the
     * file), open, write a line as long, datasync, close, remove the lock. No reading of the other
     * writers' lines, no index, no JSON.
     */
    bareAppendMs: number[];
    /** statSync of each planned line's file, one after another: the per-file floor of the planning's check. */
    statMs: number[];
    oldAppendMs: number[];
    oldPlanMs: number[];
  };
}

export interface JournalTask {
  dir: string;
  entries: number;
  runs: number;
  appends: number;
}

const OLD_CAP = 500;

/** A result as the extension writes it: a prompt of about 120 characters, two files, one in five a prompt-file line. */
function result(i: number, promptFile: string, out: string, lines: BatchLine[]): HistoryEntry {
  const line = lines[i / 5];
  const request = line?.request ?? {
    model: 'aurora-1',
    prompt: `A lighthouse on a cliff at dawn, watercolour, soft light, result number ${i}, seen from the sea`,
    n: 2,
    size: '1024x1024',
  };
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    request,
    model: request.model,
    files: line
      ? [path.join(out, `line-${i / 5 + 1}.png`)]
      : [path.join(out, `2026-01-01-lighthouse-aurora-1-${i}-1.png`), path.join(out, `2026-01-01-lighthouse-aurora-1-${i}-2.png`)],
    costRub: 12.5,
    balanceAfter: 1000 - i / 100,
    ...(line ? { batch: { file: promptFile, line: line.line, key: line.key } } : {}),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function time(task: () => unknown): Promise<number> {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

export async function measureJournal({ dir, entries, runs, appends }: JournalTask): Promise<JournalFigures> {
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'out');
  mkdirSync(out, { recursive: true });
  const promptFile = path.join(dir, 'prompts.jsonl');
  const planLines = entries / 5;
  const lines: BatchLine[] = Array.from({ length: planLines }, (_, i) => {
    const request = { model: 'sketch-mini', prompt: `tile ${i + 1} of the wall, blue and gold`, size: '64x64' };
    return { line: i + 1, request, key: requestKey(request) };
  });
  const results = Array.from({ length: entries }, (_, i) => result(i, promptFile, out, lines));
  // The prompt file's images are on disk (the planning checks each); the others need not be.
  for (const line of lines) writeFileSync(path.join(out, `line-${line.line}.png`), '');
  const file = path.join(dir, 'results.jsonl');
  const text = results.map(journalLine).join('\n') + '\n';
  writeFileSync(file, text);
  // The baseline's file: the same results as one JSON array.
  const arrayFile = path.join(dir, 'results.json');
  writeFileSync(arrayFile, JSON.stringify(results));

  const openMs: number[] = [];
  const parseArrayMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const store = new HistoryStore(file, { load: () => resultsCode });
    openMs.push(await time(() => store.index()));
    await store.close();
    parseArrayMs.push(await time(async () => JSON.parse(await fs.readFile(arrayFile, 'utf8'))));
  }

  const store = new HistoryStore(file, { load: () => resultsCode });
  const index = await store.index();
  const planMs: number[] = [];
  const statMs: number[] = [];
  let planSkipped = 0;
  const lineFiles = lines.map((line) => path.join(out, `line-${line.line}.png`));
  for (let run = 0; run < runs; run++) {
    statMs.push(await time(() => lineFiles.forEach((file) => statSync(file))));
    planMs.push(
      await time(async () => {
        const listing = await filesIn(out);
        const plan = planResume(promptFile, lines, index, existsWith(out, listing, existsSync));
        const found = await findLinesByProvenance(listing, promptFile, plan.todo, (f) => !!index.findByFile(f));
        planSkipped = skipFoundByProvenance(plan, found).skipped.length;
      }),
    );
  }
  const appendMs: number[] = [];
  const bareAppendMs: number[] = [];
  const bareFile = path.join(dir, 'bare.jsonl');
  for (let i = 0; i < appends; i++) {
    const entry = { ...results[i % 4]!, files: [path.join(out, `new-${i}.png`)] };
    appendMs.push(await time(() => store.add(entry)));
    // Interleaved, so that the disk's moods fall on both alike.
    const line = `${journalLine(entry)}\n`;
    bareAppendMs.push(
      await time(async () => {
        await fs.mkdir(`${bareFile}.lock`);
        const handle = await fs.open(bareFile, 'a');
        await handle.writeFile(line);
        await handle.datasync();
        await handle.close();
        await fs.rmdir(`${bareFile}.lock`);
      }),
    );
  }
  await store.close();

  // The old history: one array of at most 500 results, rewritten whole (and synced) on every add,
  // and a linear scan of it for each line of the prompt file.
  const old = results.slice(-OLD_CAP).reverse();
  const oldFile = path.join(dir, 'old-history.json');
  const oldAppendMs: number[] = [];
  for (let i = 0; i < Math.min(appends, 50); i++) {
    oldAppendMs.push(
      await time(async () => {
        const handle = await fs.open(oldFile, 'w');
        await handle.write(JSON.stringify([results[i]!, ...old].slice(0, OLD_CAP)));
        await handle.datasync();
        await handle.close();
      }),
    );
  }
  const oldPlanMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    oldPlanMs.push(
      await time(() =>
        lines.filter((line) =>
          old.find((e) => e.batch?.file === promptFile && e.batch.line === line.line && e.batch.key === line.key && e.files.some(existsSync)),
        ),
      ),
    );
  }
  return {
    entries,
    journalBytes: Buffer.byteLength(text),
    openMs,
    appendMs,
    planLines,
    planSkipped,
    planMs,
    baseline: { parseArrayMs, bareAppendMs, statMs, oldAppendMs, oldPlanMs },
  };
}

export { median };

// Forked by journal.ts: one task in, its figures out.
if (require.main === module) {
  process.once('message', (task: JournalTask) => {
    measureJournal(task).then(
      (figures) => process.send!({ ok: true, figures }),
      (error: unknown) => process.send!({ ok: false, error: String(error instanceof Error ? error.stack : error) }),
    );
  });
}
