// A prompt-file run whose window stops for a while (a debugger, another extension blocking the host,
// an overloaded machine) while its requests are in flight: its claim goes stale, and a window of
// another workspace that holds the same file takes the run over. Real processes, a real pause
// (SIGSTOP past the claim's stale time, then SIGCONT), the emulator's own record of what was paid.
import * as assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { type BatchLine, requestKey } from '../../src/core/requests/batchFile';
import type { LineOutcome } from '../../src/jobs/promptFiles/batch';
import { holderFileOf } from '../../src/core/files/lease';
import { type LineMark, LineMarks } from '../../src/jobs/promptFiles/lineMarks';
import { DEMO_KEYS, gatewaySuite, paidRequests, SMALL, waitFor } from './support/gateway';
import { promptFileWorld, type PromptFileReport, type PromptFileTask, runFileAsCommand, startFileRun } from './support/promptFileChild';

/** Short, so that the test waits seconds, not the lease's 10 s; every process of the test uses it. */
const STALE_MS = 3000;

const lineOf = (line: number): BatchLine => {
  const request = { model: 'sketch-mini', prompt: `tile ${line}`, size: SMALL };
  return { line, request, key: requestKey(request) };
};

describe('A prompt-file run paused past its claim', function () {
  this.timeout(120_000);
  const gw = gatewaySuite({ dir: 'gwi-paused-' });

  it('taken over while its requests are in flight: the other window holds them, the paused run sends no more once it wakes and says it was taken over; 0 lines paid twice, every paid image kept', async () => {
    const root = gw.dir;
    const claimsDir = path.join(root, 'global-storage', 'prompt-file-runs');
    const promptFile = path.join(root, 'prompts.jsonl');
    writeFileSync(promptFile, '');
    const lines = Array.from({ length: 6 }, (_, i) => lineOf(i + 1));
    // Two windows of two workspaces that hold the same prompt file: each its own results journal,
    // in-flight records, recovery and output folders; one global storage (the claims).
    const windowOf = (name: string, key: string, concurrency: number): PromptFileTask => {
      const storage = path.join(root, `workspace-${name}`);
      for (const sub of ['out', 'recovery', 'in-flight']) mkdirSync(path.join(storage, sub), { recursive: true });
      return {
        url: gw.emu.url,
        key,
        recoveryDir: path.join(storage, 'recovery'),
        inFlightDir: path.join(storage, 'in-flight'),
        resultsFile: path.join(storage, 'results.jsonl'),
        out: path.join(storage, 'out'),
        claimsDir,
        promptFile,
        lines,
        window: `window ${name}`,
        concurrency,
        staleMs: STALE_MS,
      };
    };
    const a = windowOf('A', DEMO_KEYS.unlimited, 2);
    const b = windowOf('B', DEMO_KEYS.budget, 1);
    const arrived = () => paidRequests(gw.emu).filter((r) => r.prompt !== undefined);
    const claimLock = () =>
      path.join(
        claimsDir,
        readdirSync(claimsDir).find((n) => n.endsWith('.lock'))!,
      );

    // A's first two lines take a while at the gateway.
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 4000, times: 2 });
    const runA = startFileRun(a);
    let reportB: Promise<PromptFileReport> | undefined;
    await waitFor(() => arrived().length === 2, 30_000);
    process.kill(runA.pid, 'SIGSTOP');
    try {
      // Stopped, A refreshes nothing: its claim goes stale.
      await waitFor(() => Date.now() - statSync(claimLock()).mtimeMs > STALE_MS + 500, 30_000);
      // B's lines take a while too, so that A wakes while B sends.
      gw.emu.state.armFault({ fault: 'latency', latencyMs: 1000, times: -1 });
      reportB = startFileRun(b).report;
      await waitFor(() => arrived().length === 3, 30_000);
    } finally {
      process.kill(runA.pid, 'SIGCONT');
    }
    const [fromA, fromB] = await Promise.all([runA.report, reportB]);
    assert.ok(fromA.ok && fromB?.ok, JSON.stringify([fromA, fromB]).slice(0, 3000));
    const outcomeA = fromA.outcome;
    const outcomeB = fromB.outcome;
    const lineOfA = (n: number) => outcomeA.lines.find((l) => l.line === n)!;
    const lineOfB = (n: number) => outcomeB.lines.find((l) => l.line === n)!;
    const describe = (o: LineOutcome) => `${o.line} ${o.status} ${o.error ?? ''}`;

    // The gateway's own record: no line paid twice, and A sent nothing after it woke.
    const paid = arrived();
    const perPrompt = new Map<string, number>();
    for (const r of paid) perPrompt.set(r.prompt!, (perPrompt.get(r.prompt!) ?? 0) + 1);
    assert.deepEqual(
      [...perPrompt].filter(([, n]) => n > 1),
      [],
      'no line paid twice',
    );
    assert.deepEqual(
      paid
        .filter((r) => r.key === 'demo-unlimited')
        .map((r) => r.prompt)
        .sort(),
      ['tile 1', 'tile 2'],
      "A's requests: the two in flight when it stopped",
    );

    // A: its lines in flight went on to their end and were saved; the others were not sent; it says it was taken over.
    for (const n of [1, 2]) {
      assert.equal(lineOfA(n).status, 'done', describe(lineOfA(n)));
      assert.ok(lineOfA(n).files.length && lineOfA(n).files.every((f) => existsSync(f)), `line ${n}: its paid image is on disk`);
    }
    for (const n of [3, 4, 5, 6]) {
      const line = lineOfA(n);
      assert.equal(line.status, 'not-sent', describe(line));
      assert.ok(line.takenOver || /meanwhile by another run/.test(line.error ?? ''), describe(line));
    }
    assert.ok(outcomeA.takenOver, 'the outcome of A says its run was taken over');
    assert.match(outcomeA.takenOver.message, /prompts\.jsonl: this window was paused while it ran the file/);
    assert.match(outcomeA.takenOver.message, /Nothing was sent twice/);
    assert.ok(
      outcomeA.lines.some((l) => l.takenOver),
      'at least the lines A had not reached are not sent because of the takeover',
    );

    // B: it held A's lines in flight (a window of another workspace, from the marks beside the claim), and sent the rest once.
    for (const n of [1, 2]) {
      assert.equal(lineOfB(n).status, 'not-sent', describe(lineOfB(n)));
      assert.match(lineOfB(n).error ?? '', /in flight in another window \(window A\)/);
    }
    for (const n of [3, 4, 5, 6]) assert.ok(lineOfB(n).status === 'done' || /meanwhile by another run/.test(lineOfB(n).error ?? ''), describe(lineOfB(n)));
    assert.equal(outcomeB.takenOver, undefined);

    // Every paid image is on disk (in a workspace, or the recovery folder).
    for (const prompt of perPrompt.keys()) {
      const done = [...outcomeA.lines, ...outcomeB.lines].filter((l) => l.prompt === prompt && l.status === 'done');
      assert.equal(done.length, 1, `${prompt}: paid once, done once`);
      assert.ok(done[0]!.files.length && done[0]!.files.every((f) => existsSync(f)), `${prompt}: its image is on disk`);
    }

    // Beside the claim, A's lines ended as done, by A: a third window would skip them.
    const marksFile = path.join(
      claimsDir,
      readdirSync(claimsDir).find((n) => n.endsWith('.lines.jsonl'))!,
    );
    const marks = await new LineMarks(marksFile, { id: 'reader', window: 'test' }).read();
    for (const n of [1, 2]) {
      const mark = [...marks.values()].find((m) => m.line === n);
      assert.equal(mark?.state, 'done', JSON.stringify(mark));
      assert.equal(mark?.window, 'window A');
    }
  });

  it('a run killed with its requests in flight: a window of another workspace holds those lines as perhaps charged, and sends them only when told', async () => {
    const root = path.join(gw.dir, 'killed');
    const claimsDir = path.join(root, 'claims');
    const promptFile = path.join(root, 'prompts.jsonl');
    mkdirSync(claimsDir, { recursive: true });
    writeFileSync(promptFile, '');
    const windowOf = (name: string): PromptFileTask => {
      const storage = path.join(root, `workspace-${name}`);
      for (const sub of ['out', 'recovery', 'in-flight']) mkdirSync(path.join(storage, sub), { recursive: true });
      return {
        url: gw.emu.url,
        key: DEMO_KEYS.unlimited,
        recoveryDir: path.join(storage, 'recovery'),
        inFlightDir: path.join(storage, 'in-flight'),
        resultsFile: path.join(storage, 'results.jsonl'),
        out: path.join(storage, 'out'),
        claimsDir,
        promptFile,
        lines: [1, 2, 3].map(lineOf),
        window: `window ${name}`,
        concurrency: 1,
        staleMs: STALE_MS,
      };
    };
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 60_000, times: 1 });
    const before = paidRequests(gw.emu).length;
    const runA = startFileRun(windowOf('A'));
    const gone = runA.report.catch(() => undefined);
    await waitFor(() => paidRequests(gw.emu).filter((r) => r.prompt !== undefined).length === before + 1, 30_000);
    process.kill(runA.pid, 'SIGKILL');
    await gone;
    gw.emu.state.clearFaults();
    const lock = path.join(
      claimsDir,
      readdirSync(claimsDir).find((n) => n.endsWith('.lock'))!,
    );
    await waitFor(() => Date.now() - statSync(lock).mtimeMs > STALE_MS + 500, 30_000);

    const b = windowOf('B');
    const fromB = await runFileAsCommand(b);
    const first = fromB.lines.find((l) => l.line === 1)!;
    assert.equal(first.status, 'outcome-unknown');
    assert.match(first.error ?? '', /in flight in another window \(window A\) when that run stopped: it may have been charged/);
    assert.deepEqual(
      fromB.lines.filter((l) => l.line > 1).map((l) => l.status),
      ['done', 'done'],
    );
    assert.equal(paidRequests(gw.emu).filter((r) => r.prompt === 'tile 1').length, 1, 'line 1 was not paid again');
    const told = await runFileAsCommand({ ...b, resendInterrupted: true });
    assert.equal(told.lines.find((l) => l.line === 1)!.status, 'done', 'sent again when told');
    assert.equal(paidRequests(gw.emu).filter((r) => r.prompt === 'tile 1').length, 2);
  });

  it('a claim lost where its refresh cannot see it stops the run at the next confirm: that line is marked in flight, not sent, then marked not charged; no later line is tried', async () => {
    const task = promptFileWorld(path.join(gw.dir, 'fence'), { url: gw.emu.url, key: DEMO_KEYS.unlimited }, [1, 2, 3].map(lineOf), { staleMs: STALE_MS });
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 800, times: 1 });
    const running = runFileAsCommand(task);
    const before = paidRequests(gw.emu).length;
    await waitFor(() => paidRequests(gw.emu).length === before + 1, 20_000);
    // Another process took the claim over, its folder made again at the same inode: only the holder's token tells (the refresh timer looks at the time alone).
    const lock = readdirSync(task.claimsDir).find((n) => n.endsWith('.lock'))!;
    writeFileSync(holderFileOf(path.join(task.claimsDir, lock)), 'another-process');
    const outcome = await running;
    assert.deepEqual(
      outcome.lines.map((l) => [l.line, l.status, l.takenOver ?? false]),
      [
        [1, 'done', false],
        [2, 'not-sent', true],
        [3, 'not-sent', true],
      ],
    );
    assert.equal(paidRequests(gw.emu).length, before + 1, 'only the line in flight was sent');
    assert.ok(outcome.takenOver);
    const marksFile = path.join(
      task.claimsDir,
      readdirSync(task.claimsDir).find((n) => n.endsWith('.lines.jsonl'))!,
    );
    const written = readFileSync(marksFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as LineMark)
      .map((m) => `${m.line} ${m.state}`);
    // Marked before the confirm that refused it, and ended as not charged: no window holds it.
    assert.deepEqual(written, ['1 in-flight', '1 done', '2 in-flight', '2 not-charged']);
  });

  it('the marks beside a claim: a record cut by a crash is skipped and the next one stands on its own line; a compaction keeps the newest mark of each line and never runs while another run has a line in flight', async () => {
    const file = path.join(gw.dir, 'marks', 'run-x.lines.jsonl');
    mkdirSync(path.dirname(file), { recursive: true });
    const marks = new LineMarks(file, { id: 'run-1', window: 'window A' });
    const [one, two, three] = [1, 2, 3].map(lineOf);
    await marks.write(one!, { state: 'in-flight', job: 'job-1' });
    await marks.write(one!, { state: 'done', files: ['/w/one.png'] });
    appendFileSync(file, '\n{"line":2,"key":"cut sh');
    await marks.write(two!, { state: 'paid-without-images', outcomeUnknown: true, error: 'the connection broke' });
    const read = await new LineMarks(file, { id: 'reader', window: 'test' }).read();
    assert.deepEqual(
      [...read.values()].map((m) => [m.line, m.state]),
      [
        [1, 'done'],
        [2, 'paid-without-images'],
      ],
    );

    // Large: many runs of the file. A dead run's line in flight is kept (it may have been charged).
    const old = (line: number, state: LineMark['state'], pid: number): string =>
      `\n${JSON.stringify({ line, key: lineOf(line).key, state, run: `old-${pid}`, pid, window: 'old', at: new Date().toISOString() })}\n`;
    const gone = 2 ** 22 + 12_345;
    appendFileSync(file, Array.from({ length: 3000 }, (_, i) => old(1 + (i % 3), 'not-charged', gone)).join('') + old(3, 'in-flight', gone));
    const sizeBefore = statSync(file).size;
    const newest = await marks.read();
    assert.ok(await marks.compact([one!, two!, three!]), 'compacted');
    assert.ok(statSync(file).size < sizeBefore / 100);
    assert.deepEqual(await new LineMarks(file, { id: 'reader', window: 'test' }).read(), newest);
    assert.equal(newest.get(`3\0${three!.key}`)?.state, 'in-flight');

    // Another run with a line in flight now (a live process): left alone, it may still append.
    appendFileSync(file, Array.from({ length: 3000 }, (_, i) => old(1 + (i % 2), 'not-charged', gone)).join('') + old(2, 'in-flight', process.ppid));
    assert.equal(await marks.compact([one!, two!, three!]), false);
  });
});
