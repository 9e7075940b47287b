// The MCP server connects as the extension does: VS Code's `http.*` settings reach it as variables
// (config.ts, set by the definition provider or by hand), and a proxy's 407 is the proxy's own
// answer, so it never uses up the agents' spending cap. The server runs as `node dist/mcp.js` under
// the SDK's client, against the emulator behind a real forwarding proxy on loopback.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ConnectionSettings } from '../../src/core/gateway/proxy';
import { type ConfigError, connectionEnvironment, connectionSecrets, readConnection } from '../../src/mcp/server/config';
import { type ForwardProxy, startForwardProxy } from '../support/forwardProxy';
import { DEMO_KEYS, listFiles, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir } from './support/gateway';
import { capOf, launch, type ServerOutput, textOf, type ToolResult } from './support/mcp';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('MCP server behind a proxy that asks for credentials', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let proxy: ForwardProxy;
  let workspace: string;
  let recovery: string;
  const running: Client[] = [];
  // Credentials that exist only in this test: they must appear nowhere the server writes.
  const password = `pw-${randomBytes(9).toString('hex')}`;
  const credentials = basic('agent', password);

  const env = (extra: Record<string, string> = {}) => ({
    GATEWAY_IMAGES_BASE_URL: emu.url,
    GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
    GATEWAY_IMAGES_WORKSPACE: workspace,
    GATEWAY_IMAGES_RECOVERY_DIR: recovery,
    GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
    HTTP_PROXY: proxy.url,
    ...extra,
  });
  const start = async (extra: Record<string, string> = {}): Promise<{ client: Client; output: ServerOutput }> => {
    const server = await launch(env(extra));
    running.push(server.client);
    return server;
  };
  const generate = async (client: Client, prompt: string) =>
    (await client.callTool({ name: 'generate_image', arguments: { prompt, model: 'aurora-1', size: '64x64' } })) as ToolResult;

  beforeEach(async () => {
    emu = await startEmulator();
    proxy = await startForwardProxy();
    workspace = await fs.realpath(await tempDir('gwi-mcp-proxy-'));
    recovery = await tempDir('gwi-mcp-proxy-recovery-');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.close()));
    await Promise.all([emu.close(), proxy.close()]);
    await Promise.all([workspace, recovery].map((d) => removeDir(d)));
  });

  it("a proxy's 407 on an http:// gateway leaves the session cap whole, call after call, and each answer says nothing was charged; with GATEWAY_IMAGES_PROXY_AUTHORIZATION the call works", async () => {
    const { client } = await start({ GATEWAY_IMAGES_MAX_COST_PER_SESSION: '10' });
    // The catalog is read (and cached) while the proxy lets everyone through; then it asks for credentials.
    assert.ok(!(await client.callTool({ name: 'list_models', arguments: {} })).isError);
    proxy.options = { requireAuthorization: credentials };
    // Each call reserves 4 ₽ of the 10 ₽ session: counted in full, the third would be refused by the cap.
    for (let call = 1; call <= 4; call++) {
      const result = await generate(client, `refused ${call}`);
      const text = textOf(result);
      assert.equal(result.isError, true, text);
      assert.deepEqual(capOf(result), { spentThisSession: 0, remainingThisSession: 10, maxCostPerCall: 50, maxCostPerSession: 10 }, `call ${call}: ${text}`);
      assert.match(text, /407 Proxy Authentication Required/);
      assert.match(text, /Not charged: the proxy refused the request before it reached the gateway\./);
      assert.doesNotMatch(text, /may have been charged/);
      assert.match(text, /For this server: set GATEWAY_IMAGES_PROXY_AUTHORIZATION/);
      assert.equal((result.structuredContent?.error as { outcomeUnknown: boolean }).outcomeUnknown, false);
    }
    const refusedPosts = proxy.requests.filter((r) => r.method === 'POST' && r.refused);
    assert.equal(refusedPosts.length, 4, 'each paid call went to the proxy once, as an absolute-URI request');
    assert.equal(paidRequests(emu).length, 0, 'nothing reached the gateway');

    const withCredentials = await start({ GATEWAY_IMAGES_MAX_COST_PER_SESSION: '10', GATEWAY_IMAGES_PROXY_AUTHORIZATION: credentials });
    const result = await generate(withCredentials.client, 'with credentials');
    assert.ok(!result.isError, textOf(result));
    const [paid] = paidRequests(emu);
    assert.ok(paid && paid.chargedRub > 0);
    assert.equal(capOf(result).spentThisSession, paid.chargedRub);
    assert.ok(proxy.requests.some((r) => r.method === 'POST' && r.proxyAuthorization && !r.refused));
  });

  it("the proxy's credentials never appear in the server's stderr, its answers or its files (redacted like the key)", async () => {
    proxy.options = { requireAuthorization: credentials };
    const { client, output } = await start({ GATEWAY_IMAGES_PROXY_AUTHORIZATION: credentials });
    assert.ok(!(await generate(client, 'through the proxy')).isError);
    // An agent that read them somewhere and sends them back: the refusal names the model it got.
    const token = credentials.slice('Basic '.length);
    for (const model of [password, token, credentials]) {
      const echoed = (await client.callTool({ name: 'estimate_cost', arguments: { prompt: 'x', model } })) as ToolResult;
      assert.equal(echoed.isError, true);
      assert.match(textOf(echoed), /\*\*\*/, 'the refusal no longer names the model it got: this case proves nothing');
    }
    // Credentials in the proxy's URL are kept out the same way.
    const inUrl = await start({ HTTP_PROXY: `http://agent:${password}@127.0.0.1:${proxy.port}` });
    assert.ok(!(await generate(inUrl.client, 'credentials in the URL')).isError);
    assert.match(textOf((await inUrl.client.callTool({ name: 'estimate_cost', arguments: { prompt: 'x', model: password } })) as ToolResult), /\*\*\*/);

    assert.ok(output.stderr.includes('ready:') && output.stderr.includes('with credentials'), output.stderr);
    for (const { stderr, received } of [output, inUrl.output]) {
      for (const secret of [password, token]) {
        assert.ok(!stderr.includes(secret), `a credential is in stderr:\n${stderr}`);
        assert.ok(!received.some((m) => m.includes(secret)), 'a credential is in the output');
      }
    }
    for (const dir of [workspace, recovery])
      for (const file of await listFiles(dir)) assert.ok(!(await fs.readFile(`${dir}/${file}`)).includes(password), `a credential is in ${file}`);
  });

  it('GATEWAY_IMAGES_NO_PROXY and GATEWAY_IMAGES_PROXY_SUPPORT=off reach the gateway directly, as http.noProxy and http.proxySupport do', async () => {
    for (const [extra, throughProxy] of [
      [{}, 1],
      [{ GATEWAY_IMAGES_NO_PROXY: 'example.invalid, 127.0.0.1' }, 0],
      [{ GATEWAY_IMAGES_PROXY_SUPPORT: 'off' }, 0],
    ] as const) {
      proxy.reset();
      const { client } = await start(extra);
      assert.ok(!(await client.callTool({ name: 'list_models', arguments: {} })).isError);
      assert.equal(proxy.count(), throughProxy, JSON.stringify(extra));
    }
  });
});

describe('MCP configuration: the connection variables', () => {
  const settings: ConnectionSettings = {
    proxy: 'http://agent:s3cret-pass@proxy.corp:3128',
    strictSSL: false,
    noProxy: ['intranet.corp', '10.0.0.1'],
    proxyAuthorization: 'Basic YWdlbnQ6czNjcmV0LXBhc3M=',
    systemCertificates: false,
  };

  it("without them, VS Code's defaults: strict TLS through proxies, the system's certificates trusted, no credentials", () => {
    assert.deepEqual(readConnection({}), { strictSSL: true, noProxy: [], proxyAuthorization: undefined, systemCertificates: true });
  });

  it('what the definition provider passes reads back as the same settings; the listed part holds no credential', () => {
    const { listed, secret } = connectionEnvironment(settings, '/etc/corp-ca.pem');
    assert.deepEqual(listed, {
      GATEWAY_IMAGES_PROXY_SUPPORT: 'on',
      GATEWAY_IMAGES_SYSTEM_CERTIFICATES: '0',
      GATEWAY_IMAGES_PROXY_STRICT_SSL: '0',
      GATEWAY_IMAGES_NO_PROXY: 'intranet.corp,10.0.0.1',
      NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem',
      HTTPS_PROXY: 'http://proxy.corp:3128/',
      HTTP_PROXY: 'http://proxy.corp:3128/',
    });
    assert.deepEqual(secret, { GATEWAY_IMAGES_PROXY_AUTHORIZATION: settings.proxyAuthorization, HTTPS_PROXY: settings.proxy, HTTP_PROXY: settings.proxy });
    const { proxy: _inHttpsProxy, ...rest } = settings;
    assert.deepEqual(readConnection({ ...listed, ...secret }), { ...rest });
    // A proxy with credentials that cannot be parsed is not listed at all.
    assert.equal(connectionEnvironment({ proxy: 'http://agent:s3cret@[bad' }, undefined).listed.HTTPS_PROXY, undefined);
    assert.deepEqual(connectionEnvironment({ proxy: 'proxy.corp:3128' }, undefined).secret, {});
  });

  it('http.proxySupport off: no proxy of any kind, the certificate setting still passed', () => {
    const { listed, secret } = connectionEnvironment({ ...settings, proxySupport: 'off' }, undefined);
    assert.deepEqual(listed, { GATEWAY_IMAGES_PROXY_SUPPORT: 'off', GATEWAY_IMAGES_SYSTEM_CERTIFICATES: '0' });
    assert.deepEqual(secret, {});
    assert.deepEqual(readConnection(listed), { proxySupport: 'off', systemCertificates: false });
  });

  it('names the variable that is wrong and what it allows', () => {
    assert.throws(
      () => readConnection({ GATEWAY_IMAGES_PROXY_STRICT_SSL: 'maybe' }),
      (e: ConfigError) => e.variable === 'GATEWAY_IMAGES_PROXY_STRICT_SSL' && /must be 1 or 0 \(true or false\); got "maybe"/.test(e.message),
    );
    assert.throws(
      () => readConnection({ GATEWAY_IMAGES_PROXY_SUPPORT: 'sometimes' }),
      (e: ConfigError) => e.variable === 'GATEWAY_IMAGES_PROXY_SUPPORT' && /"on" or "off"/.test(e.message),
    );
    assert.throws(
      () => readConnection({ GATEWAY_IMAGES_SYSTEM_CERTIFICATES: 'y' }),
      (e: ConfigError) => e.variable === 'GATEWAY_IMAGES_SYSTEM_CERTIFICATES',
    );
  });

  it('the secrets to redact: the authorization, its token and what a Basic token encodes, a proxy URL and its user info and password (encoded and not)', () => {
    const authorization = basic('agent', 's3cret-pass');
    const secrets = connectionSecrets(
      { HTTPS_PROXY: 'http://agent:p%40ss-word@proxy:3128' },
      readConnection({ GATEWAY_IMAGES_PROXY_AUTHORIZATION: authorization }),
    );
    const token = authorization.slice('Basic '.length);
    for (const expected of [
      authorization,
      token,
      'agent:s3cret-pass',
      's3cret-pass',
      'http://agent:p%40ss-word@proxy:3128',
      'agent:p%40ss-word',
      'p%40ss-word',
      'p@ss-word',
    ])
      assert.ok(secrets.includes(expected), `${expected} in ${JSON.stringify(secrets)}`);
    assert.deepEqual(connectionSecrets({ HTTP_PROXY: 'http://proxy:3128' }, undefined), []);
  });
});
