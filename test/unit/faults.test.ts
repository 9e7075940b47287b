// Every emulator fault through the job service: a clear typed error where it fails, a paid request
// never resent, paid images saved or recoverable; free GETs retried; cancel; disk failures; concurrency.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import type { GatewayClientConfig } from '../../src/core/client/client';
import {
  ConnectionError,
  GatewayError,
  RateLimitedError,
  ResponseFormatError,
  ServerError,
  TimeoutError,
  CancelledError,
  AuthenticationError,
} from '../../src/core/gateway/errors';
import type { RecoveryManifest } from '../../src/core/files/recoveryManifest';
import type { ImageJob, JobResult } from '../../src/jobs/jobTypes';
import type { FaultSpec } from '../../tools/emulator';
import {
  caught,
  DEMO_KEYS,
  gatewaySuite,
  listFiles,
  localServer,
  newClient,
  newService,
  paidRequests,
  type ServiceRig,
  SMALL,
  startEmulator,
  waitFor,
} from './support/gateway';

type ErrorClass = new (...args: never[]) => GatewayError;

interface FaultCase {
  spec: FaultSpec;
  n: number;
  /** undefined: the job succeeds. */
  error?: ErrorClass;
  outcomeUnknown?: boolean;
  charged: boolean;
  /** Complete images of a failed answer: saved into the output folder as they landed. */
  saved?: number;
  /** The unreadable answer itself is kept in the recovery folder (`<job>-answer.<ext>`). */
  answerKept?: boolean;
  client?: Partial<GatewayClientConfig>;
  check?: (outcome: Outcome) => void | Promise<void>;
}

interface Outcome {
  result?: JobResult;
  error?: GatewayError;
  rig: ServiceRig;
  out: string;
  recovery: string;
}

const stats = { injected: 0, survived: 0, lost: 0, resends: 0 };

describe('faults through the job service', function () {
  const gw = gatewaySuite({ models: true });
  let jobCounter = 0;
  const client = (extra: Partial<GatewayClientConfig> = {}, key: string | null = DEMO_KEYS.unlimited) => gw.newClient(key, extra);

  after(() => {
    console.log(`      faults: ${stats.injected} injected, ${stats.survived} survived, ${stats.lost} paid images lost, ${stats.resends} automatic resends`);
  });

  /** Runs one job; checks the money invariants every job must keep whatever happened. */
  async function runJob(
    job: Partial<ImageJob['request']>,
    n: number,
    extra: Partial<GatewayClientConfig> = {},
    output?: string,
    signal?: AbortSignal,
  ): Promise<Outcome> {
    const id = ++jobCounter;
    const out = output ?? path.join(gw.dir, `out-${id}`);
    const recovery = path.join(gw.dir, `recovery-${id}`);
    const rig = newService(client(extra), gw.models, recovery);
    const paidBefore = paidRequests(gw.emu).length;
    const outcome: Outcome = { rig, out, recovery };
    try {
      outcome.result = await rig.service.run(
        { request: { model: 'aurora-1', prompt: `fault job ${id}`, n, size: SMALL, seed: id, ...job }, output: { directory: out, pattern: '{model}-{index}' } },
        { signal },
      );
    } catch (error) {
      assert.ok(error instanceof GatewayError, `a typed error, got ${String(error)}`);
      outcome.error = error;
    }
    const sent = paidRequests(gw.emu).length - paidBefore;
    stats.resends += Math.max(0, sent - 1);
    assert.equal(sent, 1, 'exactly one paid request per job');
    // Every image that fully arrived is saved or waiting in the recovery folder with a manifest.
    const received = rig.events.filter((e) => e.type === 'image-received').length;
    // An answer that could not be read is kept too (`<job>-answer.<ext>`), but it is no image.
    const recoveredFiles = rig.events.flatMap((e) => (e.type === 'recovered' ? e.files : [])).filter((f) => !/-answer\.\w+$/.test(f));
    // A failed job has no result: what it saved before failing is told by its image-saved events.
    const savedFiles = outcome.result?.files ?? rig.events.flatMap((e) => (e.type === 'image-saved' ? [e.file] : []));
    const kept = savedFiles.filter((f) => existsSync(f)).length + recoveredFiles.filter((f) => existsSync(f)).length;
    stats.lost += Math.max(0, received - kept);
    assert.equal(kept, received, 'no paid image lost');
    for (const event of rig.events) {
      if (event.type !== 'recovered') continue;
      const manifest = JSON.parse(await readFile(event.manifestPath, 'utf8')) as RecoveryManifest;
      assert.deepEqual(
        manifest.files.map((f) => f.path),
        event.files,
      );
      assert.equal(manifest.intendedDirectory, out);
    }
    const leftovers = [...(await listFiles(out)), ...(await listFiles(recovery))].filter((f) => f.endsWith('.part'));
    assert.deepEqual(leftovers, [], 'no partial file left');
    return outcome;
  }

  const CASES: FaultCase[] = [
    // What arrived after the whole images is kept in the recovery folder (`<job>-answer.json`).
    { spec: { fault: 'drop-mid-body' }, n: 3, error: ConnectionError, outcomeUnknown: true, charged: true, saved: 1, answerKept: true },
    { spec: { fault: 'kill' }, n: 1, error: ConnectionError, outcomeUnknown: true, charged: true, saved: 0 },
    {
      spec: { fault: 'html-500' },
      n: 1,
      error: ServerError,
      // Any 5xx after the body left may have been charged: the gateway may have failed after it began.
      outcomeUnknown: true,
      charged: false,
      check: ({ error }) => assert.equal((error as ServerError).status, 500),
    },
    {
      spec: { fault: 'html-502' },
      n: 1,
      error: ServerError,
      // A proxy's 502 cannot prove the gateway did not charge: the user is told and the balance reconciled.
      outcomeUnknown: true,
      charged: false,
      check: ({ error }) => assert.match(error!.message, /HTTP 502 with an HTML page \("502 Bad Gateway"\)/),
    },
    {
      spec: { fault: 'rate-limit', retryAfterSeconds: 2 },
      n: 1,
      error: RateLimitedError,
      outcomeUnknown: false,
      charged: false,
      check: ({ error }) => assert.equal((error as RateLimitedError).retryAfterMs, 2000),
    },
    { spec: { fault: 'no-media-type' }, n: 1, charged: true, check: ({ result }) => assert.match(result!.files[0]!, /\.png$/) },
    { spec: { fault: 'escaped-slashes' }, n: 2, charged: true },
    { spec: { fault: 'media-type-last' }, n: 2, charged: true },
    { spec: { fault: 'usage-first' }, n: 1, charged: true, check: ({ result, rig }) => assert.deepEqual(rig.usages, [result!.usage]) },
    // The unreadable answer itself is kept in the recovery folder as well.
    { spec: { fault: 'invalid-base64' }, n: 1, error: ResponseFormatError, outcomeUnknown: true, charged: true, saved: 0, answerKept: true },
    { spec: { fault: 'truncated-json' }, n: 3, error: ResponseFormatError, outcomeUnknown: true, charged: true, saved: 1, answerKept: true },
    { spec: { fault: 'slow-headers', latencyMs: 1500 }, n: 1, error: TimeoutError, outcomeUnknown: true, charged: false, client: { paidTimeoutMs: 250 } },
    { spec: { fault: 'latency', latencyMs: 60 }, n: 1, charged: true },
  ];

  for (const c of CASES) {
    it(`${c.spec.fault}: ${c.error ? `${c.error.name}, outcomeUnknown ${c.outcomeUnknown}` : 'succeeds'}`, async () => {
      stats.injected++;
      gw.emu.state.armFault(c.spec);
      const outcome = await runJob({}, c.n, c.client);
      const [paid] = paidRequests(gw.emu);
      assert.ok(paid!.faults.includes(c.spec.fault), `the fault was applied: ${paid!.faults.join(',')}`);
      assert.equal(gw.emu.state.totalCharges, c.charged ? 1 : 0, 'charged as expected');
      if (c.error) {
        assert.ok(outcome.error instanceof c.error, `${c.spec.fault}: ${outcome.error?.constructor.name}: ${outcome.error?.message}`);
        assert.equal(outcome.error.outcomeUnknown, c.outcomeUnknown);
        assert.match(outcome.error.message, /[.!?…)]$/);
        assert.equal(outcome.rig.reconciles, c.outcomeUnknown ? 1 : 0, 'the account is reconciled after an unknown outcome');
        const recoveredAll = outcome.rig.events.flatMap((e) => (e.type === 'recovered' ? e.files : []));
        const recovered = recoveredAll.filter((f) => !/-answer\.\w+$/.test(f));
        assert.deepEqual(recovered, [], 'nothing needs recovering: complete images were placed as they landed');
        assert.equal(recoveredAll.length - recovered.length, c.answerKept ? 1 : 0, 'an unreadable answer is kept as it came');
        const saved = await listFiles(outcome.out);
        assert.equal(saved.length, c.saved ?? 0, 'complete images of a failed answer are kept in the output folder');
        assert.deepEqual(
          saved,
          outcome.rig.events.flatMap((e) => (e.type === 'image-saved' ? [path.basename(e.file)] : [])),
        );
      } else {
        assert.equal(outcome.error, undefined, outcome.error?.message);
        assert.equal(outcome.result!.files.length, c.n);
        assert.equal(outcome.result!.usage!.cost_rub, paid!.chargedRub);
      }
      await c.check?.(outcome);
      stats.survived++;
    });
  }

  it('escaped slashes give the same bytes as a clean answer', async () => {
    stats.injected++;
    const clean = await runJob({ seed: 77, prompt: 'slashes' }, 1);
    gw.emu.state.armFault({ fault: 'escaped-slashes' });
    const escaped = await runJob({ seed: 77, prompt: 'slashes' }, 1);
    assert.ok(paidRequests(gw.emu)[1]!.faults.includes('escaped-slashes'));
    assert.ok((await readFile(clean.result!.files[0]!)).equals(await readFile(escaped.result!.files[0]!)));
    stats.survived++;
  });

  describe('free GETs are retried', () => {
    /** Adds X-Emulator-Fault to the first requests: the emulator applies header faults to any endpoint. */
    function faulting(faults: string[], headers: Record<string, string> = {}): Dispatcher {
      let i = 0;
      return new Agent().compose((dispatch) => (opts, handler) => {
        const fault = faults[i++];
        const extra = fault ? { 'x-emulator-fault': fault, ...headers } : {};
        return dispatch({ ...opts, headers: { ...(opts.headers as Record<string, string>), ...extra } }, handler);
      });
    }
    const gets = () => gw.emu.state.requests.filter((r) => r.method === 'GET');

    for (const fault of ['html-502', 'html-500', 'kill', 'drop-mid-body'] as const) {
      it(`${fault} twice, then success`, async () => {
        stats.injected += 2;
        const c = client({ dispatcher: faulting([fault, fault]), maxRetries: 2 });
        const balance = await c.balance();
        assert.equal(balance.balance, 5000);
        assert.equal(gets().length, 3, 'two retries');
        assert.deepEqual(
          c.calls.map((e) => e.attempt),
          [1, 2, 3],
        );
        assert.equal(c.calls[2]!.error, undefined);
        stats.survived += 2;
      });
    }

    it('a 200 with truncated JSON is a ResponseFormatError, not retried', async () => {
      stats.injected++;
      const c = client({ dispatcher: faulting(['truncated-json']), maxRetries: 2 });
      const error = await caught(() => c.balance());
      assert.ok(error instanceof ResponseFormatError, String(error));
      assert.equal(gets().length, 1);
      stats.survived++;
    });

    it('gives up after maxRetries with the typed error', async () => {
      const c = client({ dispatcher: faulting(['html-500', 'html-500', 'html-500', 'html-500']), maxRetries: 2 });
      const error = await caught(() => c.me());
      assert.ok(error instanceof ServerError);
      assert.equal(gets().length, 3);
    });

    it('429 is retried after Retry-After when it is short enough', async () => {
      stats.injected++;
      const c = client({ dispatcher: faulting(['rate-limit'], { 'x-emulator-retry-after': '0' }) });
      assert.equal((await c.key()).name, 'demo-unlimited');
      assert.equal(gets().length, 2);
      stats.survived++;
    });

    it('a Retry-After longer than maxRetryDelayMs is not waited for', async () => {
      const c = client({ dispatcher: faulting(['rate-limit'], { 'x-emulator-retry-after': '1' }), maxRetryDelayMs: 500 });
      const error = await caught(() => c.key());
      assert.ok(error instanceof RateLimitedError);
      assert.equal(error.retryAfterMs, 1000);
      assert.equal(gets().length, 1, 'not retried');
    });

    it('retry-after-ms is honoured (local server)', async () => {
      let count = 0;
      const server = await localServer((_req, res) => {
        count++;
        if (count === 1) res.writeHead(429, { 'retry-after-ms': '150', 'retry-after': '60' }).end('slow down');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"balance":1}');
      });
      try {
        const short = gw.newClient('k', { baseUrl: server.url, maxRetryDelayMs: 100 });
        assert.ok((await caught(() => short.balance())) instanceof RateLimitedError, '150 ms > 100 ms: not retried');
        count = 0;
        const long = gw.newClient('k', { baseUrl: server.url, maxRetryDelayMs: 1000 });
        assert.deepEqual(await long.balance(), { balance: 1 });
        assert.equal(count, 2);
      } finally {
        await server.close();
      }
    });

    it('4xx answers are not retried', async () => {
      const c = client({}, DEMO_KEYS.expired);
      assert.ok((await caught(() => c.balance())) instanceof AuthenticationError);
      assert.equal(gets().length, 1);
    });

    it('a refused connection is retried, then reported as ConnectionError', async () => {
      const server = await localServer(() => undefined);
      const url = server.url;
      await server.close();
      const c = gw.newClient('k', { baseUrl: url, maxRetries: 2 });
      const error = await caught(() => c.balance());
      assert.ok(error instanceof ConnectionError, String(error));
      assert.equal(c.calls.length, 3);
      const paidError = await caught(() => c.generate({ model: 'm', prompt: 'p' }, { open: () => Promise.reject(new Error('no')) }));
      assert.ok(paidError instanceof ConnectionError);
      assert.equal(paidError.outcomeUnknown, false, 'nothing reached a gateway: not charged');
    });
  });

  it('cancel aborts the socket: the emulator sees the close, no file is left', async () => {
    const own = await startEmulator();
    const c = newClient(own);
    const recovery = path.join(gw.dir, 'recovery-cancel');
    const out = path.join(gw.dir, 'out-cancel');
    const rig = newService(c, gw.models, recovery);
    own.state.armFault({ fault: 'latency', latencyMs: 5_000 });
    const controller = new AbortController();
    const running = rig.service.run(
      { request: { model: 'aurora-1', prompt: 'cancel me', size: SMALL }, output: { directory: out, pattern: '{index}' } },
      { signal: controller.signal },
    );
    try {
      await waitFor(() => paidRequests(own).length === 1);
      controller.abort();
      const error = await caught(() => running);
      assert.ok(error instanceof CancelledError, String(error));
      assert.equal(error.outcomeUnknown, true, 'the request had reached the gateway');
      await waitFor(() => paidRequests(own)[0]!.clientAborted === true);
      assert.deepEqual(await listFiles(out), []);
      assert.deepEqual(await listFiles(recovery), []);
      assert.equal(paidRequests(own).length, 1);
    } finally {
      await c.close();
      await own.close();
    }
  });

  it('an output folder that cannot be created (a file stands in the way): images go to recovery with a manifest', async () => {
    stats.injected++;
    const blocker = path.join(gw.dir, 'a-file');
    await writeFile(blocker, 'not a folder');
    const outcome = await runJob({}, 2, {}, path.join(blocker, 'images'));
    const result = outcome.result!;
    assert.deepEqual(result.files, []);
    assert.ok(result.recovered, 'JobResult.recovered is set');
    assert.equal(result.recovered.files.length, 2);
    assert.match(result.recovered.reason, /a file stands where the folder should be/);
    const manifest = JSON.parse(await readFile(result.recovered.manifestPath, 'utf8')) as RecoveryManifest;
    assert.equal(path.dirname(result.recovered.manifestPath), outcome.recovery);
    assert.deepEqual(
      manifest.files.map((f) => f.suggestedName),
      ['aurora-1-1.png', 'aurora-1-2.png'],
    );
    for (const f of manifest.files) assert.ok((await readFile(f.path)).subarray(1, 4).equals(Buffer.from('PNG')));
    stats.survived++;
  });

  it('10 jobs at once into one folder: distinct names, nothing overwritten', async () => {
    const out = path.join(gw.dir, 'together');
    const recovery = path.join(gw.dir, 'recovery-together');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, 'aurora-1-1.png'), 'precious');
    const c = client();
    const rig = newService(c, gw.models, recovery);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        rig.service.run({
          request: { model: 'aurora-1', prompt: 'together', size: SMALL, seed: 100 + i },
          output: { directory: out, pattern: '{model}-{index}' },
        }),
      ),
    );
    const files = results.flatMap((r) => r.files);
    assert.equal(new Set(files).size, 10);
    assert.equal(await readFile(path.join(out, 'aurora-1-1.png'), 'utf8'), 'precious');
    const contents = await Promise.all(files.map((f) => readFile(f)));
    assert.equal(new Set(contents.map((b) => b.toString('base64'))).size, 10, 'each file holds its own image');
    assert.equal((await listFiles(out)).length, 11);
    assert.equal(paidRequests(gw.emu).length, 10);
    assert.deepEqual(await listFiles(recovery), [], 'staging emptied');
  });
});
