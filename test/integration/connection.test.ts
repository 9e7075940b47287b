// The gateway client is rebuilt when its settings change (host/gatewayConnection.ts): another base
// URL is asked from then on, and a new request timeout applies to the next request. A second,
// minimal gateway runs here in the extension host; the emulator is the first.
import * as assert from 'assert';
import * as http from 'http';
import type { AddressInfo, Socket } from 'net';
import * as vscode from 'vscode';
import { api, emulator, prepareSuite, rejectionOf, waitUntil } from './support';

interface LocalGateway {
  url: string;
  paid: number;
  close(): Promise<void>;
}

const MODEL = {
  id: 'local-1',
  min_price_per_image: 1,
  max_price_per_image: 1,
  supported_resolutions: [],
  supported_aspect_ratios: [],
  supported_quality: [],
  supported_output_formats: [],
  supported_background: [],
  supports_seed: false,
  max_n: 1,
  max_input_references: 0,
  supports_generation: true,
  supports_edit: false,
  allowed_passthrough_parameters: [],
};

/** Answers the account and catalog endpoints; a generation is accepted and never answered. */
async function startLocalGateway(): Promise<LocalGateway> {
  const sockets = new Set<Socket>();
  const gateway = { url: '', paid: 0, close: async () => undefined as void };
  const json = (res: http.ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'local' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const route = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && route === '/v1/images/generations') {
      gateway.paid++;
      req.resume(); // read the body, then say nothing
      return;
    }
    if (route === '/v1/gateway/me') return json(res, { email: 'local@example.org', id: 9 });
    if (route === '/v1/gateway/balance') return json(res, { balance: 4321.5 });
    if (route === '/v1/gateway/key') return json(res, { name: 'local' });
    if (route === '/v1/gateway/stats/summary') return json(res, { today_spend: 0, today_requests: 0, month_spend: 0, month_requests: 0, avg_daily_spend: 0 });
    if (route === '/public/gateway/models/images') return json(res, { object: 'list', data: [MODEL] });
    if (route === '/public/gateway/models') return json(res, { images: [MODEL] });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Not here.', type: 'not_found', code: 'not_found' } }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gateway.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return gateway;
}

describe('Gateway client rebuilt on settings change', function () {
  this.timeout(40_000);
  const config = () => vscode.workspace.getConfiguration('gatewayImages');
  let local: LocalGateway;

  async function setting(name: string, value: unknown): Promise<void> {
    await config().update(name, value, vscode.ConfigurationTarget.Global);
    await waitUntil(() => config().get(name) === (value ?? config().inspect(name)?.defaultValue), 5_000, `${name} applied`);
  }

  before(async () => {
    await prepareSuite();
    local = await startLocalGateway();
  });

  after(async () => {
    await setting('requestTimeoutSeconds', undefined);
    await setting('baseUrl', emulator().url);
    await (await api()).refreshAccount();
    await local?.close();
  });

  it('another base URL: the account is read from the new gateway, and from the old one again after switching back', async () => {
    const extension = await api();
    const before = await extension.refreshAccount();
    assert.notStrictEqual(before.balance, 4321.5, 'the emulator answered like the local gateway');

    await setting('baseUrl', local.url);
    const there = await extension.refreshAccount();
    assert.strictEqual(there.balance, 4321.5);
    assert.strictEqual(there.user?.email, 'local@example.org');

    await setting('baseUrl', emulator().url);
    const back = await extension.refreshAccount();
    assert.strictEqual(back.balance, before.balance);
    assert.strictEqual(back.user?.email, before.user?.email);
  });

  it('a shorter request timeout applies to the next request (the client made with the old one is replaced)', async () => {
    const extension = await api();
    await setting('requestTimeoutSeconds', 600);
    await setting('baseUrl', local.url);
    // The client for this gateway now exists, made with the 600 s timeout.
    assert.strictEqual((await extension.refreshAccount()).balance, 4321.5);

    await setting('requestTimeoutSeconds', 1);
    const error = await rejectionOf(extension.generate({ model: 'local-1', prompt: 'Never answered' }));
    assert.strictEqual(local.paid, 1, 'the generation did not reach the local gateway');
    // The deadline that was applied, not how long the call took (a busy machine makes any clock bound flaky).
    assert.strictEqual(error.kind, 'timeout', `${error.kind}: ${error.message}`);
    assert.strictEqual((error as { timeoutMs?: number }).timeoutMs, 1000, `the old 600 s timeout is still in force: ${error.message}`);
  });

  it('a client taken before a settings change still sends: a job that took it (then wrote its in-flight record) is not refused as "closed"', async () => {
    const testing = (await api()).testing;
    assert.ok(testing, 'the extension runs in test mode');
    await setting('requestTimeoutSeconds', 300);
    const held = await testing.gatewayClient();
    // Any change that rebuilds the client, as a person's edit of the settings does while a job runs.
    await setting('requestTimeoutSeconds', 200);
    assert.notStrictEqual(await testing.gatewayClient(), held, 'the client was not rebuilt');
    const balance = await held.balance();
    assert.strictEqual(typeof balance.balance, 'number');
  });
});
