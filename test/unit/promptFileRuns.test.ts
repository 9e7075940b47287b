// One prompt file, several runs at once (a double click, two windows, an agent beside a person): the
// file is claimed across processes for the whole run, each line is checked against the results journal
// right before it is sent, and a line that was paid for without its images is held, not paid again.
import * as assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { type BatchLine, requestKey } from '../../src/core/requests/batchFile';
import { planResume } from '../../src/jobs/promptFiles/batch';
import { HistoryStore } from '../../src/jobs/results/history';
import { recordRecovered, recordResult } from '../../src/jobs/jobRecord';
import { PromptFileClaims, RunInProgressError } from '../../src/jobs/promptFiles/promptFileClaim';
import { listRecoverable, moveRecoverable } from '../../src/core/files/recoveryFolder';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { caught, gatewaySuite, paidRequests, SMALL, waitFor } from './support/gateway';
import { promptFileWorld, type PromptFileTask, runFileAsCommand, runFileInProcess } from './support/promptFileChild';
import { fork } from 'node:child_process';

const lineOf = (line: number, prompt: string, extra: Record<string, unknown> = {}): BatchLine => {
  const request = { model: 'sketch-mini', prompt, size: SMALL, ...extra };
  return { line, request, key: requestKey(request) };
};

describe('Prompt files with several runs at once', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ dir: 'gwi-runs-' });
  let world: PromptFileTask;
  let n = 0;

  beforeEach(() => {
    world = promptFileWorld(
      path.join(gw.dir, `w${++n}`),
      { url: gw.emu.url, key: gw.emu.keys.unlimited },
      Array.from({ length: 6 }, (_, i) => lineOf(i + 1, `tile ${i + 1}`)),
      { concurrency: 2 },
    );
  });

  it('started twice at once by two processes: one run sends each line once, the other is refused at once and names it', async () => {
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 700, times: -1 });
    const [a, b] = await Promise.all([runFileInProcess(world), runFileInProcess({ ...world, window: 'window B' })]);
    const ran = [a, b].filter((r) => r.ok);
    const refused = [a, b].flatMap((r) => (!r.ok && r.refused ? [r.refused] : []));
    assert.equal(ran.length, 1, JSON.stringify([a, b]).slice(0, 2000));
    assert.equal(refused.length, 1);
    const winner = a.ok ? 'window A' : 'window B';
    assert.equal(refused[0]!.window, winner, 'the refusal names the run in progress');
    assert.match(refused[0]!.message, /prompts\.jsonl is already being run: started at .+ in window [AB]/);
    assert.match(refused[0]!.message, /Nothing was sent by this start/);
    const paid = paidRequests(gw.emu);
    assert.equal(paid.length, 6, `6 lines, ${paid.length} paid requests`);
    assert.equal(new Set(paid.map((r) => r.fingerprint)).size, 6, 'no line paid twice');
    // The file is free again: a third start resumes and pays nothing.
    const again = await runFileAsCommand(world);
    assert.deepEqual(
      again.lines.map((l) => l.status),
      Array(6).fill('skipped'),
    );
    assert.equal(paidRequests(gw.emu).length, 6);
  });

  it('a claim whose process was killed is taken over once it is stale; until then a start is refused', async () => {
    const claims = new PromptFileClaims(world.claimsDir, () => undefined, 1000);
    const holder = fork(path.join(__dirname, 'support', 'claimHolder.js'), [world.claimsDir, world.promptFile], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise((resolve) => holder.once('message', resolve));
    const refused = await caught(() => claims.claim(world.promptFile, { window: 'window B', startedBy: 'ui' }));
    assert.ok(refused instanceof RunInProgressError, String(refused));
    assert.equal(refused.owner?.window, 'a killed window');
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    let taken: Awaited<ReturnType<PromptFileClaims['claim']>> | undefined;
    for (const until = Date.now() + 10_000; !taken && Date.now() < until;) {
      taken = await claims.claim(world.promptFile, { window: 'window B', startedBy: 'ui' }).catch(() => undefined);
      if (!taken) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(taken, 'taken over after the stale time');
    await taken.release();
  });

  it('a line another writer finished meanwhile is skipped right before it is sent, and reported as such', async () => {
    world.concurrency = 1;
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 300, times: -1 });
    const other = new HistoryStore(world.resultsFile, { load: () => resultsCode });
    const done = path.join(world.out, 'line-3-by-another-window.png');
    const running = runFileAsCommand(world);
    // While line 1 is at the gateway, another window records line 3 as done (its image on disk).
    await waitFor(() => paidRequests(gw.emu).length === 1, 10_000);
    writeFileSync(done, 'png');
    await recordResult(
      other,
      { request: world.lines[2]!.request, model: 'sketch-mini', batch: { file: world.promptFile, line: 3, key: world.lines[2]!.key } },
      { files: [done], model: 'sketch-mini', usage: { cost_rub: 1 } },
    );
    const outcome = await running;
    const third = outcome.lines.find((l) => l.line === 3)!;
    assert.equal(third.status, 'skipped');
    assert.equal(third.meanwhile, true);
    assert.deepEqual(third.files, [done]);
    assert.equal(paidRequests(gw.emu).length, 5, 'line 3 was not paid again');
    assert.equal(resultsCode.batchReport(world.promptFile, outcome.lines, new Date(), 'en').match(/done meanwhile by another run/g)?.length, 1);
    await other.close();
  });

  it('a line charged but whose answer could not be read is held by the next run: named with where its answer waits, sent only when told', async () => {
    world.concurrency = 1;
    world.lines = world.lines.slice(0, 3);
    gw.emu.state.armFault({ fault: 'truncated-json', times: 1 });
    const first = await runFileAsCommand(world);
    assert.deepEqual(
      first.lines.map((l) => l.status),
      ['outcome-unknown', 'done', 'done'],
    );
    assert.equal(first.lines[0]!.recovered, true);
    const paidBefore = paidRequests(gw.emu).length;
    assert.equal(paidBefore, 3);
    assert.ok(paidRequests(gw.emu)[0]!.chargedRub > 0, 'the gateway charged the line whose answer was cut');

    const again = await runFileAsCommand(world);
    const held = again.lines.find((l) => l.line === 1)!;
    // Its answer had arrived (the gateway charged): held as charged, not as unknown.
    assert.equal(held.status, 'failed');
    assert.match(held.error!, /its last request was charged, and its images did not arrive \(.+\): not sent again\. What arrived waits in the recovery folder/);
    assert.ok(
      held.files.some((f) => f.endsWith('-answer.json') && existsSync(f)),
      `the kept answer is named: ${held.files.join(', ')}`,
    );
    assert.equal(paidRequests(gw.emu).length, paidBefore, 'nothing sent by arguments without resendInterrupted');
    assert.match(resultsCode.batchReport(world.promptFile, again.lines, new Date(), 'en'), /-answer&#46;json\]\(/, 'the report links the kept answer');

    const told = await runFileAsCommand({ ...world, resendInterrupted: true });
    assert.equal(told.lines.find((l) => l.line === 1)!.status, 'done');
    assert.equal(paidRequests(gw.emu).length, paidBefore + 1);
  });

  it('a line whose image came as an address that could not be downloaded is paid: the next run skips it (it waits for Recover), and pays nothing', async () => {
    world.concurrency = 1;
    world.lines = world.lines.slice(0, 2);
    gw.emu.state.setForms(['url-images']);
    gw.emu.state.armFault({ fault: 'download-404', times: 1 });
    const first = await runFileAsCommand(world);
    assert.deepEqual(
      first.lines.map((l) => [l.status, l.recovered ?? false]),
      [
        ['done', true],
        ['done', false],
      ],
    );
    const paid = paidRequests(gw.emu).length;
    const again = await runFileAsCommand(world);
    assert.deepEqual(
      again.lines.map((l) => [l.line, l.status, l.skipReason]),
      [
        [1, 'skipped', 'recovery'],
        [2, 'skipped', 'files'],
      ],
    );
    assert.equal(paidRequests(gw.emu).length, paid, 'the line waiting for its download was not paid again');
  });

  it("Recover records where it moved a line's JPEG: the next run finds it there and pays nothing", async () => {
    world.concurrency = 1;
    world.lines = [lineOf(1, 'a jpeg line', { model: 'aurora-1', output_format: 'jpeg' })];
    // A file where the output folder should be: the paid image stays in the recovery folder.
    const blocked = path.join(path.dirname(world.out), 'blocked');
    writeFileSync(blocked, 'not a folder');
    const first = await runFileAsCommand({ ...world, out: blocked });
    assert.equal(first.lines[0]!.recovered, true);
    const [waiting] = (await listRecoverable(world.recoveryDir)).filter((j) => j.files.some((f) => !f.kind));
    assert.ok(waiting, 'the image waits in the recovery folder');
    assert.equal(waiting.journal, world.resultsFile, 'the manifest names the journal of its entry');
    // Recover Unsaved Images: the files move into the workspace, and the journal learns where.
    const moved = await moveRecoverable(waiting, world.out);
    const history = new HistoryStore(world.resultsFile, { load: () => resultsCode });
    const images = waiting.files.filter((f) => f.kind !== 'answer');
    assert.ok(
      await recordRecovered(
        history,
        waiting.jobId,
        moved.images.map((to, i) => ({ from: images[i]!.path, to, image: true, whole: !images[i]!.incomplete })),
      ),
    );
    assert.match(moved.images[0]!, /\.jpg$/);
    assert.deepEqual(
      planResume(world.promptFile, world.lines, await history.index(), existsSync).skipped.map((l) => [l.line, l.skipReason, l.files]),
      [[1, 'files', moved.images]],
    );
    await history.close();
    const paidBefore = paidRequests(gw.emu).length;
    const again = await runFileAsCommand(world);
    assert.equal(again.lines[0]!.status, 'skipped');
    assert.equal(paidRequests(gw.emu).length, paidBefore, 'the JPEG line was not paid again');
  });
});
