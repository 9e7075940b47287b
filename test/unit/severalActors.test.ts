// Soak with several actors: at once, on one emulator account, with real processes: a person's single
// jobs (generations and edits) with cancels before the body leaves, while the gateway holds the
// request, and after the answer began, recorded in the results journal as the extension records them;
// one prompt file started twice at the same moment by two processes; an agent's MCP session (the
// real server process) under a session cap until the cap refuses; top-ups from outside; returned
// reservations (requests the gateway holds and the client cancels). The person (this process) and
// the prompt-file run (another) write one results journal. Two actors are paused past the stale time
// of their lease (support/pausedActors.ts): the run that holds the prompt file's claim, which a run
// from another workspace then takes over, and a journal writer inside its compaction, while another
// window writes. Then the invariants against the emulator's own record, and the figures with the seed.
//   GATEWAY_IMAGES_SOAK_SEED=1234  replay a run's plan (default: a new seed, printed)
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { type BatchLine, requestKey } from '../../src/core/requests/batchFile';
import type { ImageModel } from '../../src/core/gateway/types';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { paintPng, prng } from '../../tools/emulator/png';
import type { RecordedRequest } from '../../tools/emulator/state';
import { filesUnder, sha256 } from './support/chaos';
import { type EmulatorProcess, startEmulatorProcess } from './support/emulatorProcess';
import { DEMO_KEYS, newClient, removeDir, tempDir } from './support/gateway';
import type { CompactionPause as PausePoint } from './support/compactingWriter';
import { crashService } from './support/crashChild';
import {
  appendWhileCompactionPaused,
  type ClaimPausePlan,
  compactionLost,
  endStarted,
  longJournal,
  pausedReport,
  reachedAfterWaking,
  sentAfterWaking,
  SOAK_STALE_MS,
  startFileRun,
  takeOverPausedRun,
} from './support/pausedActors';
import {
  type CancelPoint,
  foldersOf,
  type PersonJob,
  personWindow,
  RequestLogWatch,
  runMcpSession,
  runPerson,
  runPersonJob,
  topUpsFromOutside,
} from './support/severalActors';
import { type Actor, type FileRun, soakFigures } from './support/severalActorsFigures';
import { soakReport } from './support/severalActorsReport';
import type { WatchedFileReport, WatchedFileTask } from './support/watchedFileRun';

const SEED = Number(process.env.GATEWAY_IMAGES_SOAK_SEED) || Date.now() % 2 ** 31;
const INITIAL_BALANCE = 2_000;
/** The agent's session cap, rubles: a handful of calls. */
const SESSION_CAP = 20;
/** Every paid request's generation time at the emulator: long enough for a cancel to find it held. */
const LATENCY_MS = 300;
const PERSON_JOBS = 20;
/** The agent's calls in flight at once: near the cap, each must count the others' reservations. */
const AGENT_CALLS_AT_ONCE = 3;
const FILE_LINES = 10;
const SUBJECTS = ['a lighthouse at dusk', 'a red fox', 'a paper boat', 'a glass teapot', 'a mountain hut', 'a neon sign', 'an owl', 'a tram in rain'];
const CANCEL_POINTS: CancelPoint[] = ['before-send', 'held', 'answer-began'];
const COMPACTION_PAUSES: PausePoint[] = ['new file made', 'compaction-written', 'compaction-checked'];
/** Lines of the compacted workspace's journal before the soak: its writer's next few changes cross the compaction's 1000. */
const LONG_JOURNAL_LINES = 990;

describe('Soak with several actors on one account', function () {
  this.timeout(180_000);
  let emu: EmulatorProcess;
  let root: string;
  let models: ImageModel[];
  let references: string[];
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  /** `count` distinct positions of 0..n-1. */
  const positions = (n: number, count: number) => {
    const all = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all.slice(0, count);
  };

  before(async () => {
    emu = await startEmulatorProcess({ balance: INITIAL_BALANCE, latencyMs: LATENCY_MS });
    await emu.set('recordImages', true);
    root = await tempDir('gwi-actors-');
    const folders = foldersOf(root);
    for (const dir of [folders.workspace, folders.recovery, folders.inFlight, folders.claims, path.join(root, 'references')])
      mkdirSync(dir, { recursive: true });
    for (const other of [folders.second, folders.third]) for (const dir of [other.workspace, other.inFlight]) mkdirSync(dir, { recursive: true });
    references = [0, 1].map((i) => {
      const file = path.join(root, 'references', `reference-${i + 1}.png`);
      writeFileSync(file, paintPng({ width: 48, height: 48, transparent: false, identity: `actors reference ${i}` }));
      return file;
    });
    const lookup = newClient(emu);
    models = await lookup.imageModels();
    await lookup.close();
  });
  after(async () => {
    endStarted();
    await emu?.close();
    await removeDir(root);
  });

  /** The person's jobs: generations, two edits (multipart and JSON), each cancel point at least once, more at random. */
  function personPlan(): PersonJob[] {
    const [multipart, json] = positions(PERSON_JOBS, 2);
    const forced = positions(PERSON_JOBS, CANCEL_POINTS.length);
    return Array.from({ length: PERSON_JOBS }, (_, i) => {
      const prompt = `person ${SEED} job ${i + 1}: ${pick(SUBJECTS)}`;
      const edit = i === multipart || i === json;
      const request = edit
        ? { model: 'mosaic-edit', prompt, size: '64x64', n: 1 }
        : { model: pick(['aurora-1', 'sketch-mini']), prompt, size: '64x64', n: 1 + Math.floor(random() * 2) };
      const at = forced.indexOf(i);
      const cancelAt = at >= 0 ? CANCEL_POINTS[at]! : random() < 0.25 ? pick(CANCEL_POINTS) : 'none';
      return {
        id: i + 1,
        request,
        cancelAt,
        ...(edit
          ? { references: references.slice(0, i === multipart ? 2 : 1), transport: i === multipart ? ('multipart' as const) : ('input_references' as const) }
          : {}),
      };
    });
  }

  function promptFileLines(): BatchLine[] {
    return Array.from({ length: FILE_LINES }, (_, i) => {
      const request = { model: pick(['sketch-mini', 'aurora-1']), prompt: `file ${SEED} line ${i + 1}: ${pick(SUBJECTS)}`, size: '64x64' };
      return { line: i + 1, request, key: requestKey(request) };
    });
  }

  it('pays no line twice, loses no result, says "nothing was charged" only of what never left, keeps the cap, and agrees with the gateway and the journal', async () => {
    const folders = foldersOf(root);
    const workspace = realpathSync(folders.workspace);
    const jobs = personPlan();
    const lines = promptFileLines();
    const agentArgs = Array.from({ length: 40 }, (_, i) => {
      const model = random() < 0.6 ? 'aurora-1' : 'sketch-mini';
      return { prompt: `agent ${SEED} call ${i + 1}: ${pick(SUBJECTS)}`, model, size: '64x64', n: model === 'sketch-mini' ? 1 + Math.floor(random() * 2) : 1 };
    });
    const topUpPlan = positions(24, 4)
      .map((p) => p + 2)
      .sort((a, b) => a - b)
      .map((after) => ({ after, rub: Math.round((5 + random() * 50) * 100) / 100 }));
    // Where the seed pauses: the claim holder (after how many of its requests, how the other workspace names the file, when it wakes), and the compacting writer.
    const claimPlan: ClaimPausePlan = {
      afterReached: 1 + Math.floor(random() * (FILE_LINES - 4)),
      takerPath: random() < 0.5 ? 'a link in its folder' : 'the same path',
      resume: random() < 0.5 ? 'after the taker ended' : { takerSent: 1 + Math.floor(random() * 2) },
    };
    const pauseAt = pick(COMPACTION_PAUSES);
    const writerResults = 1 + Math.floor(random() * 3);
    const promptFile = path.join(workspace, 'prompts.jsonl');
    writeFileSync(promptFile, lines.map((l) => JSON.stringify(l.request)).join('\n') + '\n');
    const { second, third } = folders;
    const linked = path.join(second.workspace, 'prompts.jsonl');
    symlinkSync(promptFile, linked);
    const task: WatchedFileTask = {
      url: emu.url,
      key: DEMO_KEYS.unlimited,
      recoveryDir: folders.recovery,
      inFlightDir: folders.inFlight,
      resultsFile: folders.journal,
      out: path.join(workspace, 'prompts-out'),
      claimsDir: folders.claims,
      claimStaleMs: SOAK_STALE_MS,
      promptFile,
      lines,
      window: 'window A',
      concurrency: 2,
    };
    const takerTask: WatchedFileTask = {
      ...task,
      window: 'window C',
      promptFile: claimPlan.takerPath === 'the same path' ? promptFile : linked,
      resultsFile: second.journal,
      inFlightDir: second.inFlight,
      out: path.join(second.workspace, 'prompts-out'),
    };
    const earlier = { id: randomUUID(), costRub: LONG_JOURNAL_LINES / 100 };
    mkdirSync(path.dirname(third.journal), { recursive: true });
    longJournal(
      third.journal,
      {
        id: earlier.id,
        createdAt: new Date().toISOString(),
        request: { model: 'sketch-mini', prompt: `writer ${SEED} earlier result` },
        model: 'sketch-mini',
        files: [],
      },
      LONG_JOURNAL_LINES,
    );
    const agentEnv = {
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_OUTPUT_DIR: 'agent-images',
      GATEWAY_IMAGES_RECOVERY_DIR: folders.recovery,
      GATEWAY_IMAGES_MAX_COST_PER_SESSION: String(SESSION_CAP),
      GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
    };

    const person = await personWindow(emu, DEMO_KEYS.unlimited, root, models);
    // Another window of the workspace whose journal is compacted: its own job service and journal (the same account and key).
    const windowD = crashService({ ...task, inFlightDir: third.inFlight, resultsFile: third.journal, out: third.workspace });
    const journalD = new HistoryStore(third.journal, { load: () => resultsCode, journal: { staleMs: SOAK_STALE_MS } });
    const extraJob: PersonJob = {
      id: PERSON_JOBS + 1,
      request: {
        model: pick(['aurora-1', 'sketch-mini']),
        prompt: `person ${SEED} job ${PERSON_JOBS + 1} (another window, a compaction paused): ${pick(SUBJECTS)}`,
        size: '64x64',
        n: 1,
      },
      cancelAt: 'none',
    };
    const isFileRequest = (r: RecordedRequest) => r.prompt?.startsWith(`file ${SEED} `) === true;
    const requestLog = new RequestLogWatch(emu);
    const started = Date.now();
    // All at once: two starts of the prompt file (two processes), the agent's session (the MCP server's process), the person, the top-ups;
    // the start that runs is paused and taken over from another workspace; a writer paused in its compaction while window D records.
    const starts = [startFileRun(task), startFileRun({ ...task, window: 'window B' })];
    const claimPause = takeOverPausedRun({
      starts,
      takerTask,
      plan: claimPlan,
      emu,
      requestLog,
      isFileRequest,
    });
    const compactionPause = appendWhileCompactionPaused(
      { file: third.journal, name: `writer ${SEED}`, results: writerResults, staleMs: SOAK_STALE_MS, pauseAt },
      () => runPersonJob({ ...person, service: windowD.service, history: journalD, out: path.join(third.workspace, 'images') }, extraJob, requestLog),
    );
    const agent = runMcpSession(agentEnv, (call) => agentArgs[call - 1]!, AGENT_CALLS_AT_ONCE, agentArgs.length);
    const personDone = runPerson(person, jobs, requestLog, 2);
    const topUps = topUpsFromOutside(emu, requestLog, topUpPlan);
    const claim = await claimPause;
    const [runA, runB] = await Promise.all(starts.map((s) => s.report));
    const compaction = await compactionPause;
    const session = await agent;
    const outcomes = await personDone;
    // Quiet: every paid request answered or dropped by its client (its reservation returned), then no more top-ups.
    await requestLog.until((log) => log.every((r) => !r.paid || r.status !== 0 || r.clientAborted === true));
    requestLog.stop();
    const madeTopUps = await topUps;
    const seconds = (Date.now() - started) / 1000;

    // The checks of unknown outcomes, one deadline after each, are written into their entries.
    const unknownChecked = async () =>
      (await person.history.index()).createdBetween(new Date(0), new Date('9999-12-31')).every((e) => !e.outcomeUnknown || e.outcomeCheck);
    for (const until = Date.now() + 15_000; !(await unknownChecked());) {
      assert.ok(Date.now() < until, `unknown outcomes not checked: ${person.log.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await person.account.refresh();
    const accountBalance = person.account.snapshot.balance;
    await person.close();
    await journalD.close();
    await windowD.client.close();

    const read = async (file: string) => {
      const fresh = await new HistoryStore(file, { load: () => resultsCode }).index();
      return fresh.createdBetween(new Date(0), new Date('9999-12-31')).flatMap((s) => fresh.find(s.id) ?? []);
    };
    const [journal, secondJournal, thirdJournal] = [await read(folders.journal), await read(second.journal), await read(third.journal)];
    const files = (await Promise.all([workspace, second.workspace, third.workspace, folders.recovery].map(filesUnder))).flat();
    const onDisk = new Map<string, number>();
    for (const file of files.filter((f) => !f.endsWith('.json') && !f.endsWith('.part') && !f.endsWith('.jsonl'))) {
      const hash = sha256(await readFile(file));
      onDisk.set(hash, (onDisk.get(hash) ?? 0) + 1);
    }
    const ran = [runA!, runB!].filter((r) => r.ok);
    const refused = [runA!, runB!].flatMap((r) => (!r.ok && r.refused ? [r.refused] : []));
    const takerReport = await claim.taker.report;
    const sentBy = (run: typeof claim.runner) => new Set(run.requests.filter((e) => e.event === 'sent').map((e) => e.prompt));
    const linesOf = (report: WatchedFileReport) => (report.ok ? report.outcome.lines : []);
    const fileRuns: FileRun[] = [
      { window: claim.runner.window, lines: ran.flatMap(linesOf), journal, sent: sentBy(claim.runner) },
      { window: claim.taker.window, lines: linesOf(takerReport), journal: secondJournal, sent: sentBy(claim.taker) },
    ];
    const writers = thirdJournal.filter((e) => e.request.prompt.startsWith(`writer ${SEED} `));
    const compactionLosses = compactionLost(compaction.writer, earlier, compaction.appended.result?.jobId, thirdJournal);
    const requests = (await emu.get('requests')).filter((r) => r.paid);
    const reachedAfter = reachedAfterWaking(claim, requests, isFileRequest);
    const figures = soakFigures({
      requests,
      actorOf: (prompt) => (['person', 'file', 'agent'] as Actor[]).find((actor) => prompt?.startsWith(`${actor} ${SEED} `)),
      person: [...outcomes, compaction.appended],
      fileRuns,
      fileRefusal: refused[0]?.message,
      agent: session,
      agentFile: (relative) => path.join(workspace, relative),
      sessionCap: SESSION_CAP,
      journal: [...journal, ...secondJournal, ...thirdJournal.filter((e) => !writers.includes(e))],
      onDisk,
      exists: existsSync,
      initialBalance: INITIAL_BALANCE,
      topUps: madeTopUps,
      emulatorBalance: await emu.get('balanceRub'),
      accountBalance,
    });
    const leftovers = files.filter((f) => f.endsWith('.part'));
    console.log(
      soakReport(figures, {
        seed: SEED,
        sessionCap: SESSION_CAP,
        agentCallsAtOnce: AGENT_CALLS_AT_ONCE,
        seconds,
        outcomes,
        lines: fileRuns[0]!.lines,
        refused: refused.length,
        refusal: refused[0]?.message,
        topUps: madeTopUps,
        accountBalance,
        leftovers,
        compactionLosses,
        // The window's result lost to the compaction counts once (the figures count it too, as a person's result lost).
        lost: figures.lost.filter((l) => !l.startsWith(`person job ${extraJob.id}:`)).length + compactionLosses.length,
        paused: await pausedReport(claim, claimPlan, reachedAfter, compaction, pauseAt),
      }),
    );

    assert.deepEqual(
      [...outcomes, compaction.appended].flatMap((o) => (o.untyped ? [`job ${o.job.id}: ${o.untyped}`] : [])),
      [],
      'every failure is a typed GatewayError',
    );
    assert.deepEqual(figures.paidTwice, [], 'no line or job paid twice');
    assert.deepEqual(figures.sentTwice, [], 'no line or job sent twice');
    assert.deepEqual(figures.lost, [], 'no result lost');
    assert.deepEqual(compactionLosses, [], "no result lost to the writer's paused compaction");
    assert.deepEqual(leftovers, [], 'no partial file left');
    assert.deepEqual(figures.falseNothingCharged, [], 'no false "nothing was charged"');
    assert.deepEqual(figures.untold, [], 'a failure whose request the gateway held says it may have been charged');
    assert.deepEqual(figures.agent.overCap, [], 'the session cap held');
    assert.ok(figures.agent.refused, 'the agent called until the session cap refused');
    assert.equal(accountBalance, figures.ledger.emulator, "the account's balance after a refresh is the emulator's");
    assert.equal(figures.ledger.emulator, figures.ledger.expected, 'the emulator: initial balance + top-ups − charges (every reservation returned or charged)');
    assert.deepEqual(figures.journal.mismatches, [], 'journal entries equal paid results');
    assert.ok(figures.journal.byPerson > 0 && figures.journal.byFile > 0, 'two processes wrote the journal');
    // The paused run: taken over from another workspace, it sent nothing after it woke, and was told so.
    assert.deepEqual(sentAfterWaking(claim), [], 'the run that lost its claim sent nothing after it woke');
    assert.deepEqual(reachedAfter, [], 'the gateway got no request of it after it woke');
    assert.ok(takerReport.ok, `the run from another workspace took the stale claim over: ${JSON.stringify(takerReport).slice(0, 2000)}`);
    const runnerReport = await claim.runner.report;
    assert.ok(runnerReport.ok && runnerReport.outcome.takenOver, `the paused run was told it was taken over: ${JSON.stringify(runnerReport).slice(0, 2000)}`);
    assert.ok(compaction.appended.result, `window D's job ran while the writer was paused: ${compaction.appended.error?.message}`);
    // The soak really did what it says.
    assert.equal(ran.length, 1, `one run of the prompt file sent its lines: ${JSON.stringify([runA, runB]).slice(0, 2000)}`);
    assert.equal(refused.length, 1, 'the other start was refused');
    assert.match(refused[0]!.message, /prompts\.jsonl is already being run\b.*Nothing was sent by this start/);
    assert.equal(figures.requests.file.charged, FILE_LINES, 'every line was paid once');
    assert.ok(figures.requests.person.returned > 0, 'a request held by the gateway was cancelled and its reservation returned');
    assert.ok(
      outcomes.some((o) => o.cancelled === 'before the body left'),
      'a cancel before the body left',
    );
    assert.ok(madeTopUps.length > 0, 'the account was topped up from outside');
  });
});
