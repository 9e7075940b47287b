// The actors of the several-actors soak that a pause stops past the stale time of their lease (a
// window's extension host blocked by another extension, under a debugger, on an overloaded machine):
// - the prompt file's run that got the claim is stopped (SIGSTOP) while the gateway holds its
//   requests; once its claim is stale, a run of the same file from another workspace (its own
//   results journal and in-flight records, the same claims) takes it over; then the first one wakes;
// - a journal writer stops itself inside a compaction; another window of its workspace takes the
//   stale lock over and records a paid result; then the writer wakes and finishes its compaction.
// Every wait is on a fact: the emulator's request log, the kernel's state of a process, the leases'
// times on disk, the runs' own reports. Where the seed puts each pause is in the plans.
import { writeFileSync } from 'node:fs';
import type { HistoryEntry } from '../../../src/jobs/results/history';
import * as resultsCode from '../../../src/jobs/results/resultsBundle';
import type { RecordedRequest } from '../../../tools/emulator/state';
import { type CompactingWriterReport, type CompactingWriterTask, startCompactingWriter } from './compactingWriter';
import type { EmulatorProcess } from './emulatorProcess';
import { isStopped, leasesStale, resumeProcess, stopProcess, until } from './pause';
import type { RequestLogWatch } from './severalActors';
import { startWatchedFileRun, type WatchedFileRun, type WatchedFileTask } from './watchedFileRun';

/** The stale time of every lease of the soak (claims, and the journal the writer compacts): short, so a pause passes it soon. */
export const SOAK_STALE_MS = 3_000;

/** Processes started here and not yet ended: a test that fails midway ends them (stopped ones too). */
const started = new Set<{ kill(): void }>();

export function endStarted(): void {
  for (const child of started) child.kill();
  started.clear();
}

export function startFileRun(task: WatchedFileTask): WatchedFileRun {
  const run = startWatchedFileRun(task);
  started.add(run);
  void run.report.finally(() => started.delete(run)).catch(() => undefined);
  return run;
}

/** Where the seed stops the run that holds the claim, how the other workspace names the file, and when the run wakes. */
export interface ClaimPausePlan {
  /** Stopped once at least this many of its requests reached the gateway, at a moment when it waits on all it may have in flight. */
  afterReached: number;
  takerPath: 'a link in its folder' | 'the same path';
  /** Woken once the taker's request number `takerSent` left, or once the taker ended. */
  resume: { takerSent: number } | 'after the taker ended';
}

export interface ClaimPause {
  runner: WatchedFileRun;
  taker: WatchedFileRun;
  reachedAtPause: number;
  heldAtPause: number;
  /** Moments that looked quiet but were not once the run had stopped (it was woken at once, and stopped at a later one). */
  missedMoments: number;
  stoppedMs: number;
  resumedAt: number;
}

/**
 * The run of `starts` that sends is stopped while the gateway holds as many of its requests as it
 * runs at once (so it is in no step between a check and a send: each of its workers waits on an
 * answer). Once its claim is stale, `takerTask` starts; the stopped run wakes as the plan says.
 */
export async function takeOverPausedRun(o: {
  starts: WatchedFileRun[];
  takerTask: WatchedFileTask;
  plan: ClaimPausePlan;
  emu: EmulatorProcess;
  requestLog: RequestLogWatch;
  isFileRequest: (r: RecordedRequest) => boolean;
}): Promise<ClaimPause> {
  const runner = await new Promise<WatchedFileRun | undefined>((resolve) => {
    let refused = 0;
    for (const run of o.starts)
      void run.until((events) => events.length > 0).then((sends) => (sends ? resolve(run) : ++refused === o.starts.length && resolve(undefined)));
  });
  if (!runner) throw new Error('no start of the prompt file sent a request');
  const concurrency = o.takerTask.concurrency;
  const reached = (log: readonly RecordedRequest[]) => log.filter((r) => o.isFileRequest(r) && r.reservedRub > 0);
  const held = (log: readonly RecordedRequest[]) => reached(log).filter((r) => r.status === 0 && !r.clientAborted);
  let missedMoments = 0;
  let log: readonly RecordedRequest[];
  for (;;) {
    const quiet = (l: readonly RecordedRequest[]) => reached(l).length >= o.plan.afterReached && held(l).length === concurrency;
    if (!(await o.requestLog.until(quiet, runner.report)))
      throw new Error(`${runner.window} ended before it had ${concurrency} requests held after ${o.plan.afterReached}`);
    await stopProcess(runner.pid);
    // Read while it is stopped: held now, so held when it stopped (the emulator sends no answer's headers while it holds one).
    log = await o.emu.get('requests');
    if (quiet(log)) break;
    missedMoments++;
    resumeProcess(runner.pid);
  }
  const stoppedAt = Date.now();
  await leasesStale(o.takerTask.claimsDir, o.takerTask.claimStaleMs);
  const taker = startFileRun(o.takerTask);
  if (o.plan.resume === 'after the taker ended') await taker.report;
  else {
    const sent = o.plan.resume.takerSent;
    await taker.until((events) => events.filter((e) => e.event === 'sent').length >= sent);
  }
  const resumedAt = resumeProcess(runner.pid);
  await Promise.all([runner.report, taker.report]);
  return { runner, taker, reachedAtPause: reached(log).length, heldAtPause: held(log).length, missedMoments, stoppedMs: resumedAt - stoppedAt, resumedAt };
}

/** What the stopped run did after it woke, by its own account: the prompts of the requests it began to send. */
export const sentAfterWaking = (pause: ClaimPause) => pause.runner.requests.filter((e) => e.event === 'sent' && e.at >= pause.resumedAt).map((e) => e.prompt);

/** The same by the gateway's record: requests of the file that arrived after the run woke, of lines the taker did not send. */
export function reachedAfterWaking(pause: ClaimPause, requests: readonly RecordedRequest[], isFileRequest: (r: RecordedRequest) => boolean): string[] {
  const takers = new Set(pause.taker.requests.filter((e) => e.event === 'sent').map((e) => e.prompt));
  return requests.filter((r) => isFileRequest(r) && Date.parse(r.at) >= pause.resumedAt && !takers.has(r.prompt ?? '')).map((r) => `${r.id} (${r.prompt})`);
}

/** A workspace's results journal after long use: one earlier result changed `lines` times (a line each), written before any process opens it. */
export function longJournal(file: string, entry: HistoryEntry, lines: number): void {
  const text = Array.from({ length: lines }, (_, i) => resultsCode.journalLine({ ...entry, costRub: (i + 1) / 100 })).join('\n');
  writeFileSync(file, `${text}\n`);
}

export interface CompactionPause<T> {
  writer: CompactingWriterReport;
  /** What the other window recorded while the writer was stopped. */
  appended: T;
  stoppedMs: number;
}

/**
 * The writer stops itself inside its compaction (holding the journal's lease); then `append` runs (a
 * window's paid job, whose records wait until the lease is stale and take it over) and, once it has
 * recorded, the writer is woken and finishes.
 */
export async function appendWhileCompactionPaused<T>(task: CompactingWriterTask, append: () => Promise<T>): Promise<CompactionPause<T>> {
  const writer = startCompactingWriter(task);
  started.add(writer);
  const ended = writer.report.then(
    () => 'reported',
    (error: unknown) => String(error),
  );
  let early: string | undefined;
  void ended.then((how) => (early ??= how));
  await until(async () => early !== undefined || (await isStopped(writer.pid)), 'the writer to stop inside its compaction', 60_000);
  if (early) throw new Error(`the writer ended before its compaction paused: ${early}`);
  const stoppedAt = Date.now();
  const appended = await append();
  const resumedAt = resumeProcess(writer.pid);
  const report = await writer.report;
  started.delete(writer);
  return { writer: report, appended, stoppedMs: resumedAt - stoppedAt };
}

/**
 * What the compacted journal lost, by a fresh read of it: the long journal's earlier result, each of
 * the writer's results in its last state, and the result the other window recorded during the pause.
 */
export function compactionLost(
  writer: CompactingWriterReport,
  earlier: { id: string; costRub: number },
  appendedJob: string | undefined,
  entries: readonly HistoryEntry[],
): string[] {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const lost = [[earlier.id, earlier.costRub] as const, ...Object.entries(writer.last)].flatMap(([id, cost]) => {
    const entry = byId.get(id);
    if (!entry) return [`the compacted journal lost result ${id}`];
    return entry.costRub === cost ? [] : [`result ${id}: its last state (cost ${cost}) is lost, the journal has ${entry.costRub}`];
  });
  if (!entries.some((e) => e.jobId !== undefined && e.jobId === appendedJob && !e.failed))
    lost.push(`the result recorded during the pause (job ${appendedJob}) is not in the compacted journal`);
  return lost;
}

const tally = (items: readonly string[]) =>
  Object.entries(items.reduce<Record<string, number>>((t, k) => ({ ...t, [k]: (t[k] ?? 0) + 1 }), {}))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

/** How a run ended, in a few words: its lines by status, or its error. */
export async function runSummary(run: WatchedFileRun): Promise<string> {
  const report = await run.report;
  if (!report.ok) return report.refused ? 'refused' : `failed: ${report.error?.message}`;
  const shown = (l: (typeof report.outcome.lines)[number]) =>
    l.takenOver ? 'not sent (taken over)' : l.status === 'not-sent' && l.error ? 'held (in flight or paid elsewhere)' : l.status;
  return `lines ${tally(report.outcome.lines.map(shown))}`;
}

/** The figures' lines of the paused actors. */
export async function pausedReport(
  claim: ClaimPause,
  plan: ClaimPausePlan,
  reachedAfter: readonly string[],
  compaction: CompactionPause<unknown>,
  pauseAt: string,
): Promise<string[]> {
  const report = await claim.runner.report;
  const takenOver = report.ok ? report.outcome.takenOver : undefined;
  const resume = plan.resume === 'after the taker ended' ? 'after the taker ended' : `once the taker's request ${plan.resume.takerSent} left`;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return [
    `      paused past the stale time (${seconds(SOAK_STALE_MS)}): ${claim.runner.window} stopped (SIGSTOP) with ${claim.reachedAtPause} requests reached and ${claim.heldAtPause} held by the gateway${claim.missedMoments ? ` (at its ${claim.missedMoments + 1}th quiet-looking moment: the ones before were not, once it had stopped)` : ''}, for ${seconds(claim.stoppedMs)}; ${claim.taker.window} (another workspace, the file by ${plan.takerPath}) took the claim over: ${await runSummary(claim.taker)}`,
    `      ${claim.runner.window} woke ${resume}: sent ${sentAfterWaking(claim).length} requests after waking (the gateway got ${reachedAfter.length} of its requests after then); ${await runSummary(claim.runner)}; told: ${takenOver ? `"${takenOver.message}"` : 'nothing of a takeover'}`,
    `      a writer stopped itself in its compaction (${pauseAt}) for ${seconds(compaction.stoppedMs)}, after ${compaction.writer.updates} changes; another window took the stale lock over and recorded a paid result; the writer's log: ${compaction.writer.warnings.map((w) => w.replace(/ \(.*/s, '')).join(' / ') || 'nothing'}`,
  ];
}
