// Soak with several actors: at once, on one emulator account, with real processes: a person's single
// jobs (generations and edits) with cancels before the body leaves, while the gateway holds the
// request, and after the answer began, recorded in the results journal as the extension records them;
// one prompt file started twice at the same moment by two processes; an agent's MCP session (the
// real server process) under a session cap until the cap refuses; top-ups from outside; returned
// reservations (requests the gateway holds and the client cancels). The person (this process) and
// the prompt-file run (another) write one results journal. Then the invariants against the
// emulator's own record, and the figures with the seed.
//   GATEWAY_IMAGES_SOAK_SEED=1234  replay a run's plan (default: a new seed, printed)
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { type BatchLine, requestKey } from '../../src/core/requests/batchFile';
import type { ImageModel } from '../../src/core/gateway/types';
import { moneyTold } from '../../src/core/gateway/moneyTold';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { paintPng, prng } from '../../tools/emulator/png';
import { filesUnder, sha256 } from './support/chaos';
import { type EmulatorProcess, startEmulatorProcess } from './support/emulatorProcess';
import { DEMO_KEYS, newClient, removeDir, tempDir } from './support/gateway';
import { type PromptFileTask, runFileInProcess } from './support/promptFileChild';
import {
  type CancelPoint,
  foldersOf,
  type PersonJob,
  personWindow,
  RequestLogWatch,
  runMcpSession,
  runPerson,
  topUpsFromOutside,
} from './support/severalActors';
import { type Actor, soakFigures, type SoakFigures } from './support/severalActorsFigures';

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
    const promptFile = path.join(workspace, 'prompts.jsonl');
    writeFileSync(promptFile, lines.map((l) => JSON.stringify(l.request)).join('\n') + '\n');
    const task: PromptFileTask = {
      url: emu.url,
      key: DEMO_KEYS.unlimited,
      recoveryDir: folders.recovery,
      inFlightDir: folders.inFlight,
      resultsFile: folders.journal,
      out: path.join(workspace, 'prompts-out'),
      claimsDir: folders.claims,
      promptFile,
      lines,
      window: 'window A',
      concurrency: 2,
    };
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
    const requestLog = new RequestLogWatch(emu);
    const started = Date.now();
    // All at once: two starts of the prompt file (two processes), the agent's session (the MCP server's process), the person, the top-ups.
    const fileRuns = Promise.all([runFileInProcess(task), runFileInProcess({ ...task, window: 'window B' })]);
    const agent = runMcpSession(agentEnv, (call) => agentArgs[call - 1]!, AGENT_CALLS_AT_ONCE, agentArgs.length);
    const personDone = runPerson(person, jobs, requestLog, 2);
    const topUps = topUpsFromOutside(emu, requestLog, topUpPlan);
    const [runA, runB] = await fileRuns;
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

    const fresh = await new HistoryStore(folders.journal, { load: () => resultsCode }).index();
    const journal = fresh.createdBetween(new Date(0), new Date('9999-12-31')).flatMap((s) => fresh.find(s.id) ?? []);
    const files = [...(await filesUnder(workspace)), ...(await filesUnder(folders.recovery))];
    const onDisk = new Map<string, number>();
    for (const file of files.filter((f) => !f.endsWith('.json') && !f.endsWith('.part') && !f.endsWith('.jsonl'))) {
      const hash = sha256(await readFile(file));
      onDisk.set(hash, (onDisk.get(hash) ?? 0) + 1);
    }
    const ran = [runA, runB].filter((r) => r.ok);
    const refused = [runA, runB].flatMap((r) => (!r.ok && r.refused ? [r.refused] : []));
    // The lines of each start that ran (one, unless the claim failed).
    const ranLines = ran.flatMap((r) => (r.ok ? r.outcome.lines : []));
    const requests = (await emu.get('requests')).filter((r) => r.paid);
    const figures = soakFigures({
      requests,
      actorOf: (prompt) => (['person', 'file', 'agent'] as Actor[]).find((actor) => prompt?.startsWith(`${actor} ${SEED} `)),
      person: outcomes,
      fileLines: ranLines,
      fileRefusal: refused[0]?.message,
      agent: session,
      agentFile: (relative) => path.join(workspace, relative),
      sessionCap: SESSION_CAP,
      journal,
      onDisk,
      exists: existsSync,
      initialBalance: INITIAL_BALANCE,
      topUps: madeTopUps,
      emulatorBalance: await emu.get('balanceRub'),
      accountBalance,
    });
    const leftovers = files.filter((f) => f.endsWith('.part'));
    console.log(
      report(figures, {
        seconds,
        outcomes,
        lines: ranLines,
        refused: refused.length,
        refusal: refused[0]?.message,
        topUps: madeTopUps,
        accountBalance,
        leftovers,
      }),
    );

    assert.deepEqual(
      outcomes.flatMap((o) => (o.untyped ? [`job ${o.job.id}: ${o.untyped}`] : [])),
      [],
      'every failure is a typed GatewayError',
    );
    assert.deepEqual(figures.paidTwice, [], 'no line or job paid twice');
    assert.deepEqual(figures.sentTwice, [], 'no line or job sent twice');
    assert.deepEqual(figures.lost, [], 'no result lost');
    assert.deepEqual(leftovers, [], 'no partial file left');
    assert.deepEqual(figures.falseNothingCharged, [], 'no false "nothing was charged"');
    assert.deepEqual(figures.untold, [], 'a failure whose request the gateway held says it may have been charged');
    assert.deepEqual(figures.agent.overCap, [], 'the session cap held');
    assert.ok(figures.agent.refused, 'the agent called until the session cap refused');
    assert.equal(accountBalance, figures.ledger.emulator, "the account's balance after a refresh is the emulator's");
    assert.equal(figures.ledger.emulator, figures.ledger.expected, 'the emulator: initial balance + top-ups − charges (every reservation returned or charged)');
    assert.deepEqual(figures.journal.mismatches, [], 'journal entries equal paid results');
    assert.ok(figures.journal.byPerson > 0 && figures.journal.byFile > 0, 'two processes wrote the journal');
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

interface ReportExtras {
  seconds: number;
  outcomes: Awaited<ReturnType<typeof runPerson>>;
  lines: { status: string }[];
  refused: number;
  refusal?: string;
  topUps: number[];
  accountBalance?: number;
  leftovers: string[];
}

function report(f: SoakFigures, x: ReportExtras): string {
  const tally = (items: string[]) =>
    Object.entries(items.reduce<Record<string, number>>((t, k) => ({ ...t, [k]: (t[k] ?? 0) + 1 }), {}))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const person = x.outcomes;
  const told = person.flatMap((o) => (o.error ? [moneyTold(o.error) === 'the message' ? `"${o.error.kind}" message` : moneyTold(o.error)] : []));
  const r = f.requests;
  return [
    `      soak with several actors: seed ${SEED} (GATEWAY_IMAGES_SOAK_SEED=${SEED} replays its plan), ${x.seconds.toFixed(1)} s`,
    `      person: ${person.length} jobs (${person.filter((o) => o.result).length} ok, ${person.filter((o) => o.error).length} failed); cancels: ${tally(person.flatMap((o) => (o.cancelled ? [o.cancelled] : []))) || 'none'}; told: ${tally(told) || 'nothing'}`,
    `      prompt file (${x.lines.length} lines, started twice at once): ${x.refused} start refused${x.refusal ? ` (${/ in this or another window\./.test(x.refusal) ? 'without naming the run: its owner record was not written yet' : 'naming the run'})` : ''}; lines ${tally(x.lines.map((l) => l.status))}`,
    `      agent: ${f.agent.calls} generate_image calls, ${AGENT_CALLS_AT_ONCE} at a time, under a session cap of ${SESSION_CAP}; refused by the session cap: ${f.agent.refused ? 'yes' : 'no'}`,
    `      gateway: reached/charged/returned: person ${r.person.reached}/${r.person.charged}/${r.person.returned}, file ${r.file.reached}/${r.file.charged}/${r.file.returned}, agent ${r.agent.reached}/${r.agent.charged}/${r.agent.returned}; uploads cut before it read them: ${f.cutUploads}; top-ups from outside: ${x.topUps.length} (${x.topUps.join(' + ') || '0'} RUB)`,
    `      paid twice: ${f.paidTwice.length} (sent twice: ${f.sentTwice.length}; fingerprints: ${f.fingerprints.file} lines, ${f.fingerprints.person} person jobs)`,
    `      results lost: ${f.lost.length} (${f.keptImages} of ${f.deliveredImages} delivered paid images on disk byte-equal, ${f.deliveredToGoneClient} sent to a job cancelled before its answer and told "may have been charged"; ${x.leftovers.length} partial files)`,
    `      false "nothing was charged": ${f.falseNothingCharged.length} of ${f.claims} such messages; failures held by the gateway but not told of a possible charge: ${f.untold.length}`,
    `      session cap: ${f.agent.charged} charged by the gateway (at most ${f.agent.peak} charged and held at one moment), ${f.agent.spentByServer} counted by the server, of ${SESSION_CAP} (least left shown: ${f.agent.minRemaining}); over the cap: ${f.agent.overCap.length}`,
    `      balance: account model after a refresh ${x.accountBalance} / emulator ${f.ledger.emulator} / initial + top-ups − charges ${f.ledger.expected}`,
    `      journal: ${f.journal.entries} entries (${f.journal.byPerson} by the person's process, ${f.journal.byFile} by the prompt file's) = ${f.journal.results} results + ${f.journal.paidFailures} paid failures + ${f.journal.unknown} unknown outcomes; mismatches with the gateway's paid requests: ${f.journal.mismatches.length}`,
    `      outcome checks after the deadline: ${f.outcomeChecks.checked} of ${f.outcomeChecks.unknown} unknown outcomes checked, ${f.outcomeChecks.chargeSeen} "charge-seen" (${f.outcomeChecks.chargeSeenUncharged} of them for a request the gateway did not charge: other actors move the key's spend)`,
  ].join('\n');
}
