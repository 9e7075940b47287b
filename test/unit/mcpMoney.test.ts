// The MCP server's money rules where they used to break (issue 29): a paid answer still streaming
// in when the client goes away, and calls that never left counted against the session allowance;
// and (issue 40) a 5xx after the body left, which may have been charged.
// The server runs as `node dist/mcp.js` under the SDK's Client, against the emulator.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Agent, buildConnector } from 'undici';
import { CatalogCache } from '../../src/core/gateway/catalogCache';
import { ReservationRoseError } from '../../src/core/gateway/errors';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { ImageTools } from '../../src/mcp/server/imageTools';
import { PaidCallFailure } from '../../src/mcp/server/toolAnswers';
import { caught, DEMO_KEYS, gatewaySuite, listFiles, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir, waitFor } from './support/gateway';
import { capOf, launch, launchChild, textOf, type ToolResult } from './support/mcp';

describe('MCP server: money on the way out, and calls never sent', function () {
  this.timeout(60_000);
  let emu: RunningEmulator;
  let workspace: string;
  let recovery: string;
  const env = () => ({
    GATEWAY_IMAGES_BASE_URL: emu.url,
    GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
    GATEWAY_IMAGES_WORKSPACE: workspace,
    GATEWAY_IMAGES_RECOVERY_DIR: recovery,
    GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
  });

  beforeEach(async () => {
    emu = await startEmulator();
    workspace = await fs.realpath(await tempDir('gwi-mcp-money-'));
    recovery = await tempDir('gwi-mcp-money-recovery-');
  });

  afterEach(async () => {
    await emu.close();
    await Promise.all([workspace, recovery].map((d) => removeDir(d)));
  });

  for (const ending of ['stdin', 'SIGTERM'] as const) {
    it(`${ending === 'stdin' ? 'stdin closed' : 'SIGTERM'} in the middle of a 24 MiB answer: the call finishes, the image is on disk byte-equal, then the server exits`, async () => {
      emu.state.recordImages = true;
      // Headers (charged) first, then a pause, then 24 MiB: the client leaves inside that answer.
      emu.state.headGapMs = 1_500;
      emu.state.armFault({ fault: 'large' });
      const { client, transport } = await launchChild(env());
      const call = client.callTool({ name: 'generate_image', arguments: { prompt: 'A big one', model: 'aurora-1', size: '64x64' } }) as Promise<ToolResult>;
      await waitFor(() => paidRequests(emu).some((r) => r.chargedRub > 0), 15_000);
      if (ending === 'stdin') transport.child.stdin.end();
      else transport.child.kill('SIGTERM');
      const result = await call;
      assert.ok(!result.isError, textOf(result));
      assert.equal(await transport.exited, 0);
      const sent = paidRequests(emu)[0]!.images![0]!;
      const files = (await listFiles(workspace)).filter((f) => f.endsWith('.png'));
      assert.equal(files.length, 1, `saved: ${files.join(', ')}`);
      const bytes = await fs.readFile(path.join(workspace, files[0]!));
      assert.equal(bytes.length, sent.bytes);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), sent.sha256);
      assert.equal(paidRequests(emu).length, 1);
    });
  }

  it('stops taking new calls once stdin is closed, and exits when nothing is in flight', async () => {
    const { client, transport } = await launchChild(env());
    assert.ok(!(await client.callTool({ name: 'list_models', arguments: {} })).isError);
    transport.child.stdin.end();
    assert.equal(await transport.exited, 0);
  });

  it('a call without a key: "Nothing was sent", and the session allowance is whole', async () => {
    const { GATEWAY_IMAGES_API_KEY: _key, ...noKey } = env();
    const { client } = await launch({ ...noKey, GATEWAY_IMAGES_MAX_COST_PER_SESSION: '20' });
    try {
      const result = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'x', model: 'aurora-1', size: '64x64' } })) as ToolResult;
      assert.equal(result.isError, true);
      assert.match(textOf(result), /Nothing was sent\./);
      assert.deepEqual(capOf(result), { spentThisSession: 0, remainingThisSession: 20, maxCostPerCall: 50, maxCostPerSession: 20 });
      assert.equal(paidRequests(emu).length, 0);
    } finally {
      await client.close();
    }
  });

  it('a refused connection: not counted against the session allowance', async () => {
    const { client } = await launch({ ...env(), GATEWAY_IMAGES_MAX_COST_PER_SESSION: '20' });
    try {
      // The catalog is read (and cached) first; then the gateway goes away.
      assert.ok(!(await client.callTool({ name: 'list_models', arguments: {} })).isError);
      await emu.close();
      const result = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'x', model: 'aurora-1', size: '64x64' } })) as ToolResult;
      assert.equal(result.isError, true);
      assert.doesNotMatch(textOf(result), /may have been charged/);
      assert.equal(capOf(result).spentThisSession, 0, textOf(result));
      assert.equal(capOf(result).remainingThisSession, 20);
    } finally {
      await client.close();
      emu = await startEmulator();
    }
  });
});

describe('MCP server: a 500, 503 or 524 after the body left may have been charged', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ dir: 'gwi-mcp-unknown-' });

  it('holds the cap, says "may have been charged" (never "Not charged"), and records a paid failure of unknown outcome; a refusal in the gateway\'s form gives the cap back', async () => {
    const workspace = await fs.realpath(await tempDir('gwi-mcp-unknown-ws-'));
    const journal = path.join(gw.dir, 'results.jsonl');
    const { client } = await launch({
      GATEWAY_IMAGES_BASE_URL: gw.emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_RECOVERY_DIR: path.join(gw.dir, 'recovery'),
      GATEWAY_IMAGES_RESULTS_JOURNAL: journal,
      GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
      GATEWAY_IMAGES_MAX_COST_PER_SESSION: '40',
    });
    const generate = async (prompt: string) =>
      (await client.callTool({ name: 'generate_image', arguments: { prompt, model: 'aurora-1', size: '64x64' } })) as ToolResult;
    try {
      // aurora-1 reserves 4 ₽ a call: each unknown outcome keeps its 4 ₽ out of the session's 40.
      for (const [i, status] of [500, 503, 524].entries()) {
        gw.emu.state.armFault({ fault: 'status', status });
        const result = await generate(`unknown ${status}`);
        const text = textOf(result);
        assert.equal(result.isError, true);
        assert.match(text, new RegExp(`HTTP ${status}`));
        assert.match(text, /may have been charged/);
        assert.doesNotMatch(text, /Not charged|Nothing was sent/);
        assert.equal((result.structuredContent?.error as { outcomeUnknown: boolean }).outcomeUnknown, true);
        assert.deepEqual(capOf(result), { spentThisSession: 4 * (i + 1), remainingThisSession: 40 - 4 * (i + 1), maxCostPerCall: 50, maxCostPerSession: 40 });
      }
      assert.equal(paidRequests(gw.emu).length, 3, 'nothing was resent');
      // The gateway's own refusal, in its form: not charged, and the cap is as it was.
      gw.emu.state.armFault({ fault: 'status', status: 400, body: '{"error":{"message":"Invalid size.","code":"invalid_value","param":"size"}}' });
      const refused = await generate('refused');
      assert.match(textOf(refused), /Not charged\./);
      assert.equal(capOf(refused).spentThisSession, 12);
    } finally {
      await client.close();
    }
    const store = new HistoryStore(journal, { load: () => resultsCode });
    const index = await store.index();
    const entries = index.createdBetween(new Date(0), new Date(Date.now() + 60_000)).map((e) => index.find(e.id)!);
    await store.close();
    assert.deepEqual(
      entries.map((e) => [e.request.prompt, e.outcomeUnknown, typeof e.failed]),
      [500, 503, 524].map((status) => [`unknown ${status}`, true, 'string']),
      'each is a paid failure of unknown outcome; the refusal is no result',
    );
    await removeDir(workspace);
  });
});

describe('MCP tools in process: a cancel before the body left, a price that rose', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ dir: 'gwi-mcp-cancel-' });
  const configOf = (workspace: string) => ({
    baseUrl: gw.emu.url,
    apiKey: DEMO_KEYS.unlimited,
    workspaceRoot: workspace,
    outputDirectory: 'out',
    maxCostPerCall: 10,
    maxCostPerSession: 20,
    timeoutMs: 15_000,
    recoveryDir: path.join(workspace, 'recovery'),
  });

  it('a reservation that rose between the check and the send is refused, and the answer says so', async () => {
    const base = await gw.client.imageModels();
    const pricier = base.map((m) => (m.id === 'aurora-1' ? { ...m, max_price_per_image: m.max_price_per_image + 1 } : m));
    let reads = 0;
    // Always stale: each use answers from the cache and reads the catalog again in the background,
    // so the job's own prepare sees the prices read after the check.
    const catalog = new CatalogCache(async () => (reads++ === 0 ? base : pricier), undefined, -1);
    const tools = new ImageTools(configOf(await fs.realpath(gw.dir)), () => gw.client, { catalog });
    await tools.listModels({});
    const failure = await caught<PaidCallFailure>(() => tools.generate({ prompt: 'a price that rose', model: 'aurora-1', size: '64x64' }));
    assert.ok(failure instanceof PaidCallFailure && failure.error instanceof ReservationRoseError, String(failure));
    assert.match(failure.message, /^Not sent: aurora-1 now reserves ₽5\.00, more than the ₽4\.00 confirmed or checked for it/);
    assert.equal(failure.sent, false);
    assert.equal(tools.cap.status().spentThisSession, 0);
    assert.equal(paidRequests(gw.emu).length, 0);
  });

  it('gives the reservation back: "Nothing was sent", the session allowance is whole', async () => {
    // Connections open only after 400 ms: the cancel lands before the body is read.
    const connect = buildConnector({});
    const slow = gw.newClient(DEMO_KEYS.unlimited, {
      dispatcher: new Agent({ connect: (options, callback) => void setTimeout(() => connect(options, callback), 400) }),
      closeDispatcher: true,
    });
    const tools = new ImageTools(configOf(await fs.realpath(gw.dir)), () => slow);

    const controller = new AbortController();
    const notes: string[] = [];
    const call = tools.generate(
      { prompt: 'cancel me early', model: 'aurora-1', size: '64x64' },
      {
        signal: controller.signal,
        // The first note comes as the call is about to be sent.
        progress: (message: string) => {
          notes.push(message);
          controller.abort();
        },
      },
    );
    const error = await caught(() => call);
    assert.match(String(error), /nothing was charged|not sent|cancelled/i);
    assert.ok(notes.length >= 1, 'no progress before sending');
    assert.deepEqual(tools.cap.status(), { maxCostPerCall: 10, maxCostPerSession: 20, spentThisSession: 0, remainingThisSession: 20 });
    assert.equal(paidRequests(gw.emu).length, 0);
  });
});
