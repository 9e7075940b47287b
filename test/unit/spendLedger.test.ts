// "Where the money went": the ledger's windows and sums (by who and by model, in kopecks), the
// gateway's figures beside it, its Markdown (chart and table, theme colours), and the CSV export.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { accountIdentity } from '../../src/core/gateway/identity';
import { JobHistoryRecord, recordFailure, recordResult } from '../../src/jobs/jobRecord';
import type { PaidFailure } from '../../src/jobs/jobTypes';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { originCsv, resultsCsv } from '../../src/jobs/results/resultsCsv';
import type { HistoryEntry } from '../../src/jobs/results/resultsIndex';
import { ledgerWindows, spendLedger } from '../../src/jobs/results/spendLedger';
import { spendLedgerMarkdown } from '../../src/jobs/results/spendLedgerMarkdown';
import { DEMO_KEYS, gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';

const statsAt = new Date(Date.UTC(2026, 10, 20, 15, 0, 0));
const hoursBefore = (hours: number) => new Date(statsAt.getTime() - hours * 3_600_000).toISOString();
const stats = (today: number, month: number) => ({
  summary: { today_spend: today, today_requests: 0, month_spend: month, month_requests: 0, avg_daily_spend: 0 },
  at: statsAt,
});

describe('spend ledger (where the money went)', () => {
  const records = [
    { createdAt: hoursBefore(1), model: 'aurora-1', costRub: 0.1, origin: { kind: 'palette' as const } },
    { createdAt: hoursBefore(2), model: 'aurora-1', costRub: 0.2, origin: { kind: 'mcp' as const, client: 'Claude Code' } },
    { createdAt: hoursBefore(16), model: 'prism-2', costRub: 1.05, origin: { kind: 'mcp' as const, client: 'Claude Code' } }, // yesterday (UTC)
    { createdAt: hoursBefore(24 * 8), model: 'prism-2', costRub: 3, origin: { kind: 'promptFile' as const, file: '/w/p.txt', line: 2 } },
    { createdAt: hoursBefore(3), model: 'aurora-1' }, // unknown outcome: counted, not summed
    { createdAt: hoursBefore(24 * 31), model: 'aurora-1', costRub: 50 }, // outside 30 days
    { createdAt: hoursBefore(-1), model: 'aurora-1', costRub: 7 }, // after the gateway's figures were read
  ];

  it("windows end when the gateway's figures were read: the UTC day, 7 and 30 × 24 hours", () => {
    const w = ledgerWindows(statsAt);
    assert.equal(w.today.from.toISOString(), '2026-11-20T00:00:00.000Z');
    assert.equal(w.week.from.toISOString(), '2026-11-13T15:00:00.000Z');
    assert.equal(w.month.from.toISOString(), '2026-10-21T15:00:00.000Z');
    assert.equal(w.month.to.getTime(), statsAt.getTime());
  });

  it('sums by who made it (MCP by client, old entries unknown) and by model, to the kopeck, largest 30-day spend first', () => {
    const ledger = spendLedger([...records, { createdAt: hoursBefore(5), model: 'aurora-1', costRub: 0.3 }], new Date(), stats(0, 0));
    assert.deepEqual(
      ledger.byOrigin.map((r) => [r.key, r.amount.today, r.amount.week, r.amount.month, r.results.month]),
      [
        ['promptFile', 0, 0, 3, 1],
        ['mcp:Claude Code', 0.2, 1.25, 1.25, 2],
        ['unknown', 0.3, 0.3, 0.3, 2],
        ['palette', 0.1, 0.1, 0.1, 1],
      ],
    );
    assert.deepEqual(
      ledger.byModel.map((r) => [r.key, r.amount.month]),
      [
        ['prism-2', 4.05],
        ['aurora-1', 0.6],
      ],
    );
    assert.equal(ledger.total.amount.month, 4.65);
    assert.equal(ledger.total.unknownCost.month, 1);
  });

  it("the gateway's figure minus what this workspace recorded is spent elsewhere, to the kopeck", () => {
    const ledger = spendLedger(records, new Date(), stats(1.31, 14.36));
    assert.deepEqual(ledger.gateway, {
      today: { gateway: 1.31, recorded: 0.3, elsewhere: 1.01 },
      month: { gateway: 14.36, recorded: 4.35, elsewhere: 10.01 },
    });
    const more = spendLedger(records, new Date(), stats(0.1, 4.35));
    assert.equal(more.gateway!.today.elsewhere, -0.2);
    // Results paid with another key are not in this key's figures (those without a known key are counted).
    const keyed = records.map((r, i) => ({ ...r, ...(i === 0 ? {} : { identity: i === 3 ? 'http://gw|other' : 'http://gw|this' }) }));
    const ofKey = spendLedger(keyed, new Date(), { ...stats(1.31, 14.36), identity: 'http://gw|this' });
    assert.equal(ofKey.gateway!.month.recorded, 1.25);
    assert.equal(ofKey.unkeyedResults, 1);
    assert.match(spendLedgerMarkdown(ofKey, 'en'), /1 result of the last 30 days does not say which key paid for it/);
    assert.equal(spendLedger(keyed, new Date(), { ...stats(1.31, 14.36), identity: 'http://gw|this' }).total.amount.month, 4.35);
  });

  it('renders a chart in theme colours with a table of the same figures, and the gateway beside this workspace', () => {
    const md = spendLedgerMarkdown(spendLedger(records, new Date(), stats(1.31, 14.36)), 'en');
    assert.match(md, /## Where the money went/);
    assert.match(md, /\| The gateway's figure for the key \| ₽1\.31 \| ₽14\.36 \|/);
    assert.match(md, /\| Spent elsewhere: not recorded by this workspace \(other machines, other tools, other workspaces\) \| ₽1\.01 \| ₽10\.01 \|/);
    assert.match(md, /<svg [^>]*role="img" aria-label="Spend of the last 30 days by who made it/);
    assert.match(md, /var\(--vscode-charts-blue/);
    assert.match(md, /\| MCP: Claude Code \| ₽0\.20 \(1\) \| ₽1\.25 \(2\) \| ₽1\.25 \(2\) \|/);
    assert.match(md, /\| Prompt file \| ₽0\.00 \(0\) \| ₽0\.00 \(0\) \| ₽3\.00 \(1\) \|/);
    assert.match(md, /1 result of the last 30 days has no known cost/);
    // An MCP client names itself: its name is text, never a link or an image.
    const named = spendLedgerMarkdown(spendLedger([{ ...records[0]!, origin: { kind: 'mcp', client: '![x](http://e/t.png)' } }], new Date()), 'en');
    assert.ok(named.includes('| MCP: !&#91;x&#93;(http&#58;&#47;&#47;e&#47;t&#46;png) |'), named);
    const without = spendLedgerMarkdown(spendLedger([], new Date()), 'en');
    assert.match(without, /not read yet/);
    assert.match(without, /No results in the last 30 days/);
  });
});

describe('the ledger adds up: paid failures are recorded with the key that paid', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ dir: 'gwi-ledger-', models: true });
  const thisKey = () => accountIdentity(gw.emu.url, DEMO_KEYS.unlimited);
  const lastMonth = async (history: HistoryStore) =>
    (await history.index()).createdBetween(new Date(Date.now() - 30 * 86_400_000), new Date(Date.now() + 1000));

  it('15 ₽ spent here, 10 in results and 5 in a paid failure, as the journal records them: spent elsewhere 0.00, not 5', async () => {
    const history = new HistoryStore(path.join(gw.dir, 'results-15.jsonl'), { load: () => resultsCode });
    const request = { model: 'aurora-1', prompt: 'a lighthouse' };
    for (const [i, cost] of [6, 4].entries())
      await recordResult(
        history,
        { request, model: 'aurora-1' },
        { files: [`/w/r-${i}.png`], model: 'aurora-1', usage: { cost_rub: cost }, jobId: `job-${i}`, identity: thisKey() },
      );
    const failure: PaidFailure = {
      jobId: 'job-failed',
      request,
      model: 'aurora-1',
      charged: true,
      files: [],
      costRub: 5,
      identity: thisKey(),
      sentAt: new Date().toISOString(),
      failedAt: new Date().toISOString(),
      estimate: { expectedMin: 5, expectedMax: 5, reservation: 5 } as PaidFailure['estimate'],
      reason: 'the answer could not be read',
    };
    await new JobHistoryRecord(history, { request, model: 'aurora-1' }).failed(failure);
    const ledger = spendLedger(await lastMonth(history), new Date(), { ...stats(15, 15), at: new Date(Date.now() + 1000), identity: thisKey() });
    assert.deepEqual(ledger.gateway, { today: { gateway: 15, recorded: 15, elsewhere: 0 }, month: { gateway: 15, recorded: 15, elsewhere: 0 } });
    assert.equal(ledger.unkeyedResults, undefined, 'every entry says which key paid');
    assert.match(
      spendLedgerMarkdown(ledger, 'en'),
      /\| Spent elsewhere: not recorded by this workspace \(other machines, other tools, other workspaces\) \| ₽0\.00 \| ₽0\.00 \|/,
    );
    await history.close();
  });

  it("real jobs against the emulator, a result and a paid failure whose answer could not be read: recorded here is the key's own figure, elsewhere 0.00", async () => {
    const history = new HistoryStore(path.join(gw.dir, 'results-real.jsonl'), { load: () => resultsCode });
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'));
    const details = (prompt: string) => ({ request: { model: 'aurora-1', prompt }, model: 'aurora-1' });
    const job = (prompt: string) => ({
      request: { model: 'aurora-1', prompt, size: SMALL },
      output: { directory: path.join(gw.dir, 'out'), pattern: '{slug}-{index}' },
    });
    await rig.service.run(job('a result'), { settle: (done) => recordResult(history, details('a result'), done) });
    gw.emu.state.armFault({ fault: 'stray-character', imageIndex: 0 });
    await assert.rejects(
      rig.service.run(job('a paid failure'), { settleFailure: (failure) => recordFailure(history, details('a paid failure'), failure) }),
      /not valid base64/,
    );
    const charged = paidRequests(gw.emu).map((r) => r.chargedRub);
    assert.equal(charged.length, 2);
    assert.ok(
      charged.every((rub) => rub > 0),
      `both were charged: ${charged.join(', ')}`,
    );
    const entries = await lastMonth(history);
    assert.deepEqual(
      entries.map((e) => [e.failed === undefined ? 'result' : 'paid failure', e.identity]),
      [
        ['result', thisKey()],
        ['paid failure', thisKey()],
      ],
    );
    const summary = await gw.client.stats();
    const ledger = spendLedger(entries, new Date(), { summary, at: new Date(Date.now() + 1000), identity: thisKey() });
    assert.equal(ledger.gateway!.month.gateway, summary.month_spend);
    assert.equal(ledger.gateway!.month.recorded, summary.month_spend, "this workspace recorded all of the key's spend");
    assert.equal(ledger.gateway!.month.elsewhere, 0);
    assert.equal(ledger.gateway!.today.elsewhere, 0);
    await history.close();
  });
});

describe('results as CSV', () => {
  const entry = (over: Partial<HistoryEntry>): HistoryEntry => ({
    id: 'x',
    createdAt: '2026-11-20T10:00:00.000Z',
    request: { model: 'aurora-1', prompt: 'a lighthouse', n: 2 },
    model: 'aurora-1',
    files: ['/w/a.png', '/w/b.png'],
    costRub: 1.5,
    requestId: 'req-1',
    origin: { kind: 'studio' },
    ...over,
  });

  it('writes time, who, model, prompt, n, cost, files and request id, one row per result', () => {
    const csv = resultsCsv(
      [
        entry({}),
        entry({ request: { model: 'aurora-1', prompt: 'say "hi", then\nleave' }, costRub: undefined, requestId: undefined, origin: undefined, files: [] }),
        entry({ request: { model: 'aurora-1', prompt: '=HYPERLINK("x")' }, origin: { kind: 'promptFile', file: 'p.txt', line: 4 } }),
      ],
      (f) => f.replace('/w/', ''),
    );
    assert.equal(
      csv,
      [
        'time,who,model,prompt,n,cost_rub,files,request_id',
        '2026-11-20T10:00:00.000Z,studio,aurora-1,a lighthouse,2,1.50,a.png; b.png,req-1',
        '2026-11-20T10:00:00.000Z,unknown,aurora-1,"say ""hi"", then\nleave",1,,,',
        `2026-11-20T10:00:00.000Z,promptFile:p.txt:4,aurora-1,"'=HYPERLINK(""x"")",1,1.50,a.png; b.png,req-1`,
        '',
      ].join('\r\n'),
    );
    assert.equal(originCsv({ kind: 'mcp', client: 'Cursor' }), 'mcp:Cursor');
  });
});
