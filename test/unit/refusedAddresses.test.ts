// Image addresses on this machine or its networks are refused (src/core/answers/addressPolicy.ts),
// over real HTTP: every form of a loopback address, names that resolve to one (also a name that
// answers a public address to the check and loopback to the connect), redirects, and through a proxy.
// A counter listens on every local address (`::`, dual stack: 127.0.0.2, 0.0.0.0, ::1 and localhost
// all reach it) and must count 0. The tests make no connection to any address off loopback: the
// "public" addresses are documentation ones (192.0.2.1), answered by an injected resolver to be
// checked, never connected to; every connection undici makes is watched.
import * as assert from 'node:assert/strict';
import * as diagnostics from 'node:diagnostics_channel';
import type { LookupAddress } from 'node:dns';
import { readFile } from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { createDispatcher } from '../../src/core/gateway/proxy';
import { downloadAgain, listRecoverable } from '../../src/core/files/recoveryFolder';
import { startForwardProxy } from '../support/forwardProxy';
import { DEMO_KEYS, gatewaySuite, type LocalServer, localServer, MemorySink, newService, TINY_PNG, waitFor } from './support/gateway';

const WHY = "images are downloaded only from public addresses or the gateway's own host";
const LOOPBACK = 'a loopback address (this machine)';

describe('Refused image addresses: loopback, private and link-local, at connect time', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ client: { maxRetries: 0 }, dir: 'gwi-refused-', models: true });
  let counter: net.Server;
  let port = 0;
  let connections = 0;
  /** Where undici connected (remote addresses) and which hosts it began to connect to. */
  const connected: string[] = [];
  const began: string[] = [];
  const onConnected = (message: unknown) => void connected.push((message as { socket: net.Socket }).socket.remoteAddress ?? '?');
  const onBeforeConnect = (message: unknown) => void began.push((message as { connectParams: { hostname: string } }).connectParams.hostname);
  /** The hosts undici began to connect to, but the gateways' (all on 127.0.0.1). */
  const offGateway = () => began.filter((host) => host !== '127.0.0.1');
  const servers: LocalServer[] = [];
  let run = 0;

  before(async () => {
    counter = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(0, '::', resolve));
    port = (counter.address() as net.AddressInfo).port;
    // The counter counts: a plain connection to 127.0.0.2 reaches it.
    net.connect(port, '127.0.0.2').on('error', () => undefined);
    await waitFor(() => connections === 1);
    diagnostics.subscribe('undici:client:connected', onConnected);
    diagnostics.subscribe('undici:client:beforeConnect', onBeforeConnect);
  });
  beforeEach(() => {
    connections = 0;
    connected.length = 0;
    began.length = 0;
  });
  afterEach(() => {
    assert.equal(connections, 0, 'nothing connected to the counter');
    for (const remote of connected) assert.ok(/^(127\.|::1$|::ffff:127\.)/.test(remote), `undici connected only on loopback, not to ${remote}`);
  });
  after(async () => {
    diagnostics.unsubscribe('undici:client:connected', onConnected);
    diagnostics.unsubscribe('undici:client:beforeConnect', onBeforeConnect);
    await Promise.all(servers.map((s) => s.close()));
    await new Promise((resolve) => counter.close(resolve));
  });

  /** A gateway on 127.0.0.1 that answers its paid request with `urls(base)` and serves TINY_PNG at /final.png, /hop* as redirects. */
  const scripted = async (urls: (base: string) => string[], redirects: Record<string, string> = {}) => {
    let base = '';
    const server = await localServer((req, res) => {
      if (req.method === 'POST') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: urls(base).map((url) => ({ url })), usage: { cost_rub: 2.5, balance: 97.5 } }));
      } else if (req.url === '/final.png') res.writeHead(200, { 'content-type': 'image/png' }).end(TINY_PNG);
      else if (redirects[req.url ?? '']) res.writeHead(302, { location: redirects[req.url ?? '']! }).end();
      else res.writeHead(404).end();
    });
    base = server.url;
    servers.push(server);
    return server;
  };
  /**
   * A resolver that answers from `table` and notes each name asked. The first answers of a name go
   * only to a check made before undici began to connect to it; from then on the last one: so a
   * "public" answer is never connected to, whatever the code under test does with it.
   */
  const resolver = (table: Record<string, string[][]>) => {
    const asked: string[] = [];
    const lookup = async (name: string): Promise<LookupAddress[]> => {
      asked.push(name);
      const answers = table[name];
      if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      const answer = answers.length > 1 && !began.includes(name) ? answers.shift()! : answers.at(-1)!;
      return answer.map((address) => ({ address, family: net.isIP(address) }));
    };
    return { asked, lookup };
  };
  const job = (out: string) => ({
    request: { model: 'sketch-mini', prompt: `refused ${run}`, size: '64x64', n: 1 },
    output: { directory: out, pattern: 'img-{index}' },
  });
  const folders = () => {
    run++;
    return { out: path.join(gw.dir, `out-${run}`), recovery: path.join(gw.dir, `rec-${run}`) };
  };

  it('every form of a loopback address is refused with zero connections; the addresses wait for Recover, which refuses them again', async () => {
    const forms = [
      `http://127.0.0.2:${port}/a.png`,
      `http://2130706434:${port}/a.png`,
      `http://0177.0.0.2:${port}/a.png`,
      `http://0x7f.2:${port}/a.png`,
      `http://127.2:${port}/a.png`,
      `http://[::ffff:127.0.0.2]:${port}/a.png`,
      `http://[::ffff:7f00:2]:${port}/a.png`,
      `http://[::1]:${port}/a.png`,
      `http://0.0.0.0:${port}/a.png`,
      `http://0:${port}/a.png`,
      `http://[::]:${port}/a.png`,
      `http://localhost:${port}/a.png`,
      `https://localhost:${port}/a.png`,
    ];
    const gateway = await scripted(() => forms);
    const { out, recovery } = folders();
    const client = gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url });
    const rig = newService(client, gw.models, recovery);
    const result = await rig.service.run(job(out));
    assert.deepEqual(result.files, []);
    assert.deepEqual(rig.usages, [{ cost_rub: 2.5, balance: 97.5 }], 'charged: the usage counts');
    const shown = (address: string) => address.replace(`:${port}`, '');
    const expected = [
      ...['127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.2'].map((a) => `refused: ${a} is ${LOOPBACK}; ${WHY}`),
      `refused: ::ffff:7f00:2 is ${LOOPBACK}; ${WHY}`,
      `refused: ::ffff:7f00:2 is ${LOOPBACK}; ${WHY}`,
      `refused: ::1 is ${LOOPBACK}; ${WHY}`,
      ...['0.0.0.0', '0.0.0.0', '::'].map((a) => `refused: ${a} is an unspecified address (this machine); ${WHY}`),
      `refused: localhost resolves to 127.0.0.1, ${LOOPBACK}; ${WHY}`,
      `refused: localhost resolves to 127.0.0.1, ${LOOPBACK}; ${WHY}`,
    ];
    const recovered = result.recovered!;
    for (const [i, reason] of expected.entries()) {
      const url = new URL(forms[i]!);
      assert.ok(recovered.reason.includes(`image ${i + 1} at ${url.origin}${url.pathname}: ${reason}`), `${shown(forms[i]!)} in ${recovered.reason}`);
    }
    assert.deepEqual(
      gateway.requests.map((r) => `${r.method} ${r.url}`),
      ['POST /v1/images/generations'],
      'nothing but the paid request was sent',
    );
    // Kept for Recover as written; Recover refuses them the same way.
    const [waiting] = await listRecoverable(recovery);
    assert.deepEqual(
      waiting?.files.map((f) => f.download?.url),
      forms,
    );
    assert.deepEqual(
      waiting?.files.map((f) => f.download?.failure),
      expected,
    );
    const again = await downloadAgain(waiting, gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url }));
    assert.equal(again.downloaded, 0);
    assert.deepEqual(again.failures, expected);
    assert.deepEqual(offGateway(), [], 'undici never began a connection to any of them');
  });

  it('a name that resolves to a public address for the check and to loopback for the connect is refused at connect time', async () => {
    const { asked, lookup } = resolver({
      'rebind.test': [['192.0.2.1'], ['127.0.0.2']],
      'loopback.test': [['127.0.0.2']],
      'mixed.test': [['192.0.2.1', '::1']],
    });
    const gateway = await scripted(() => [`http://rebind.test:${port}/a.png`, `http://loopback.test:${port}/a.png?sig=1`, `https://mixed.test:${port}/a.png`]);
    const sink = new MemorySink();
    const meta = await gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url, lookup }).generate({ model: 'sketch-mini', prompt: 'rebind' }, sink);
    assert.deepEqual(
      meta.images.map((i) => i.downloadFailure),
      [
        `refused: rebind.test resolves to 127.0.0.2, ${LOOPBACK}; ${WHY}`,
        `refused: loopback.test resolves to 127.0.0.2, ${LOOPBACK}; ${WHY}`,
        `refused: mixed.test resolves to ::1, ${LOOPBACK}; ${WHY}`,
      ],
    );
    // rebind.test: once for the check (192.0.2.1, never connected to), once as undici connected (127.0.0.2: refused).
    assert.deepEqual(asked, ['rebind.test', 'rebind.test', 'loopback.test', 'mixed.test']);
    assert.deepEqual(offGateway(), ['rebind.test'], 'the connection began and stopped at its lookup');
    assert.equal(sink.images.size, 0);
    assert.deepEqual(meta.usage, { cost_rub: 2.5, balance: 97.5 });
  });

  it('each redirect is checked the same way: to a literal, another form, or a name that turns to loopback', async () => {
    const { asked, lookup } = resolver({ 'rebind.test': [['203.0.113.1'], ['127.0.0.2']] });
    const gateway = await scripted((base) => [`${base}/hop-literal`, `${base}/hop-decimal`, `${base}/hop-name`, `${base}/hop-home`], {
      '/hop-literal': `http://127.0.0.2:${port}/a.png`,
      '/hop-decimal': `http://2130706434:${port}/a.png`,
      '/hop-name': `http://rebind.test:${port}/a.png`,
      '/hop-home': '/final.png',
    });
    const sink = new MemorySink();
    const meta = await gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url, lookup }).generate({ model: 'sketch-mini', prompt: 'hops' }, sink);
    assert.deepEqual(
      meta.images.map((i) => i.downloadFailure),
      [
        `refused: 127.0.0.2 is ${LOOPBACK}; ${WHY}`,
        `refused: 127.0.0.2 is ${LOOPBACK}; ${WHY}`,
        `refused: rebind.test resolves to 127.0.0.2, ${LOOPBACK}; ${WHY}`,
        undefined,
      ],
    );
    assert.ok(sink.images.get(3)?.equals(TINY_PNG), "a redirect on the gateway's host is followed");
    assert.deepEqual(asked, ['rebind.test', 'rebind.test']);
    assert.deepEqual(
      gateway.requests.map((r) => `${r.method} ${r.url}`),
      ['POST /v1/images/generations', 'GET /hop-literal', 'GET /hop-decimal', 'GET /hop-name', 'GET /hop-home', 'GET /final.png'],
    );
  });

  it("the gateway's own host is the exception, by the name its base URL gives: resolved at connect time; its address under another name is refused", async () => {
    const { asked, lookup } = resolver({ localhost: [['127.0.0.1']] });
    const gateway = await scripted((base) => [base.replace('127.0.0.1', 'localhost') + '/final.png', `${base}/final.png`]);
    const client = gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url.replace('127.0.0.1', 'localhost'), lookup });
    const sink = new MemorySink();
    const meta = await client.generate({ model: 'sketch-mini', prompt: 'home' }, sink);
    assert.deepEqual(
      meta.images.map((i) => i.downloadFailure),
      [undefined, `refused: 127.0.0.1 is ${LOOPBACK}; ${WHY}`],
    );
    assert.ok(sink.images.get(0)?.equals(TINY_PNG));
    assert.deepEqual(asked, ['localhost'], "the gateway's name is not checked, but its download connection resolves it through the policy");
    assert.deepEqual(
      gateway.requests.map((r) => `${r.method} ${r.url} key:${r.headers.authorization === `Bearer ${DEMO_KEYS.unlimited}`}`),
      ['POST /v1/images/generations key:true', 'GET /final.png key:true'],
    );
  });

  it('through a proxy: literals and names are refused before anything goes to the proxy; a noProxy name is checked at connect time; the gateway host still downloads through it', async () => {
    const proxy = await startForwardProxy();
    try {
      const { asked, lookup } = resolver({ 'loopback.test': [['127.0.0.2']], 'direct.test': [['192.0.2.1'], ['127.0.0.2']] });
      const gateway = await scripted((base) => [
        `http://127.0.0.2:${port}/a.png`,
        `http://loopback.test:${port}/a.png`,
        `http://direct.test:${port}/a.png`,
        `${base}/final.png`,
      ]);
      const client = gw.newClient(DEMO_KEYS.unlimited, {
        baseUrl: gateway.url,
        lookup,
        dispatcher: createDispatcher({ timeoutMs: 15_000, env: {}, proxy: proxy.url, noProxy: ['direct.test'] }),
        closeDispatcher: true,
      });
      const sink = new MemorySink();
      const meta = await client.generate({ model: 'sketch-mini', prompt: 'proxied' }, sink);
      assert.deepEqual(
        meta.images.map((i) => i.downloadFailure),
        [
          `refused: 127.0.0.2 is ${LOOPBACK}; ${WHY}`,
          `refused: loopback.test resolves to 127.0.0.2, ${LOOPBACK}; ${WHY}`,
          `refused: direct.test resolves to 127.0.0.2, ${LOOPBACK}; ${WHY}`,
          undefined,
        ],
      );
      assert.ok(sink.images.get(3)?.equals(TINY_PNG));
      assert.deepEqual(asked, ['loopback.test', 'direct.test', 'direct.test'], 'direct.test: the check, then its direct connection');
      assert.deepEqual(offGateway(), ['direct.test']);
      assert.deepEqual(
        proxy.requests.map((r) => `${r.method} ${r.url}`),
        [`POST ${gateway.url}/v1/images/generations`, `GET ${gateway.url}/final.png`],
      );
    } finally {
      await proxy.close();
    }
  });

  it('a refused address in a Recover listing and the log: the reason is kept in the manifest as the message says it', async () => {
    const gateway = await scripted(() => [`http://[::ffff:127.0.0.2]:${port}/a.png?X-Signature=abc`]);
    const { out, recovery } = folders();
    const client = gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url });
    const result = await newService(client, gw.models, recovery).service.run(job(out));
    const manifest = JSON.parse(await readFile(result.recovered!.manifestPath, 'utf8')) as { files: { download?: { url: string; failure: string } }[] };
    assert.deepEqual(manifest.files[0]?.download?.url, `http://[::ffff:127.0.0.2]:${port}/a.png?X-Signature=abc`, 'the full address, for Recover');
    assert.equal(manifest.files[0]?.download?.failure, `refused: ::ffff:7f00:2 is ${LOOPBACK}; ${WHY}`);
    assert.ok(result.recovered!.reason.includes(`image 1 at http://[::ffff:7f00:2]:${port}/a.png?…: refused`), result.recovered!.reason);
    const logged = client.calls.filter((c) => c.method === 'GET');
    assert.deepEqual(
      logged.map((c) => [c.path, c.error]),
      [[`http://[::ffff:7f00:2]:${port}/a.png?…`, 'download']],
    );
  });
});
