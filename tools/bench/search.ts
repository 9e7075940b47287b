// Finding results (issue 35): a search over 50,000 results of the journal (words of the prompt,
// model, who, cost) against a bare scan of the same entries, and the first page of the filtered
// gallery (what the studio's filter and Find Image Results… ask for) against the bare scan and a
// slice of its first page. The baselines run beside each run in the same process, so the targets
// are ratios that hold on a slower machine; the absolute figures are information.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { HistoryStore } from '../../src/jobs/results/history';
import { originKey, type ResultOrigin } from '../../src/jobs/results/resultOrigin';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { parseResultQuery } from '../../src/jobs/results/resultSearch';
import { type HistoryEntry, journalLine } from '../../src/jobs/results/resultsIndex';
import { type BenchContext, median, runsAtLeast, type ScenarioReport } from './scenario';

/** A search of the index / a bare scan of the same entries as plain objects (prompts already in lower case). */
export const TARGET_SEARCH_RATIO = 3;
/** The filtered gallery's first page (search, then 48 cards whole) / the bare scan and a slice of 48. */
export const TARGET_FIRST_PAGE_RATIO = 3;
const RESULTS = 50_000;
const QUICK_RESULTS = 5_000;
const FIRST_PAGE = 48;
const QUERY = 'harbour fog model:lumen who:mcp cost:<20';

const SUBJECTS = ['lighthouse', 'harbour', 'mill', 'forest', 'city', 'kite', 'boat', 'bridge'];
const MOODS = ['at dawn', 'in fog', 'at night', 'in the rain', 'at noon'];
const MODELS = ['aurora-1', 'sketch-mini', 'prism-2', 'lumen-xl'];
const ORIGINS: ResultOrigin[] = [
  { kind: 'palette' },
  { kind: 'studio' },
  { kind: 'mcp', client: 'Claude Code' },
  { kind: 'mcp', client: 'Cursor' },
  { kind: 'promptFile', file: '/w/prompts.txt', line: 3 },
  { kind: 'chat' },
];

/** A result as the extension writes it: a prompt of about 100 characters, one or two files, who made it, a cost. */
function result(i: number): HistoryEntry {
  // Each field varies on its own rhythm, so that every combination occurs.
  const model = MODELS[Math.floor(i / 40) % MODELS.length]!;
  const prompt = `A ${SUBJECTS[i % SUBJECTS.length]} ${MOODS[(i >> 3) % MOODS.length]}, watercolour, soft light, result number ${i}, seen from afar`;
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    request: { model, prompt, n: 1 + (i % 2), size: '1024x1024' },
    model,
    files: Array.from({ length: 1 + (i % 2) }, (_, k) => `/w/generated-images/result-${i}-${k + 1}.png`),
    costRub: 2 + (i % 37),
    origin: ORIGINS[Math.floor(i / 13) % ORIGINS.length]!,
    ...(i % 11 === 0 ? { style: { name: 'Brand', file: '.gateway-images/styles.json', values: {} } } : {}),
  };
}

const time = (task: () => unknown): number => {
  const started = performance.now();
  task();
  return performance.now() - started;
};
const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(0)} ms`;

export async function searchScenario(ctx: BenchContext): Promise<ScenarioReport> {
  const count = ctx.quick ? QUICK_RESULTS : RESULTS;
  const runs = runsAtLeast(ctx, 9);
  ctx.log(`  search: ${count} results…`);
  const dir = path.join(ctx.tmp, 'search');
  mkdirSync(dir, { recursive: true });
  const results = Array.from({ length: count }, (_, i) => result(i));
  const file = path.join(dir, 'results.jsonl');
  writeFileSync(file, results.map(journalLine).join('\n') + '\n');
  const store = new HistoryStore(file, { load: () => resultsCode });
  const index = await store.index();
  const { query } = parseResultQuery(QUERY);

  // The bare scan's entries: what a search needs of each result, newest first, as the gallery is.
  const bare = results
    .map((r) => ({
      prompt: r.request.prompt.toLowerCase(),
      model: r.model.toLowerCase(),
      cost: r.costRub,
      who: originKey(r.origin).toLowerCase(),
      files: r.files,
      r,
    }))
    .reverse();
  const bareScan = () => {
    const found: { file: string; r: HistoryEntry }[] = [];
    for (const e of bare) {
      if (
        !e.prompt.includes('harbour') ||
        !e.prompt.includes('fog') ||
        !e.model.includes('lumen') ||
        !e.who.includes('mcp') ||
        e.cost === undefined ||
        // `cost:<20` is strict: a result of 20 ₽ is not found.
        e.cost >= 20
      )
        continue;
      for (const f of e.files) found.push({ file: f, r: e.r });
    }
    return found;
  };

  // The first search reads each prompt from its line's text once (kept for the next ones).
  let matches = 0;
  const firstSearchMs = time(() => (matches = index.filter(query).total));
  const bareMatches = bareScan().length;
  if (matches !== bareMatches || !matches) throw new Error(`the search found ${matches} images, the bare scan ${bareMatches}`);
  const searchMs: number[] = [];
  const scanMs: number[] = [];
  const pageMs: number[] = [];
  const bareFirstPageMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    // Interleaved, so that the machine's moods fall on both alike.
    searchMs.push(time(() => index.filter(parseResultQuery(QUERY).query)));
    scanMs.push(time(bareScan));
    pageMs.push(time(() => index.filter(parseResultQuery(QUERY).query).page(0, FIRST_PAGE)));
    bareFirstPageMs.push(time(() => bareScan().slice(0, FIRST_PAGE)));
  }
  await store.close();
  const ratios = {
    search: median(searchMs.map((v, i) => v / scanMs[i]!)),
    firstPage: median(pageMs.map((v, i) => v / bareFirstPageMs[i]!)),
  };
  const quickNote = ctx.quick ? ' (quick: fewer results)' : '';
  const lines = [
    `Finding results (median of ${runs} runs; query "${QUERY}": ${matches} of ${index.galleryCount} images):`,
    `  search over ${count} results: ${ms(median(searchMs))}; baseline: a bare scan of the same entries (plain objects, prompts in lower case) ${ms(median(scanMs))}; the first search, which reads each prompt from the journal's text once: ${ms(firstSearchMs)}`,
    `  the first page of the filtered gallery (${FIRST_PAGE} cards, their results whole): ${ms(median(pageMs))}; baseline: the bare scan and a slice of ${FIRST_PAGE} ${ms(median(bareFirstPageMs))}`,
  ];
  return {
    lines,
    targets: [
      {
        name: `search: ${count} results / bare scan${quickNote}`,
        value: `${ratios.search.toFixed(2)} (${ms(median(searchMs))} / ${ms(median(scanMs))})`,
        target: `≤ ${TARGET_SEARCH_RATIO}`,
        pass: ratios.search <= TARGET_SEARCH_RATIO,
        time: true,
      },
      {
        name: `search: first page of the filtered gallery / bare scan + slice${quickNote}`,
        value: `${ratios.firstPage.toFixed(2)} (${ms(median(pageMs))} / ${ms(median(bareFirstPageMs))})`,
        target: `≤ ${TARGET_FIRST_PAGE_RATIO}`,
        pass: ratios.firstPage <= TARGET_FIRST_PAGE_RATIO,
        time: true,
      },
    ],
    json: { search: { results: count, matches, firstSearchMs, searchMs, scanMs, pageMs, bareFirstPageMs, ratios } },
  };
}
