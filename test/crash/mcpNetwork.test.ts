// The MCP server where corporate users meet it, in the real VS Code: the gateway over HTTPS with a
// certificate signed by a CA made in the test, reached through Debian's tinyproxy with Basic
// authentication (CONNECT). VS Code starts with NODE_EXTRA_CA_CERTS, and its settings name the proxy
// and its credentials (http.proxy, http.proxyAuthorization). The definition provider's resolved
// definition (reached through the extension's test API: VS Code 1.100 has no final MCP API) must
// carry all of it, the listed one none of the secrets; a server started from the resolved one
// generates. `npm run test:crash`.
import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type RunningEmulator, startEmulator } from '../../tools/emulator/server';
import { captureOnFailure, type McpDefinitionJson, openWorkbench, type OpenedWorkbench, prepareTest } from '../e2e/workbench';
import { makePrivateCa, type PrivateCa, startTlsFront, type TlsFront } from '../support/privateCa';
import { startTinyproxy, type Tinyproxy } from '../support/tinyproxy';

/** A machine may point NODE_EXTRA_CA_CERTS and OpenSSL at its own bundle: only what the test sets. */
const NO_CA_VARIABLES = { NODE_EXTRA_CA_CERTS: '', SSL_CERT_FILE: '', SSL_CERT_DIR: '' };

interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: { spendingCap?: { spentThisSession: number } };
  isError?: boolean;
}

describe('MCP server in the real VS Code: a private CA behind a proxy that asks for credentials', function () {
  this.timeout(300_000);
  let ca: PrivateCa;
  let gateway: RunningEmulator;
  let front: TlsFront;
  let proxy: Tinyproxy;
  let opened: OpenedWorkbench | undefined;

  before(async function () {
    try {
      ca = makePrivateCa();
    } catch (error) {
      console.log(`      skipped: openssl could not make a CA (${String(error)})`);
      this.skip();
    }
    gateway = await startEmulator({ quiet: true });
    front = await startTlsFront(ca, gateway.port);
    proxy = await startTinyproxy({ auth: { user: 'agents', password: 'images-32' } });
  });
  afterEach(async function () {
    await captureOnFailure(this, opened);
    await opened?.close();
    opened = undefined;
  });
  after(async () => {
    await proxy?.close();
    await front?.close();
    await gateway?.close();
    ca?.remove();
  });

  const paid = () => gateway.state.requests.filter((r) => r.paid).length;

  /** A generation by a server started from a definition: its environment only, plus PATH. */
  async function generate(definition: McpDefinitionJson, extra: Record<string, string> = {}): Promise<ToolResult> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
    for (const [name, value] of Object.entries(definition.env)) if (value !== null) env[name] = String(value);
    const client = new Client({ name: 'crash-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: definition.command, args: definition.args, env: { ...env, ...extra }, cwd: definition.cwd, stderr: 'ignore' }),
    );
    try {
      return (await client.callTool({
        name: 'generate_image',
        arguments: { prompt: 'through the corporate network', model: 'aurora-1', size: '64x64' },
      })) as ToolResult;
    } finally {
      await client.close();
    }
  }
  const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');
  const firstLine = (result: ToolResult) => textOf(result).split('\n', 1).join('').slice(0, 110);

  it('the resolved definition carries the proxy credentials and NODE_EXTRA_CA_CERTS, the listed one no secret; the server started from it generates through tinyproxy', async () => {
    opened = await openWorkbench({
      settings: { 'gatewayImages.baseUrl': front.url, 'http.proxy': proxy.url, 'http.proxyAuthorization': proxy.authorization },
      env: { ...NO_CA_VARIABLES, NODE_EXTRA_CA_CERTS: ca.caFile },
    });
    await prepareTest(opened, { key: 'unlimited' });
    const key = opened.emulator.keys.unlimited;
    const {
      listed: [listed],
      resolved: [resolved],
    } = await opened.mcpDefinitions();
    assert.ok(listed && resolved, 'no definition although a workspace folder and a base URL are set');
    const listedText = JSON.stringify(listed);
    for (const secret of [key, proxy.authorization!.slice('Basic '.length), 'images-32'])
      assert.ok(!listedText.includes(secret), `the listed definition carries a secret: ${listedText}`);
    assert.equal(listed.env.NODE_EXTRA_CA_CERTS, ca.caFile);
    assert.equal(listed.env.GATEWAY_IMAGES_SYSTEM_CERTIFICATES, '1');
    assert.equal(listed.env.HTTPS_PROXY, proxy.url);
    assert.equal(resolved.env.GATEWAY_IMAGES_API_KEY, key);
    assert.equal(resolved.env.GATEWAY_IMAGES_PROXY_AUTHORIZATION, proxy.authorization);
    assert.equal(resolved.env.NODE_EXTRA_CA_CERTS, ca.caFile);

    const before = paid();
    const result = await generate(resolved);
    console.log(`      from the resolved definition: ${firstLine(result)}`);
    assert.ok(!result.isError, textOf(result));
    assert.equal(paid(), before + 1);
    assert.ok(proxy.requests().includes(`CONNECT 127.0.0.1:${front.port}`), `tinyproxy did not tunnel to the gateway: ${JSON.stringify(proxy.requests())}`);

    // Without the CA the extension host was given: a clear error, nothing sent.
    const untrusted = await generate({ ...resolved, env: { ...resolved.env, NODE_EXTRA_CA_CERTS: null } });
    console.log(`      without NODE_EXTRA_CA_CERTS: ${firstLine(untrusted)}…`);
    assert.equal(untrusted.isError, true);
    assert.match(textOf(untrusted), /not trusted/);
    assert.match(textOf(untrusted), /Nothing was sent/);

    // The listed definition (no credentials), given the key by hand: the proxy's 407, nothing charged.
    const refused = await generate(listed, { GATEWAY_IMAGES_API_KEY: key });
    console.log(`      from the listed definition: ${firstLine(refused)}…`);
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /407 Proxy Authentication Required/);
    assert.doesNotMatch(textOf(refused), /may have been charged/);
    assert.equal(refused.structuredContent?.spendingCap?.spentThisSession, 0);
    assert.equal(paid(), before + 1, 'nothing more reached the gateway');
  });
});
