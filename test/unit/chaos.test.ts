// Chaos soak: a seeded run of mixed operations against the emulator through the real job service
// and account model: generations, multipart and JSON edits, cancels at random points, key switches,
// concurrent jobs, and about 20 % of requests with a random emulator fault. Then the money
// invariants, checked against the emulator's own record, and the figures with the seed.
//   GATEWAY_IMAGES_SOAK_OPS=3000   a longer run (default 300)
//   GATEWAY_IMAGES_SOAK_SEED=1234  replay a run (default: a new seed, printed)
import * as assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { writeFile, mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { GatewayError } from '../../src/core/gateway/errors';
import type { ImageModel } from '../../src/core/gateway/types';
import type { ImageJob } from '../../src/jobs/jobTypes';
import { FAULT_NAMES, type FaultName, type FaultSpec } from '../../tools/emulator/faults';
import { paintPng, prng } from '../../tools/emulator/png';
import { checkInvariants, RECONCILE_MS, SOAK_KEYS, soakWorld, type SoakWorld } from './support/chaos';
import { type EmulatorProcess, startEmulatorProcess } from './support/emulatorProcess';
import { newClient, removeDir, tempDir } from './support/gateway';

const OPS = Number(process.env.GATEWAY_IMAGES_SOAK_OPS) || 300;
const SEED = Number(process.env.GATEWAY_IMAGES_SOAK_SEED) || Date.now() % 2 ** 31;
const FAULT_SHARE = 0.2;
const RSS_AT = 50;
/** The issue's memory check: RSS after operation 300 against RSS after operation 50 (also in a longer run). */
const RSS_CHECK_AT = 300;
/** A longer run also checks the JS heap at its end (RSS there includes V8's reserved pages and keep-alive sockets). */
const HEAP_GROWTH_LIMIT_MB = 32;
/**
 * The issue's bound for RSS growth from operation 50 to 300, and what fails the test. Measured on the
 * extension's side only: the emulator runs in a process of its own. V8's young generation starts at
 * its default maximum (.mocharc.unit.json: --min-semi-space-size=16, the same 2 x 16 MB it would
 * otherwise grow to somewhere in the run): without that, its one-time ramp from 16 to 32 MB landed
 * between the two readings and read as growth.
 */
const RSS_GROWTH_LIMIT_MB = 32;

/** Each fault with parameters that keep one operation under a second. */
/** The faults a paid request meets (the download-* ones act on images served at an address, which the soak does not ask for). */
const REQUEST_FAULTS = FAULT_NAMES.filter((name) => !name.startsWith('download-'));

function faultSpec(name: FaultName): FaultSpec {
  switch (name) {
    case 'latency':
      return { fault: name, latencyMs: 150 };
    case 'slow-headers':
      return { fault: name, latencyMs: 400 };
    case 'rate-limit':
      return { fault: name, retryAfterSeconds: 1 };
    case 'large':
      return { fault: name, imageBytes: 400_000 };
    default:
      return { fault: name };
  }
}

/**
 * A real garbage collection for comparable RSS readings (mocha runs without --expose-gc). The
 * 'last-resort' flavour also gives free pages back, so RSS shows what is held, not what V8 and the
 * allocator happen to keep reserved (a regular gc() left readings 20–35 MB apart at the same heap size).
 */
/**
 * The collection DevTools' "collect garbage" makes (LowMemoryNotification, about 25 ms): V8's gc()
 * left garbage that closed sockets' WeakRefs had held (undici's connect timeout holds each socket
 * so), which read as growth once each paid request had a connection of its own (JS heap 16 -> 29 MB
 * at operation 300, 18 MB at operation 1,200; after this collection: flat, 15.0 -> 14.8 MB).
 */
async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
}

const rssMb = () => process.memoryUsage.rss() / 1024 / 1024;
/** The size V8 gives its young generation (both semi-spaces) at the moment. */
const youngMb = () => (getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0) / 1024 / 1024;
const heapMb = () => process.memoryUsage().heapUsed / 1024 / 1024;
/** Memory of ArrayBuffers (Buffers included) outside the JS heap: a leaked Buffer shows here. */
const arrayBuffersMb = () => process.memoryUsage().arrayBuffers / 1024 / 1024;
/** Open file descriptors of this process (sockets included); -1 where /proc is not there. */
const openFds = () => {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
};

type OpKind = 'generate' | 'edit-multipart' | 'edit-json' | 'cancel' | 'switch-key' | 'concurrent';
const MIX: [OpKind, number][] = [
  ['generate', 0.34],
  ['edit-multipart', 0.16],
  ['edit-json', 0.16],
  ['cancel', 0.14],
  ['switch-key', 0.05],
  ['concurrent', 0.15],
];

describe(`chaos soak (${OPS} operations)`, function () {
  this.timeout(OPS * 2_000);
  let emu: EmulatorProcess;
  let dir: string;
  let world: SoakWorld;
  let models: ImageModel[];
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const counts: Record<string, number> = {};
  const outcomes = { ok: 0, failed: 0, outcomeUnknown: 0, cancelled: 0, faults: 0, requests: 0 };
  let references: string[] = [];
  let job = 0;
  const cancelledBeforeAnswer = new Set<string>();
  /** Prompts of jobs cancelled before their request was sent: the gateway must have none of them. */
  const cancelledBeforeSending = new Set<string>();

  before(async () => {
    emu = await startEmulatorProcess({ balance: 10_000_000 });
    await emu.set('recordImages', true);
    dir = await tempDir('gwi-soak-');
    const lookup = newClient(emu);
    models = await lookup.imageModels();
    await lookup.close();
    world = await soakWorld(emu, dir, models);
    await mkdir(path.join(dir, 'references'), { recursive: true });
    references = [];
    for (let i = 0; i < 4; i++) {
      const file = path.join(dir, 'references', `reference-${i + 1}.png`);
      await writeFile(file, paintPng({ width: 48, height: 48, transparent: false, identity: `soak reference ${i}` }));
      references.push(file);
    }
  });
  after(async () => {
    await world?.close();
    await emu?.close();
    await removeDir(dir);
  });

  /** One job; about 20 % of requests get a random fault first. Failures are expected: they are typed. */
  async function runJob(request: Partial<ImageJob['request']>, extra: Partial<ImageJob> = {}, signal?: AbortSignal): Promise<void> {
    const id = ++job;
    const prompt = `soak ${SEED} job ${id}`;
    let answered = false;
    outcomes.requests++;
    if (random() < FAULT_SHARE) {
      outcomes.faults++;
      await emu.call('armFault', faultSpec(pick(REQUEST_FAULTS)!));
    }
    try {
      await world.service.run(
        { request: { model: 'aurora-1', prompt, size: '64x64', seed: id, ...request }, output: { directory: world.out, pattern: '{model}-{index}' }, ...extra },
        { signal, onEvent: (event) => void ((event.type === 'answered' || event.type === 'image-received') && (answered = true)) },
      );
      outcomes.ok++;
    } catch (error) {
      assert.ok(error instanceof GatewayError, `job ${id}: an untyped error: ${String((error as Error)?.stack ?? error)}`);
      outcomes.failed++;
      if (error.outcomeUnknown) outcomes.outcomeUnknown++;
      if (error.name === 'CancelledError') {
        outcomes.cancelled++;
        // A cancel before the connection was made says so ("nothing was charged", checked against the
        // gateway at the end); any later one may have crossed the answer and says the outcome is unknown.
        if (signal && !error.outcomeUnknown) {
          assert.match(
            error.message,
            /before the request was sent: nothing was charged/,
            `job ${id}: a cancel that may have crossed the answer says the outcome is unknown`,
          );
          cancelledBeforeSending.add(prompt);
        }
        if (!answered) cancelledBeforeAnswer.add(prompt);
      }
    } finally {
      // A fault that found no request (the job failed before sending) must not hit the next operation.
      await emu.call('clearFaults');
    }
  }

  const ops: Record<OpKind, () => Promise<void>> = {
    generate: () => runJob({ n: 1 + Math.floor(random() * 3) }),
    'edit-multipart': () =>
      runJob(
        { model: 'mosaic-edit', n: 1 + Math.floor(random() * 2) },
        { references: references.slice(0, 1 + Math.floor(random() * 3)), transport: 'multipart' },
      ),
    'edit-json': () => runJob({ model: 'mosaic-edit', n: 1 }, { references: references.slice(0, 1 + Math.floor(random() * 3)), transport: 'input_references' }),
    cancel: async () => {
      // Pauses so a cancel can land before sending, during "generation", between the answer's
      // headers and its first image (charged: the images must still be kept) or mid-stream.
      await emu.set('imageGapMs', 60);
      await emu.set('headGapMs', random() < 0.5 ? 80 : 0);
      if (random() < 0.5) await emu.call('armFault', { fault: 'latency', latencyMs: 100 });
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), Math.floor(random() * 250));
      try {
        await runJob({ n: 3 }, {}, controller.signal);
      } finally {
        clearTimeout(timer);
        await emu.set('imageGapMs', 0);
        await emu.set('headGapMs', 0);
      }
    },
    'switch-key': async () => {
      // As the extension does when the secret changes: the account is read again for the new key.
      world.key = world.key === SOAK_KEYS.plain ? SOAK_KEYS.budget : SOAK_KEYS.plain;
      await world.account.refresh();
    },
    concurrent: async () => {
      const jobs = 2 + Math.floor(random() * 4);
      await Promise.all(
        Array.from({ length: jobs }, (_, i) =>
          i % 2 ? runJob({ model: 'mosaic-edit' }, { references: references.slice(0, 2), transport: 'multipart' }) : runJob({ n: 2 }),
        ),
      );
    },
  };

  function nextOp(): OpKind {
    let r = random();
    for (const [kind, share] of MIX) if ((r -= share) < 0) return kind;
    return 'generate';
  }

  it('keeps every paid image, never sends a paid request twice, and agrees with the gateway on the money', async () => {
    const started = Date.now();
    let rssAt50 = 0;
    let heapAt50 = 0;
    let fdsAt50 = 0;
    let buffersAt50 = 0;
    let youngAt50 = 0;
    let rssAt300 = 0;
    for (let op = 1; op <= OPS; op++) {
      // The last operations run on the key with a budget, so the final budget is a real figure.
      const kind = op === OPS - 20 && world.key !== SOAK_KEYS.budget ? 'switch-key' : nextOp();
      counts[kind] = (counts[kind] ?? 0) + 1;
      await ops[kind]();
      if (op === Math.min(RSS_AT, OPS)) {
        await collectGarbage();
        rssAt50 = rssMb();
        heapAt50 = heapMb();
        buffersAt50 = arrayBuffersMb();
        youngAt50 = youngMb();
        fdsAt50 = openFds();
      }
      if (op === RSS_CHECK_AT) {
        await collectGarbage();
        rssAt300 = rssMb();
      }
    }
    // Quiet: the account's own reconciliation (reconcileSoon after each charge) has run.
    await new Promise((resolve) => setTimeout(resolve, RECONCILE_MS * 5));
    await waitForRefresh(world);
    await collectGarbage();
    const rssAtEnd = rssMb();
    const heapAtEnd = heapMb();
    const buffersAtEnd = arrayBuffersMb();
    const fdsAtEnd = openFds();
    const figures = await checkInvariants(world, cancelledBeforeAnswer);
    const sentAnyway = (await emu.get('requests')).filter((r) => cancelledBeforeSending.has(r.prompt ?? ''));
    const balance = await emu.get('balanceRub');
    const budget = await emu.call('keyBudgetRub', world.key);

    console.log(
      [
        `      soak: seed ${SEED} (GATEWAY_IMAGES_SOAK_SEED=${SEED} replays it), ${OPS} operations in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        `      operations: ${Object.entries(counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
        `      jobs: ${outcomes.requests} (${outcomes.ok} ok, ${outcomes.failed} failed: ${outcomes.cancelled} cancelled (${cancelledBeforeSending.size} before sending), ${outcomes.outcomeUnknown} outcome unknown), ${outcomes.faults} with a fault armed`,
        `      emulator: ${figures.paidRequests} paid requests, ${figures.charged} charged for ${figures.chargedImages} images, ${figures.deliveredImages} delivered whole`,
        `      kept: ${figures.savedOrRecovered} in the workspace or recovery folder byte-equal, ${figures.missing.length} missing, ${figures.deliveredToGoneClient} charged for a job cancelled before its answer arrived (outcome unknown told)`,
        `      resends: ${figures.duplicateSends}; leftovers: ${figures.leftovers.length} .part, ${figures.orphanStaged.length} staged without manifest`,
        `      balance: extension ${world.account.snapshot.balance} / emulator ${balance}; budget (${world.key}): extension ${world.account.snapshot.budget} / emulator ${budget}`,
        `      RSS: ${rssAt50.toFixed(1)} MB after operation ${Math.min(RSS_AT, OPS)}, ${rssAt300 ? `${rssAt300.toFixed(1)} MB after operation ${RSS_CHECK_AT} (${signed(rssAt300 - rssAt50)} MB)` : ''}${OPS === RSS_CHECK_AT ? '' : `, ${rssAtEnd.toFixed(1)} MB after operation ${OPS}`}; JS heap ${heapAt50.toFixed(1)} -> ${heapAtEnd.toFixed(1)} MB; ArrayBuffers ${buffersAt50.toFixed(1)} -> ${buffersAtEnd.toFixed(1)} MB; open descriptors ${fdsAt50} -> ${fdsAtEnd}; V8 young generation ${youngAt50.toFixed(0)} -> ${youngMb().toFixed(0)} MB`,
      ].join('\n'),
    );

    assert.deepEqual(figures.missing, [], 'every image the gateway charged for and delivered is kept, byte-equal');
    assert.equal(figures.duplicateSends, 0, 'no paid request was sent twice');
    assert.deepEqual(
      sentAnyway.map((r) => r.prompt),
      [],
      'a job said "cancelled before the request was sent", yet the gateway has its request',
    );
    assert.equal(world.account.snapshot.balance, balance, 'the final balance agrees with the gateway');
    assert.equal(world.account.snapshot.budget, budget, 'the final key budget agrees with the gateway');
    assert.deepEqual(figures.leftovers, [], 'no partial file left');
    assert.deepEqual(figures.orphanStaged, [], 'no staged image without a manifest');
    assert.ok(figures.deliveredImages > OPS / 2, 'the soak really made images');
    assert.ok(outcomes.faults > 0 && outcomes.failed > 0, 'faults were really injected');
    assert.ok(fdsAtEnd <= fdsAt50 + 8, `open file descriptors grew from ${fdsAt50} to ${fdsAtEnd}`);
    if (rssAt300) {
      const growth = rssAt300 - rssAt50;
      process.stdout.write(`      RSS growth (<= +${RSS_GROWTH_LIMIT_MB} MB): ${growth <= RSS_GROWTH_LIMIT_MB ? 'PASS' : 'FAIL'} (${signed(growth)} MB)\n`);
    }
    if (rssAt300)
      assert.ok(rssAt300 - rssAt50 <= RSS_GROWTH_LIMIT_MB, `RSS grew by ${(rssAt300 - rssAt50).toFixed(1)} MB from operation ${RSS_AT} to ${RSS_CHECK_AT}`);
    assert.ok(heapAtEnd - heapAt50 <= HEAP_GROWTH_LIMIT_MB, `the JS heap grew by ${(heapAtEnd - heapAt50).toFixed(1)} MB`);
  });
});

const signed = (mb: number) => `${mb >= 0 ? '+' : '−'}${Math.abs(mb).toFixed(1)}`;

/** Waits for a refresh the account may still be running. */
async function waitForRefresh(world: SoakWorld): Promise<void> {
  for (let i = 0; i < 50 && world.account.snapshot.status === 'loading'; i++) await new Promise((r) => setTimeout(r, 20));
}
