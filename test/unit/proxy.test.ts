// Proxy support: real calls through a real forwarding proxy on loopback (test/support/forwardProxy.ts).
// What undici does is asserted as observed: http targets reach the proxy as absolute-URI requests
// (proxyTunnel false), https targets through a CONNECT tunnel.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Dispatcher } from 'undici';
import { GatewayClient } from '../../src/core/client/client';
import { ConnectionError, GatewayError, TimeoutError, ValidationError } from '../../src/core/gateway/errors';
import { createDispatcher, type ProxySettings, resolveProxy } from '../../src/core/gateway/proxy';
import { type ForwardProxy, startForwardProxy } from '../support/forwardProxy';
import { ProxyAuthenticationError } from '../../src/core/gateway/networkErrors';
import { caught, DEMO_KEYS, localServer, MemorySink, paidRequests, type RunningEmulator, SMALL, startEmulator } from './support/gateway';

describe('proxy support (createDispatcher)', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let proxy: ForwardProxy;
  let other: ForwardProxy;
  const dispatchers: Dispatcher[] = [];

  const clientVia = (settings: Omit<ProxySettings, 'timeoutMs'> & { timeoutMs?: number }, baseUrl = emu.url) => {
    const dispatcher = createDispatcher({ timeoutMs: 15_000, env: {}, ...settings });
    dispatchers.push(dispatcher);
    return new GatewayClient({
      baseUrl,
      getApiKey: () => DEMO_KEYS.unlimited,
      dispatcher,
      retryBaseDelayMs: 5,
      maxRetries: 0,
      freeTimeoutMs: 5_000,
      paidTimeoutMs: 15_000,
    });
  };

  before(async () => {
    emu = await startEmulator();
    proxy = await startForwardProxy();
    other = await startForwardProxy();
  });
  beforeEach(() => {
    emu.state.reset();
    proxy.reset();
    other.reset();
    proxy.options = {};
  });
  after(async () => {
    await Promise.all(dispatchers.map((d) => d.close().catch(() => undefined)));
    await Promise.all([proxy?.close(), other?.close(), emu?.close()]);
  });

  it('sends free and paid calls to an http:// gateway through http.proxy as absolute-URI requests', async () => {
    const client = clientVia({ proxy: proxy.url });
    const models = await client.imageModels();
    assert.ok(models.length > 0);
    const balance = await client.balance();
    const sink = new MemorySink();
    const meta = await client.generate({ model: 'aurora-1', prompt: 'through the proxy', size: SMALL }, sink);
    assert.equal(sink.images.size, 1);
    assert.equal(meta.usage?.balance, emu.state.balanceRub);
    assert.ok(balance.balance > emu.state.balanceRub, 'the generation was charged');
    assert.deepEqual(
      proxy.requests.map((r) => `${r.method} ${r.url}`),
      [`GET ${emu.url}/public/gateway/models/images`, `GET ${emu.url}/v1/gateway/balance`, `POST ${emu.url}/v1/images/generations`],
    );
    assert.equal(proxy.tunnels.length, 0, 'an http target is not tunnelled (proxyTunnel false)');
    assert.equal(paidRequests(emu).length, 1);
  });

  it('uses HTTP_PROXY, or HTTPS_PROXY alone, from the environment when http.proxy is not set', async () => {
    await clientVia({ env: { HTTP_PROXY: proxy.url } }).balance();
    assert.equal(proxy.count(), 1);
    await clientVia({ env: { https_proxy: proxy.url } }).balance();
    assert.equal(proxy.count(), 2, 'HTTPS_PROXY alone serves http targets too, as in VS Code');
    // An empty variable does not hide the next one.
    await clientVia({ env: { HTTPS_PROXY: '', HTTP_PROXY: proxy.url } }).balance();
    assert.equal(proxy.count(), 3);
    assert.equal(other.count(), 0);
  });

  it('prefers http.proxy over the environment', async () => {
    await clientVia({ proxy: proxy.url, env: { HTTP_PROXY: other.url, HTTPS_PROXY: other.url } }).balance();
    assert.equal(proxy.count(), 1);
    assert.equal(other.count(), 0);
  });

  it('bypasses the proxy for NO_PROXY and http.noProxy hosts (the proxy counts nothing)', async () => {
    await clientVia({ env: { HTTP_PROXY: proxy.url, NO_PROXY: 'example.org,127.0.0.1' } }).balance();
    await clientVia({ env: { HTTP_PROXY: proxy.url, no_proxy: `127.0.0.1:${emu.port}` } }).balance();
    await clientVia({ proxy: proxy.url, noProxy: ['127.0.0.1'] }).balance();
    await clientVia({ proxy: proxy.url, env: { NO_PROXY: '127.0.0.1' } }).balance();
    await clientVia({ proxy: proxy.url, noProxy: ['other.example', '*'] }).balance();
    await clientVia({ proxy: proxy.url, noProxy: ['localhost'] }, emu.url.replace('127.0.0.1', 'localhost')).balance();
    assert.equal(proxy.count(), 0);
    // A different port in the entry does not bypass.
    await clientVia({ proxy: proxy.url, noProxy: ['127.0.0.1:1'] }).balance();
    assert.equal(proxy.count(), 1);
  });

  it('accepts a proxy without a scheme and sends credentials from the URL as Proxy-Authorization', async () => {
    await clientVia({ proxy: `127.0.0.1:${proxy.port}` }).balance();
    await clientVia({ proxy: `http://user:pa%3Ass@127.0.0.1:${proxy.port}` }).balance();
    await clientVia({ proxy: proxy.url, proxyAuthorization: 'Basic dXNlcjpwYXNz' }).balance();
    assert.deepEqual(
      proxy.requests.map((r) => r.proxyAuthorization),
      [false, true, true],
    );
  });

  it('a proxy that asks for credentials (407): says which setting fixes it, "not sent" (never "may have been charged"), not retried', async () => {
    const asking = await localServer((_req, res) => void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="corp"' }).end());
    try {
      const client = clientVia({ proxy: asking.url });
      const paid = await caught(() => client.generate({ model: 'aurora-1', prompt: 'no credentials', size: SMALL }, new MemorySink()));
      const free = await caught(() => clientVia({ proxy: asking.url }).balance());
      for (const error of [paid, free]) {
        assert.ok(error instanceof ProxyAuthenticationError, String(error));
        assert.equal(error.outcomeUnknown, false);
        assert.match(error.message, /http\.proxyAuthorization/);
      }
      assert.equal(asking.requests.length, 2, 'each tried once');
      assert.equal(paidRequests(emu).length, 0);
    } finally {
      await asking.close();
    }
  });

  it('refuses a malformed proxy with a ValidationError that does not echo it', () => {
    const error = caughtSync(() => createDispatcher({ proxy: 'http://user:s3cret@[bad', timeoutMs: 1000, env: {} }));
    assert.ok(error instanceof ValidationError);
    assert.equal(error.field, 'http.proxy');
    assert.doesNotMatch(error.message, /s3cret/);
    const socks = caughtSync(() => createDispatcher({ timeoutMs: 1000, env: { HTTPS_PROXY: 'socks5://127.0.0.1:1' } }));
    assert.ok(socks instanceof ValidationError);
    assert.equal(socks.field, 'HTTPS_PROXY');
  });

  it('resolves which proxy serves which scheme', () => {
    assert.deepEqual(resolveProxy({ env: {} }), { noProxy: '' });
    assert.deepEqual(resolveProxy({ env: { HTTP_PROXY: 'http://a:1', HTTPS_PROXY: 'http://b:2', NO_PROXY: 'x, y' } }), {
      httpProxy: 'http://a:1/',
      httpsProxy: 'http://b:2/',
      noProxy: 'x,y',
    });
    assert.deepEqual(resolveProxy({ proxy: 'http://c:3', noProxy: ['z'], env: { HTTP_PROXY: 'http://a:1', no_proxy: 'w' } }), {
      httpProxy: 'http://c:3/',
      httpsProxy: 'http://c:3/',
      noProxy: 'z,w',
    });
  });

  it('a paid generation is never resent when the proxy drops the connection mid-answer: outcome unknown', async () => {
    proxy.options = { dropPaidAnswers: true };
    const client = clientVia({ proxy: proxy.url });
    const sink = new MemorySink();
    const error = await caught<GatewayError>(() => client.generate({ model: 'aurora-1', prompt: 'dropped by the proxy', size: SMALL, n: 2 }, sink));
    assert.ok(error instanceof GatewayError, String(error));
    assert.ok(error instanceof ConnectionError, `${error.name}: ${error.message}`);
    assert.equal(error.outcomeUnknown, true);
    assert.equal(proxy.dropped.length, 1);
    assert.equal(proxy.requests.filter((r) => r.method === 'POST').length, 1, 'the proxy saw one paid POST');
    const paid = paidRequests(emu);
    assert.equal(paid.length, 1, 'the gateway saw one paid request: no automatic resend');
    assert.ok(paid[0]!.chargedRub > 0, 'the gateway charged it (which is why the outcome is unknown)');
    // The cut may fall after the first image ended: such an image is complete and kept (it was
    // paid for); what was cut off mid-image never counts as an image.
    assert.ok(sink.images.size < 2, 'the cut image was presented as complete');
    for (const png of sink.images.values()) {
      assert.ok(
        png.subarray(-12, -8).equals(Buffer.alloc(4)) && png.toString('latin1', png.length - 8, png.length - 4) === 'IEND',
        'a kept image is a whole PNG',
      );
    }
  });

  describe('a connection closed as it is reused (tinyproxy closes each one after its answer, late under load)', () => {
    let front: ForwardProxy | undefined;
    afterEach(async () => {
      await front?.close();
      front = undefined;
    });

    /** Free calls, then paid ones, then free ones again, through `client`; every paid call must go through. */
    async function freeAndPaid(client: GatewayClient, through: ForwardProxy): Promise<void> {
      await client.balance();
      for (let i = 0; i < 3; i++) {
        const sink = new MemorySink();
        await client.generate({ model: 'aurora-1', prompt: `paid call ${i}`, size: SMALL }, sink);
        assert.equal(sink.images.size, 1);
      }
      // The connection of the first balance call is the one reused here: cut, then retried (a free GET).
      await client.balance();
      assert.equal(paidRequests(emu).length, 3, 'each paid call reached the gateway once');
      assert.deepEqual(
        through.cutOnReuse.map((r) => r.method),
        ['GET'],
        'no paid POST was ever written into a reused connection; the one free GET that was is retried',
      );
    }

    it('through http.proxy: each paid POST opens its own connection, so none is cut', async () => {
      proxy.options = { oneRequestPerConnection: true };
      const dispatcher = createDispatcher({ timeoutMs: 15_000, env: {}, proxy: proxy.url });
      dispatchers.push(dispatcher);
      await freeAndPaid(new GatewayClient({ baseUrl: emu.url, getApiKey: () => DEMO_KEYS.unlimited, dispatcher, retryBaseDelayMs: 5 }), proxy);
    });

    it('direct (a gateway front that does the same), with the dispatcher the client makes itself', async () => {
      front = await startForwardProxy({ oneRequestPerConnection: true, reverseTo: emu.url });
      const client = new GatewayClient({ baseUrl: front.url, getApiKey: () => DEMO_KEYS.unlimited, retryBaseDelayMs: 5 });
      try {
        await freeAndPaid(client, front);
      } finally {
        await client.close();
      }
    });
  });

  it("applies the request deadline through the proxy (not undici's 300 s default)", async () => {
    emu.state.armFault({ fault: 'latency', latencyMs: 3_000 });
    const client = clientVia({ proxy: proxy.url, timeoutMs: 400 });
    const error = await caught<GatewayError>(() => client.generate({ model: 'aurora-1', prompt: 'slow', size: SMALL }, new MemorySink()));
    // The dispatcher's 400 ms deadline was applied, not how long the call took (a clock bound fails on a
    // busy machine): the answer comes after 3 s and the client's own deadline is 15 s, so only a deadline
    // under 3 s applied through the proxy makes this call time out; with undici's default it succeeds.
    assert.ok(error instanceof TimeoutError, `${(error as Error).name}: ${(error as Error).message}`);
    assert.equal(error.outcomeUnknown, true);
    assert.equal(proxy.count(), 1);
  });

  describe('https targets (CONNECT) and proxyStrictSSL', () => {
    let tlsServer: https.Server | undefined;
    let tlsUrl = '';
    let certDir = '';

    before(function () {
      try {
        certDir = mkdtempSync(path.join(tmpdir(), 'gwi-proxy-cert-'));
        execFileSync(
          'openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'rsa:2048',
            '-nodes',
            '-days',
            '1',
            '-subj',
            '/CN=127.0.0.1',
            '-addext',
            'subjectAltName=IP:127.0.0.1',
            '-keyout',
            path.join(certDir, 'key.pem'),
            '-out',
            path.join(certDir, 'cert.pem'),
          ],
          { stdio: 'ignore' },
        );
      } catch {
        this.skip(); // no openssl: these cases cannot run here
      }
    });
    before(async function () {
      if (!certDir) this.skip();
      // A TLS front for the emulator with a self-signed certificate.
      tlsServer = https.createServer({ key: readFileSync(path.join(certDir, 'key.pem')), cert: readFileSync(path.join(certDir, 'cert.pem')) }, (req, res) => {
        const upstream = http.request({ host: '127.0.0.1', port: emu.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        req.pipe(upstream);
      });
      await new Promise<void>((resolve) => tlsServer!.listen(0, '127.0.0.1', resolve));
      tlsUrl = `https://127.0.0.1:${(tlsServer.address() as AddressInfo).port}`;
    });
    after(async () => {
      tlsServer?.closeAllConnections();
      await new Promise<void>((resolve) => (tlsServer ? tlsServer.close(() => resolve()) : resolve()));
      if (certDir) rmSync(certDir, { recursive: true, force: true });
    });

    it('tunnels with CONNECT and verifies the certificate by default', async () => {
      const error = await caught<GatewayError>(() => clientVia({ proxy: proxy.url }, tlsUrl).balance());
      assert.ok(error instanceof ConnectionError, String(error));
      assert.equal(proxy.tunnels.length, 1);
      assert.equal(proxy.tunnels[0]!.target, tlsUrl.slice('https://'.length));
      assert.equal(proxy.requests.length, 0, 'nothing readable went through the proxy');
    });

    it('a CONNECT the proxy refuses: its 407 says which setting fixes it (not "cancelled"), not retried; its 502 is a connection error; neither was sent', async () => {
      proxy.options = { requireAuthorization: 'Basic Y29ycDpwYXNz' };
      const client = clientVia({ proxy: proxy.url, strictSSL: false }, tlsUrl);
      const paid = await caught(() => client.generate({ model: 'aurora-1', prompt: 'no credentials', size: SMALL }, new MemorySink()));
      const free = await caught(() => client.balance());
      for (const error of [paid, free]) {
        assert.ok(error instanceof ProxyAuthenticationError, String(error));
        assert.equal(error.outcomeUnknown, false);
        assert.match(error.message, /http\.proxyAuthorization/);
      }
      assert.deepEqual(
        proxy.tunnels.map((t) => t.refused),
        [true, true],
        'each tried once',
      );
      proxy.options = {};
      // Nothing listens on port 1: the proxy answers the CONNECT with 502.
      const unreachable = await caught(() =>
        clientVia({ proxy: proxy.url }, 'https://127.0.0.1:1').generate({ model: 'aurora-1', prompt: 'x', size: SMALL }, new MemorySink()),
      );
      assert.ok(unreachable instanceof ConnectionError && !(unreachable instanceof ProxyAuthenticationError), String(unreachable));
      assert.match(unreachable.message, /Could not reach the gateway: Proxy response \(502\)/);
      assert.equal(unreachable.outcomeUnknown, false);
      assert.equal(paidRequests(emu).length, 0);
    });

    it('proxyStrictSSL false relaxes verification for proxied connections only', async () => {
      const balance = await clientVia({ proxy: proxy.url, strictSSL: false }, tlsUrl).balance();
      assert.equal(balance.balance, emu.state.balanceRub);
      assert.equal(proxy.tunnels.length, 1);
      const sink = new MemorySink();
      await clientVia({ env: { HTTPS_PROXY: proxy.url }, strictSSL: false }, tlsUrl).generate({ model: 'aurora-1', prompt: 'tls', size: SMALL }, sink);
      assert.equal(sink.images.size, 1);
      assert.equal(proxy.tunnels.length, 2);
      // Direct connections stay verified: a noProxy host, and no proxy at all.
      const bypass = await caught(() => clientVia({ proxy: proxy.url, strictSSL: false, noProxy: ['127.0.0.1'] }, tlsUrl).balance());
      assert.ok(bypass instanceof ConnectionError && /certificate|self.signed/i.test(bypass.message), String(bypass));
      const direct = await caught(() => clientVia({ strictSSL: false }, tlsUrl).balance());
      assert.ok(direct instanceof ConnectionError && /certificate|self.signed/i.test(direct.message), String(direct));
      assert.equal(proxy.tunnels.length, 2, 'the direct calls did not use the proxy');
      // And nothing changed TLS for the rest of the process.
      assert.notEqual(process.env.NODE_TLS_REJECT_UNAUTHORIZED, '0');
    });
  });
});

function caughtSync(fn: () => unknown): Error & { field?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  assert.fail('expected an error');
}
