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
    assert.deepEqual(parseResultQuery('cost:>3').query, { words: [], costAbove: 3 });
    assert.deepEqual(parseResultQuery('cost:<0.5').query, { words: [], costBelow: 0.5 });
    assert.deepEqual(parseResultQuery('cost:>=3').query, { words: [], minCost: 3 });
    assert.deepEqual(parseResultQuery('cost:<=0,5').query, { words: [], maxCost: 0.5 });
    const bad = parseResultQuery('from:2026-13-01 cost:cheap model: cost:>=x cost:=>2');
    assert.deepEqual(bad.problems, [
      '"from:" takes a date as YYYY-MM-DD; got "2026-13-01".',
      '"cost:" takes rubles as 1..5, >2, >=2, <0.5 or <=0.5; got "cheap".',
      '"model:" needs a value.',
      '"cost:" takes rubles as 1..5, >2, >=2, <0.5 or <=0.5; got ">=x".',
      '"cost:" takes rubles as 1..5, >2, >=2, <0.5 or <=0.5; got "=>2".',
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
    assert.deepEqual(files('lighthouse dawn who:mcp model:lumen-xl cost:<=1 from:2026-11-02'), ['/w/a1.png', '/w/a2.png']);
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

  it('reads a date as written: the years 0 to 99 are not 1900 to 1999, and February 29 exists only in leap years', () => {
    const day = (year: number, month: number, date: number) => {
      const d = new Date(0);
      d.setFullYear(year, month - 1, date);
      d.setHours(0, 0, 0, 0);
      return d.toISOString();
    };
    const { query, problems } = parseResultQuery('from:0099-01-01 to:0099-12-31');
    assert.deepEqual(problems, []);
    assert.equal(query.from, day(99, 1, 1));
    assert.equal(query.to, day(100, 1, 1), 'the day after the last day');
    assert.ok(query.from.startsWith('0099-') || query.from.startsWith('0098-'), `year 99, not 1999: ${query.from}`);
    assert.equal(parseResultQuery('to:0000-02-29').query.to, day(0, 3, 1), 'the year 0 is a leap year');
    assert.deepEqual(parseResultQuery('from:0099-02-29').problems, ['"from:" takes a date as YYYY-MM-DD; got "0099-02-29".']);
    assert.deepEqual(parseResultQuery('from:2028-02-29').query.from, day(2028, 2, 29));

    const index = indexOf([entry(1, { createdAt: new Date('1999-06-01T12:00:00Z').toISOString() }), entry(2)]);
    const ids = (text: string) =>
      index
        .filter(parseResultQuery(text).query)
        .page(0, 100)
        .map((s) => s.entry.id);
    assert.deepEqual(ids('to:0099-12-31'), [], 'a result of 1999 is after the year 99');
    assert.deepEqual(ids('from:0099-01-01'), ['r2', 'r1']);
  });

  it('keeps > and < strict and >= and <= inclusive, to the kopeck', () => {
    const index = indexOf([entry(1, { costRub: 1.99 }), entry(2, { costRub: 2 }), entry(3, { costRub: 2.01 }), entry(4, { costRub: 0.1 + 0.2 })]);
    const ids = (text: string) =>
      index
        .filter(parseResultQuery(text).query)
        .page(0, 100)
        .map((s) => s.entry.id);
    assert.deepEqual(ids('cost:>2'), ['r3']);
    assert.deepEqual(ids('cost:>=2'), ['r3', 'r2']);
    assert.deepEqual(ids('cost:<2'), ['r4', 'r1']);
    assert.deepEqual(ids('cost:<=2'), ['r4', 'r2', 'r1']);
    assert.deepEqual(ids('cost:2'), ['r2']);
    assert.deepEqual(ids('cost:>0.3'), ['r3', 'r2', 'r1'], '0.1 + 0.2 is 0.30 ₽, not above it');
    assert.deepEqual(ids('cost:<0.3'), []);
    assert.deepEqual(ids('cost:>=0.3 cost:<2'), ['r4', 'r1']);
  });

  it('sees a result changed after an earlier search (its prompt is read again)', () => {
    const index = indexOf([entry(1)]);
    assert.equal(index.filter(parseResultQuery('picture').query).total, 1);
    index.put(journalLine(entry(1, { request: { model: 'aurora-1', prompt: 'a boat' } })));
    assert.equal(index.filter(parseResultQuery('picture').query).total, 0);
    assert.equal(index.filter(parseResultQuery('boat').query).total, 1);
  });
});
