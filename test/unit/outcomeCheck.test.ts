// An unknown outcome is recorded in the results journal as paid (perhaps), and checked again once its
// deadline has passed: the key's spend tells 'charge-seen' or leaves it 'unknown', never "not charged".
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { AccountModel } from '../../src/account/accountModel';
import { GatewayError } from '../../src/core/gateway/errors';
import { SpendingCap } from '../../src/core/money/spendingCap';
import { HistoryStore } from '../../src/jobs/results/history';
import { JobHistoryRecord } from '../../src/jobs/jobRecord';
import type { PaidFailure } from '../../src/jobs/jobTypes';
import { judgeOutcome, OutcomeChecks } from '../../src/jobs/outcomeCheck';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { caught, gatewaySuite, newService, paidRequests, SMALL, waitFor } from './support/gateway';

describe('Unknown outcomes checked after their deadline', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ dir: 'gwi-outcome-', models: true });

  it("judges by the rise of the key spend that the journal's other results do not explain: at least the expected minimum is a charge seen; less, or unknown figures, stay unknown", () => {
    const at = new Date('2026-11-26T12:00:00Z');
    assert.equal(judgeOutcome({ at: 0, monthSpend: 10, balance: 100 }, { at: 1, monthSpend: 14, balance: 96 }, 2.5, at).verdict, 'charge-seen');
    assert.deepEqual(judgeOutcome({ at: 0, monthSpend: 10, balance: 100 }, { at: 1, monthSpend: 10, balance: 100 }, 2.5, at), {
      at: at.toISOString(),
      verdict: 'unknown',
      keySpendRise: 0,
      knownSpend: 0,
      balanceChange: 0,
    });
    // Other results of the same time, known to the journal, explain their part of the rise.
    assert.equal(judgeOutcome({ at: 0, monthSpend: 10 }, { at: 1, monthSpend: 14 }, 2.5, at, 3).verdict, 'unknown', 'the rise is what the other results cost');
    assert.equal(judgeOutcome({ at: 0, monthSpend: 10 }, { at: 1, monthSpend: 17 }, 2.5, at, 3).verdict, 'charge-seen', 'a rise beyond them');
    assert.equal(judgeOutcome({ at: 0, monthSpend: 10 }, { at: 1, monthSpend: 11 }, 2.5, at).verdict, 'unknown', 'a rise smaller than this request could cost');
    assert.deepEqual(judgeOutcome(undefined, { at: 1, monthSpend: 11 }, 2.5, at), { at: at.toISOString(), verdict: 'unknown' });
  });

  it('counts as explained only the results recorded after the reading before the request: one recorded before it is in that reading already', async () => {
    const history = new HistoryStore(path.join(gw.dir, 'results-window.jsonl'), { load: () => resultsCode });
    const earlier = await history.add({
      model: 'aurora-1',
      request: { model: 'aurora-1', prompt: 'earlier' },
      files: ['a.png'],
      costRub: 3,
      jobId: 'job-earlier',
    });
    // The key's spend was read after the earlier result was recorded: it holds its 3 ₽ already.
    const readingAt = Date.parse(earlier.createdAt) + 1;
    await waitFor(() => Date.now() > readingAt);
    const logs: string[] = [];
    const checks = new OutcomeChecks({
      history,
      readingBefore: () => ({ at: readingAt, monthSpend: 13 }),
      // This request's 2.5 ₽ came after the reading.
      readNow: async () => ({ at: Date.now(), monthSpend: 15.5 }),
      deadlineMs: () => 10_000,
      log: (message) => logs.push(message),
    });
    const cut = async (jobId: string) => {
      await history.add({ model: 'aurora-1', request: { model: 'aurora-1', prompt: jobId }, files: [], jobId, failed: 'cut', outcomeUnknown: true });
      const before = logs.length;
      // Failed one deadline ago: checked at once.
      checks.watch({
        jobId,
        request: { model: 'aurora-1', prompt: jobId },
        model: 'aurora-1',
        charged: 'unknown',
        files: [],
        sentAt: new Date(readingAt).toISOString(),
        failedAt: new Date(Date.now() - 10_000).toISOString(),
        estimate: { expectedMin: 2.5 } as PaidFailure['estimate'],
        reason: 'cut',
      });
      await waitFor(() => logs.length > before, 5000);
      const index = await history.index();
      return index.find(index.findByJob(jobId)!.id)!.outcomeCheck!;
    };
    const first = await cut('job-cut');
    assert.equal(first.knownSpend, 0, 'the earlier result is in the first reading already');
    assert.equal(first.verdict, 'charge-seen');
    // A result recorded after the reading explains its part of the same rise: then it stays unknown.
    await history.add({ model: 'aurora-1', request: { model: 'aurora-1', prompt: 'meanwhile' }, files: ['b.png'], costRub: 2.5, jobId: 'job-meanwhile' });
    const second = await cut('job-cut-2');
    assert.equal(second.knownSpend, 2.5);
    assert.equal(second.verdict, 'unknown');
    checks.dispose();
    await history.close();
  });

  for (const charged of [true, false]) {
    it(`a request cut before its answer${charged ? ' that the gateway charged anyway' : ' that the gateway did not charge'}: recorded as perhaps paid, then "${charged ? 'charge-seen' : 'unknown'}" after the deadline`, async () => {
      const client = gw.newClient(undefined, { paidTimeoutMs: 600 });
      const account = new AccountModel(async () => client);
      await account.refresh();
      const history = new HistoryStore(path.join(gw.dir, `results-${charged}.jsonl`), { load: () => resultsCode });
      const logs: string[] = [];
      const checks = new OutcomeChecks({
        history,
        readingBefore: (time) => account.readingBefore(time),
        readNow: async () => (await account.refresh(), account.readingBefore(Number.POSITIVE_INFINITY)),
        // The emulator works 1 s on it; the check comes one deadline (4 s) after the failure, well past that.
        deadlineMs: () => 4000,
        log: (message) => logs.push(message),
      });
      // The gateway holds the request past the client's deadline; with charge-on-disconnect it charges anyway.
      gw.emu.state.armFault({ fault: 'latency', latencyMs: 1000 });
      if (charged) gw.emu.state.armFault({ fault: 'charge-on-disconnect' });
      const rig = newService(client, gw.models, path.join(gw.dir, `recovery-${charged}`));
      const record = new JobHistoryRecord(history, { request: { model: 'aurora-1', prompt: 'cut' }, model: 'aurora-1' });
      const error = await caught(() =>
        rig.service.run(
          { request: { model: 'aurora-1', prompt: 'cut', size: SMALL }, output: { directory: path.join(gw.dir, `out-${charged}`), pattern: '{slug}-{index}' } },
          { settleFailure: async (failure) => (await record.failed(failure), checks.watch(failure)) },
        ),
      );
      assert.ok(error instanceof GatewayError && error.outcomeUnknown && !error.charged, String(error));
      await waitFor(() => !!record.entryId);
      const entry = (await history.index()).find(record.entryId!)!;
      assert.equal(entry.outcomeUnknown, true);
      assert.match(entry.failed!, /did not answer within/);
      await waitFor(() => logs.length > 0, 10_000);
      const checked = (await history.index()).find(record.entryId!)!.outcomeCheck!;
      const cost = paidRequests(gw.emu)[0]!.chargedRub;
      assert.equal(cost > 0, charged);
      assert.equal(checked.verdict, charged ? 'charge-seen' : 'unknown');
      assert.equal(checked.keySpendRise, cost, 'the rise of the key spend is what the gateway charged');
      assert.match(logs[0]!, /other spending on the account moves both/);
      checks.dispose();
      await history.close();
    });
  }

  it('a 524 from a proxy while the gateway went on and charged: the agents\' cap keeps the reservation, a paid failure is recorded, then "charge-seen" after the deadline', async () => {
    const client = gw.newClient();
    const account = new AccountModel(async () => client);
    await account.refresh();
    const history = new HistoryStore(path.join(gw.dir, 'results-524.jsonl'), { load: () => resultsCode });
    const logs: string[] = [];
    const checks = new OutcomeChecks({
      history,
      readingBefore: (time) => account.readingBefore(time),
      readNow: async () => (await account.refresh(), account.readingBefore(Number.POSITIVE_INFINITY)),
      deadlineMs: () => 300,
      log: (message) => logs.push(message),
    });
    const cap = new SpendingCap(() => ({ maxCostPerCall: 50, maxCostPerSession: 100 }));
    gw.emu.state.armFault({ fault: 'status-after-charge', status: 524 });
    const rig = newService(client, gw.models, path.join(gw.dir, 'recovery-524'), { cap });
    const record = new JobHistoryRecord(history, { request: { model: 'aurora-1', prompt: 'behind a proxy' }, model: 'aurora-1' });
    const error = await caught(() =>
      rig.service.run(
        {
          request: { model: 'aurora-1', prompt: 'behind a proxy', size: SMALL },
          output: { directory: path.join(gw.dir, 'out-524'), pattern: '{slug}-{index}' },
        },
        { settleFailure: async (failure) => (await record.failed(failure), checks.watch(failure)) },
      ),
    );
    assert.ok(error instanceof GatewayError && error.outcomeUnknown && !error.charged, String(error));
    const reservation = gw.models.find((m) => m.id === 'aurora-1')!.max_price_per_image;
    assert.equal(cap.status().spentThisSession, reservation, 'the whole reservation stays counted');
    await waitFor(() => !!record.entryId);
    assert.equal((await history.index()).find(record.entryId!)!.outcomeUnknown, true);
    await waitFor(() => logs.length > 0, 10_000);
    const checked = (await history.index()).find(record.entryId!)!.outcomeCheck!;
    assert.equal(checked.verdict, 'charge-seen');
    assert.equal(checked.keySpendRise, paidRequests(gw.emu)[0]!.chargedRub);
    checks.dispose();
    await history.close();
  });
});
