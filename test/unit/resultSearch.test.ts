// Finding results: the one-line query (words of the prompt, model:, style:, who:, from:, to:, cost:)
// and the index's filtered gallery over it, newest first, each result's files together.
import * as assert from 'node:assert/strict';
import { isEmptyQuery, parseResultQuery } from '../../src/jobs/results/resultSearch';
import { type HistoryEntry, journalLine, ResultsIndex } from '../../src/jobs/results/resultsIndex';

function entry(i: number, over: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    id: `r${i}`,
    createdAt: new Date(2026, 10, 1 + i, 12).toISOString(),
    request: { model: 'aurora-1', prompt: `picture ${i}` },
    model: 'aurora-1',
    files: [`/w/r${i}.png`],
    costRub: i,
    ...over,
  };
}

function indexOf(entries: HistoryEntry[]): ResultsIndex {
  const index = new ResultsIndex();
  for (const e of entries) index.put(journalLine(e));
  return index;
}

describe('finding results', () => {
  it('reads words, fields and ranges, and names what it cannot read', () => {
    const { query, problems } = parseResultQuery('Lighthouse  dawn model:Lumen-XL who:mcp style:Brand from:2026-11-02 to:2026-11-05 cost:1..2,5 size:big');
    assert.deepEqual(query, {
      words: ['lighthouse', 'dawn', 'size:big'],
      model: 'lumen-xl',
      who: 'mcp',
      style: 'brand',
      from: new Date(2026, 10, 2).toISOString(),
      to: new Date(2026, 10, 6).toISOString(),
      minCost: 1,
      maxCost: 2.5,
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(parseResultQuery('cost:>3').query, { words: [], minCost: 3 });
    assert.deepEqual(parseResultQuery('cost:<0.5').query, { words: [], maxCost: 0.5 });
    const bad = parseResultQuery('from:2026-13-01 cost:cheap model:');
    assert.deepEqual(bad.problems, [
      '"from:" takes a date as YYYY-MM-DD; got "2026-13-01".',
      '"cost:" takes rubles as 1..5, >2 or <0.5; got "cheap".',
      '"model:" needs a value.',
    ]);
    assert.ok(isEmptyQuery(parseResultQuery('  ').query));
    assert.ok(!isEmptyQuery(parseResultQuery('who:mcp').query));
  });

  it('filters by every field and any combination, newest first, a result with its files together', () => {
    const index = indexOf([
      entry(1, {
        request: { model: 'lumen-xl', prompt: 'A lighthouse at dawn' },
        model: 'lumen-xl',
        files: ['/w/a1.png', '/w/a2.png'],
        origin: { kind: 'mcp', client: 'Claude Code' },
      }),
      entry(2, { request: { model: 'aurora-1', prompt: 'a lighthouse at night' }, origin: { kind: 'studio' } }),
      entry(3, { request: { model: 'lumen-xl', prompt: 'Lighthouse, storm' }, model: 'lumen-xl', style: { name: 'Brand', file: 's.json', values: {} } }),
      entry(4, { request: { model: 'lumen-xl', prompt: 'a harbour' }, model: 'lumen-xl', costRub: undefined }),
      entry(5, { request: { model: 'lumen-xl', prompt: 'lighthouse again' }, model: 'lumen-xl', files: [] }), // no file: not in the gallery
    ]);
    const files = (text: string) =>
      index
        .filter(parseResultQuery(text).query)
        .page(0, 100)
        .map((s) => s.file);
    assert.deepEqual(files(''), ['/w/r4.png', '/w/r3.png', '/w/r2.png', '/w/a1.png', '/w/a2.png']);
    assert.deepEqual(files('lighthouse'), ['/w/r3.png', '/w/r2.png', '/w/a1.png', '/w/a2.png']);
    assert.deepEqual(files('lighthouse model:lumen'), ['/w/r3.png', '/w/a1.png', '/w/a2.png']);
    assert.deepEqual(files('who:claude'), ['/w/a1.png', '/w/a2.png']);
    assert.deepEqual(files('who:unknown'), ['/w/r4.png', '/w/r3.png']);
    assert.deepEqual(files('style:brand'), ['/w/r3.png']);
    assert.deepEqual(files(`from:2026-11-03 to:2026-11-04`), ['/w/r3.png', '/w/r2.png']);
    assert.deepEqual(files('cost:2..3'), ['/w/r3.png', '/w/r2.png']);
    assert.deepEqual(files('cost:>0'), ['/w/r3.png', '/w/r2.png', '/w/a1.png', '/w/a2.png'], 'a result of unknown cost is in no cost range');
    assert.deepEqual(files('lighthouse dawn who:mcp model:lumen-xl cost:<1 from:2026-11-02'), ['/w/a1.png', '/w/a2.png']);
    const filtered = index.filter(parseResultQuery('lighthouse').query);
    assert.equal(filtered.total, 4);
    assert.deepEqual(
      filtered.page(1, 2).map((s) => [s.entry.id, s.file, s.entry.request.prompt]),
      [
        ['r2', '/w/r2.png', 'a lighthouse at night'],
        ['r1', '/w/a1.png', 'A lighthouse at dawn'],
      ],
    );
  });

  it('sees a result changed after an earlier search (its prompt is read again)', () => {
    const index = indexOf([entry(1)]);
    assert.equal(index.filter(parseResultQuery('picture').query).total, 1);
    index.put(journalLine(entry(1, { request: { model: 'aurora-1', prompt: 'a boat' } })));
    assert.equal(index.filter(parseResultQuery('picture').query).total, 0);
    assert.equal(index.filter(parseResultQuery('boat').query).total, 1);
  });
});
