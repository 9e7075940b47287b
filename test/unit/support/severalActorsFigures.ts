// The invariants of the soak with several actors, read against the emulator's own record (each paid
// request's reservation, charge, fingerprint and image hashes), the files on disk, and fresh reads
// of the results journals. Each figure lists what broke it, so a failure names the request.
import { fromKopecks, toKopecks } from '../../../src/core/money/cost';
import { moneyTold } from '../../../src/core/gateway/moneyTold';
import type { LineOutcome } from '../../../src/jobs/promptFiles/batch';
import type { HistoryEntry } from '../../../src/jobs/results/history';
import type { RecordedRequest } from '../../../tools/emulator/state';
import type { McpSession, PersonOutcome } from './severalActors';

export type Actor = 'person' | 'file' | 'agent';

/** A message that says the request cost nothing or never left. */
export const SAYS_NOTHING_CHARGED = /nothing was (charged|sent)|not charged|before the request was sent/i;

export interface SoakRecord {
  /** The emulator's log of the generation and edit endpoints. */
  requests: RecordedRequest[];
  actorOf: (prompt: string | undefined) => Actor | undefined;
  person: PersonOutcome[];
  /**
   * Each start of the prompt file that ran (one of the two started at once, then the run that took its
   * claim over from another workspace): its lines' outcomes, a fresh read of the results journal it
   * wrote, and the prompts of the requests it began to send (by its own account).
   */
  fileRuns: FileRun[];
  /** The refused start's message. */
  fileRefusal?: string;
  agent: McpSession;
  /** Workspace-relative paths of the agent's files resolve against this. */
  agentFile: (relative: string) => string;
  sessionCap: number;
  /** A fresh read of every results journal the actors wrote (each workspace's), the results of no request aside. */
  journal: HistoryEntry[];
  /** SHA-256 of every image file in the workspace and the recovery folder, with how many files have it. */
  onDisk: Map<string, number>;
  exists: (file: string) => boolean;
  initialBalance: number;
  topUps: number[];
  emulatorBalance: number;
  accountBalance?: number;
}

export interface FileRun {
  window: string;
  lines: LineOutcome[];
  journal: HistoryEntry[];
  sent: ReadonlySet<string>;
}

export interface SoakFigures {
  requests: Record<Actor, { reached: number; charged: number; returned: number }>;
  /** Requests whose upload was cut before the gateway read it (no prompt recorded). */
  cutUploads: number;
  paidTwice: string[];
  sentTwice: string[];
  fingerprints: Record<'person' | 'file', number>;
  deliveredImages: number;
  keptImages: number;
  /** Charged and sent to a job cancelled before its answer arrived: it was told the outcome is unknown. */
  deliveredToGoneClient: number;
  lost: string[];
  claims: number;
  falseNothingCharged: string[];
  /** The person's failures whose request the gateway held, told neither "charged" nor "may have been charged". */
  untold: string[];
  agent: { charged: number; peak: number; spentByServer: number; minRemaining: number; calls: number; refused: boolean; overCap: string[] };
  ledger: { expected: number; emulator: number };
  journal: { entries: number; results: number; paidFailures: number; unknown: number; byPerson: number; byFile: number; mismatches: string[] };
  outcomeChecks: { unknown: number; checked: number; chargeSeen: number; chargeSeenUncharged: number };
}

const sum = (values: number[]) => fromKopecks(values.reduce((total, v) => total + toKopecks(v), 0));

export function soakFigures(record: SoakRecord): SoakFigures {
  const { requests, actorOf } = record;
  const of = (actor: Actor) => requests.filter((r) => actorOf(r.prompt) === actor);
  const counts = (actor: Actor) => {
    const mine = of(actor);
    return {
      reached: mine.filter((r) => r.reservedRub > 0).length,
      charged: mine.filter((r) => r.chargedRub > 0).length,
      returned: mine.filter((r) => r.reservedRub > 0 && r.chargedRub === 0).length,
    };
  };
  const figures: SoakFigures = {
    requests: { person: counts('person'), file: counts('file'), agent: counts('agent') },
    cutUploads: requests.filter((r) => r.prompt === undefined).length,
    paidTwice: [],
    sentTwice: [],
    fingerprints: { person: 0, file: 0 },
    deliveredImages: 0,
    keptImages: 0,
    deliveredToGoneClient: 0,
    lost: [],
    claims: 0,
    falseNothingCharged: [],
    untold: [],
    agent: agentFigures(record),
    ledger: {
      expected: fromKopecks(toKopecks(record.initialBalance) + toKopecks(sum(record.topUps)) - toKopecks(sum(requests.map((r) => r.chargedRub)))),
      emulator: record.emulatorBalance,
    },
    journal: journalFigures(record),
    outcomeChecks: outcomeCheckFigures(record),
  };
  for (const actor of ['person', 'file'] as const) {
    const byFingerprint = new Map<string, RecordedRequest[]>();
    for (const r of of(actor)) if (r.fingerprint) byFingerprint.set(r.fingerprint, [...(byFingerprint.get(r.fingerprint) ?? []), r]);
    figures.fingerprints[actor] = byFingerprint.size;
    for (const [fingerprint, same] of byFingerprint) {
      const name = `${actor} ${same[0]!.prompt} (${fingerprint.slice(0, 8)}): ${same.map((r) => r.id).join(', ')}`;
      if (same.filter((r) => r.chargedRub > 0).length > 1) figures.paidTwice.push(name);
      if (same.filter((r) => r.reservedRub > 0).length > 1) figures.sentTwice.push(name);
    }
  }
  countKeptImages(record, figures);
  checkReported(record, figures);
  checkClaims(record, figures);
  return figures;
}

/** Every image the gateway charged for and sent whole is in the workspace or the recovery folder, byte-equal. */
function countKeptImages(record: SoakRecord, figures: SoakFigures): void {
  const left = new Map(record.onDisk);
  const person = new Map(record.person.map((o) => [o.job.request.prompt, o]));
  for (const request of record.requests.filter((r) => r.chargedRub > 0)) {
    for (const image of request.images ?? []) {
      if (!image.delivered) continue;
      figures.deliveredImages++;
      const copies = left.get(image.sha256) ?? 0;
      const job = person.get(request.prompt ?? '');
      if (copies > 0) {
        left.set(image.sha256, copies - 1);
        figures.keptImages++;
      } else if (job?.error?.outcomeUnknown && !job.events.includes('answered')) {
        // The connection was closed before the answer's headers came: the job was told the outcome is unknown.
        figures.deliveredToGoneClient++;
      } else {
        figures.lost.push(`${request.id} (${request.prompt}) image ${image.index + 1}: ${image.sha256.slice(0, 12)} is nowhere on disk`);
      }
    }
  }
}

/** Every result a process reported is on disk and in a fresh read of the journal. */
function checkReported(record: SoakRecord, figures: SoakFigures): void {
  const byJob = new Map(record.journal.flatMap((e) => (e.jobId ? [[e.jobId, e] as const] : [])));
  for (const { job, result, paidFailure } of record.person) {
    const name = `person job ${job.id}`;
    if (result) {
      const entry = result.jobId ? byJob.get(result.jobId) : undefined;
      if (!entry || entry.failed) figures.lost.push(`${name}: its result (job ${result.jobId}) is not in the journal`);
      for (const file of result.files) {
        if (!record.exists(file)) figures.lost.push(`${name}: ${file} is gone`);
        if (entry && !entry.files.includes(file)) figures.lost.push(`${name}: the journal does not list ${file}`);
      }
    }
    if (paidFailure && !byJob.get(paidFailure.jobId)?.failed) figures.lost.push(`${name}: its paid failure (job ${paidFailure.jobId}) is not in the journal`);
  }
  // Each run's results are in the journal of its own workspace.
  for (const run of record.fileRuns) {
    const byFile = new Map(run.journal.flatMap((e) => e.files.map((f) => [f, e] as const)));
    for (const line of run.lines.filter((l) => l.status === 'done')) {
      for (const file of line.files) {
        if (!record.exists(file)) figures.lost.push(`${run.window} line ${line.line}: ${file} is gone`);
        if (byFile.get(file)?.batch?.line !== line.line) figures.lost.push(`${run.window} line ${line.line}: ${file} is not in its journal as its result`);
      }
    }
  }
  for (const call of record.agent.calls.filter((c) => !c.isError)) {
    for (const { path } of (call.structured.files ?? []) as { path: string }[]) {
      if (!record.exists(record.agentFile(path))) figures.lost.push(`agent ${call.prompt}: ${path} is gone`);
    }
  }
}

/**
 * "Nothing was charged" (or "not sent") is said only of a request the gateway never had; a failure
 * whose request the gateway held is told it was, or may have been, charged.
 */
function checkClaims(record: SoakRecord, figures: SoakFigures): void {
  const held = (prompt: string) => record.requests.some((r) => r.prompt === prompt && !(r.status >= 400));
  const claim = (who: string, prompt: string, text: string, sentByOthers = false) => {
    if (!SAYS_NOTHING_CHARGED.test(text)) return;
    figures.claims++;
    if (held(prompt) && !sentByOthers) figures.falseNothingCharged.push(`${who}: "${text.split('\n')[0]}", yet the gateway had its request`);
  };
  for (const { job, error } of record.person.filter((o) => o.error)) {
    claim(`person job ${job.id}`, job.request.prompt, error!.message);
    if (held(job.request.prompt) && moneyTold(error) === 'the message')
      figures.untold.push(`person job ${job.id}: ${error!.kind} "${error!.message}" says nothing of a possible charge`);
  }
  // A line's request the gateway had is this run's unless another run, and not this one, says it sent it.
  for (const run of record.fileRuns) {
    const others = (prompt: string) => !run.sent.has(prompt) && record.fileRuns.some((r) => r !== run && r.sent.has(prompt));
    for (const line of run.lines.filter((l) => l.error && l.status !== 'skipped'))
      claim(`${run.window} line ${line.line}`, line.prompt, line.error!, others(line.prompt));
  }
  for (const call of record.agent.calls.filter((c) => c.isError)) claim(`agent ${call.prompt}`, call.prompt, call.text);
  // The refused start said it sent nothing: then no line went twice.
  if (record.fileRefusal) {
    figures.claims++;
    if (figures.sentTwice.some((s) => s.startsWith('file')))
      figures.falseNothingCharged.push(`the refused start: "${record.fileRefusal}", yet a line went twice`);
  }
}

/**
 * The most the gateway had taken for the agent's session at any moment: what it charged so far and
 * the reservations it held then. Each request held its reservation at the gateway within the time
 * the server held it against the cap (from arrival, after the server's hold began, to its charge or
 * return, before the server's hold ended), so this never exceeds the cap when the server keeps it.
 */
export function peakTaken(requests: readonly RecordedRequest[]): number {
  const events = requests
    .filter((r) => r.reservedRub > 0)
    .flatMap((r) => [
      { at: Date.parse(r.at), change: toKopecks(r.reservedRub) },
      { at: r.settledAt ? Date.parse(r.settledAt) : Number.POSITIVE_INFINITY, change: toKopecks(r.chargedRub) - toKopecks(r.reservedRub) },
    ])
    // At one moment a settlement goes first: the server holds a new reservation only after its last one settled.
    .sort((a, b) => (a.at === b.at ? a.change - b.change : a.at < b.at ? -1 : 1));
  let taken = 0;
  let peak = 0;
  for (const { change } of events) peak = Math.max(peak, (taken += change));
  return fromKopecks(peak);
}

/** The session cap against what the gateway charged the agent's requests and held for them, and the server's own account (spent and held). */
function agentFigures(record: SoakRecord): SoakFigures['agent'] {
  const mine = record.requests.filter((r) => record.actorOf(r.prompt) === 'agent');
  const charged = sum(mine.map((r) => r.chargedRub));
  const peak = peakTaken(mine);
  const caps = record.agent.calls.map((c) => c.structured.spendingCap as { spentThisSession: number; remainingThisSession: number } | undefined);
  // What the server counted spent grows call by call: the most any answer showed is its final count.
  const spentByServer = Math.max(...caps.map((c) => c?.spentThisSession ?? Number.NaN));
  const overCap: string[] = [];
  const cap = record.sessionCap;
  if (toKopecks(charged) > toKopecks(cap)) overCap.push(`the gateway charged the session ${charged}, above its cap of ${cap}`);
  if (toKopecks(peak) > toKopecks(cap)) overCap.push(`the gateway had taken ${peak} for the session at one moment (charged and held), above its cap of ${cap}`);
  if (!(toKopecks(spentByServer) <= toKopecks(cap))) overCap.push(`the server counted ${spentByServer} spent, above the cap of ${cap}`);
  if (!(toKopecks(spentByServer) >= toKopecks(charged))) overCap.push(`the server counted ${spentByServer} spent, less than the ${charged} charged`);
  const remaining = caps.map((c) => c?.remainingThisSession ?? Number.NaN);
  if (!remaining.every((r) => r >= 0)) overCap.push(`an answer showed ${Math.min(...remaining)} left of the session cap (reservations held above it)`);
  return {
    charged,
    peak,
    spentByServer,
    minRemaining: Math.min(...remaining),
    calls: record.agent.calls.length,
    refused: record.agent.calls.some((c) => c.structured.refusedBy === 'maxCostPerSession'),
    overCap,
  };
}

/**
 * Each request of a journal-writing actor (the person, the prompt-file run) that the gateway held has
 * exactly one entry when it was charged (a result, or a paid failure with its job or request id),
 * one entry with an unknown outcome when its reservation came back but the actor could not know,
 * and none otherwise; no entry is without such a request.
 */
function journalFigures(record: SoakRecord): SoakFigures['journal'] {
  const writers = record.requests.filter((r) => r.reservedRub > 0 && ['person', 'file'].includes(record.actorOf(r.prompt) ?? ''));
  const toldUnknown = new Set([
    ...record.person.filter((o) => o.error?.outcomeUnknown).map((o) => o.job.request.prompt),
    ...record.fileRuns.flatMap((run) => run.lines.filter((l) => l.status === 'outcome-unknown').map((l) => l.prompt)),
  ]);
  const mismatches: string[] = [];
  const entriesOf = (prompt: string | undefined) => record.journal.filter((e) => e.request.prompt === prompt);
  for (const request of writers) {
    const entries = entriesOf(request.prompt);
    const name = `${request.id} (${request.prompt}, charged ${request.chargedRub})`;
    const expected = request.chargedRub > 0 || toldUnknown.has(request.prompt!) ? 1 : 0;
    if (entries.length !== expected) {
      mismatches.push(`${name}: ${entries.length} journal entries, ${expected} expected`);
      continue;
    }
    const entry = entries[0];
    if (!entry) continue;
    if (!entry.jobId && !entry.requestId) mismatches.push(`${name}: its entry has neither a job id nor a request id`);
    if (entry.requestId && entry.requestId !== request.id) mismatches.push(`${name}: its entry names request ${entry.requestId}`);
    if (request.chargedRub === 0 && !entry.outcomeUnknown) mismatches.push(`${name}: returned, yet its entry says ${entry.failed ? 'charged' : 'a result'}`);
  }
  const prompts = new Set(writers.map((r) => r.prompt));
  for (const entry of record.journal.filter((e) => !prompts.has(e.request.prompt)))
    mismatches.push(`entry ${entry.id} (${entry.request.prompt}): no request of it reached the gateway`);
  return {
    entries: record.journal.length,
    results: record.journal.filter((e) => !e.failed).length,
    paidFailures: record.journal.filter((e) => e.failed && !e.outcomeUnknown).length,
    unknown: record.journal.filter((e) => e.outcomeUnknown).length,
    byPerson: record.journal.filter((e) => !e.batch).length,
    byFile: record.journal.filter((e) => e.batch).length,
    mismatches,
  };
}

/** What the checks after the deadline wrote: 'charge-seen' is a sign from the key's spend, which every actor on the key moves. */
function outcomeCheckFigures(record: SoakRecord): SoakFigures['outcomeChecks'] {
  const unknown = record.journal.filter((e) => e.outcomeUnknown);
  const seen = unknown.filter((e) => e.outcomeCheck?.verdict === 'charge-seen');
  const uncharged = (e: HistoryEntry) => !record.requests.some((r) => r.prompt === e.request.prompt && r.chargedRub > 0);
  return {
    unknown: unknown.length,
    checked: unknown.filter((e) => e.outcomeCheck).length,
    chargeSeen: seen.length,
    chargeSeenUncharged: seen.filter(uncharged).length,
  };
}
