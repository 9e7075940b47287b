// The MCP server's definition carries the extension's connection (VS Code's http.* settings), in
// the real VS Code: the listed definition holds the proxy and certificate settings but no secret;
// the resolved one (what VS Code starts, right before the start) adds the key and the proxy's
// credentials. A server started from each, through a real forwarding proxy started here that asks
// for credentials: the resolved one generates through it, the listed one meets the 407, and its
// spending cap stays whole.
import * as assert from 'assert';
import { randomBytes } from 'crypto';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type ForwardProxy, startForwardProxy } from '../support/forwardProxy';
import { api, emulator, paidRequests, prepareSuite, waitUntil } from './support';

type Definition = Awaited<ReturnType<Awaited<ReturnType<typeof api>>['mcp']['definitions']>>[number];
interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: { spendingCap?: { spentThisSession: number; remainingThisSession: number } };
  isError?: boolean;
}

describe('MCP server definition: the connection settings', function () {
  this.timeout(60_000);
  let proxy: ForwardProxy;
  const password = `pw-${randomBytes(9).toString('hex')}`;
  const authorization = `Basic ${Buffer.from(`agent:${password}`).toString('base64')}`;
  const http = () => vscode.workspace.getConfiguration('http');
  const names = ['proxy', 'proxyAuthorization', 'noProxy', 'proxyStrictSSL', 'systemCertificates'];

  async function setHttp(name: string, value: unknown): Promise<void> {
    await http().update(name, value, vscode.ConfigurationTarget.Global);
    await waitUntil(() => JSON.stringify(http().get(name)) === JSON.stringify(value ?? http().inspect(name)?.defaultValue), 5_000, `http.${name} applied`);
  }

  /** The server from a definition, with its environment only (plus PATH). */
  async function start(definition: Definition, extra: Record<string, string> = {}): Promise<Client> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
    for (const [name, value] of Object.entries(definition.env)) if (value !== null) env[name] = String(value);
    const client = new Client({ name: 'integration-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: definition.command,
      args: definition.args,
      env: { ...env, ...extra },
      cwd: definition.cwd?.fsPath,
      stderr: 'ignore',
    });
    await client.connect(transport);
    return client;
  }
  const generate = async (client: Client, prompt: string) =>
    (await client.callTool({ name: 'generate_image', arguments: { prompt, model: 'sketch-mini' } })) as ToolResult;
  const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');

  before(async () => {
    await prepareSuite('unlimited');
    proxy = await startForwardProxy({ requireAuthorization: authorization });
    // Credentials both in the proxy's URL and in http.proxyAuthorization: neither may be listed.
    await setHttp('proxy', `http://agent:${password}@127.0.0.1:${proxy.port}`);
    await setHttp('proxyAuthorization', authorization);
    await setHttp('noProxy', ['intranet.example']);
    await setHttp('proxyStrictSSL', false);
    await setHttp('systemCertificates', false);
  });
  after(async () => {
    for (const name of names) await setHttp(name, undefined);
    await proxy?.close();
  });

  it('the listed definition carries the proxy and certificate settings and no secret; the resolved one adds the key and the credentials; the server started from it works through the proxy', async () => {
    const extension = await api();
    const [listed] = await extension.mcp.definitions();
    assert.ok(listed, 'no definition although a workspace folder and a base URL are set');
    const key = emulator().keys.unlimited;
    const listedText = JSON.stringify(listed);
    for (const secret of [key, password, authorization.slice('Basic '.length)])
      assert.ok(!listedText.includes(secret), `the listed definition carries a secret: ${listedText}`);
    const proxyUrl = `http://127.0.0.1:${proxy.port}/`;
    assert.deepStrictEqual(
      {
        HTTPS_PROXY: listed.env.HTTPS_PROXY,
        HTTP_PROXY: listed.env.HTTP_PROXY,
        GATEWAY_IMAGES_NO_PROXY: listed.env.GATEWAY_IMAGES_NO_PROXY,
        GATEWAY_IMAGES_PROXY_STRICT_SSL: listed.env.GATEWAY_IMAGES_PROXY_STRICT_SSL,
        GATEWAY_IMAGES_SYSTEM_CERTIFICATES: listed.env.GATEWAY_IMAGES_SYSTEM_CERTIFICATES,
        GATEWAY_IMAGES_PROXY_SUPPORT: listed.env.GATEWAY_IMAGES_PROXY_SUPPORT,
        NODE_EXTRA_CA_CERTS: listed.env.NODE_EXTRA_CA_CERTS,
      },
      {
        HTTPS_PROXY: proxyUrl,
        HTTP_PROXY: proxyUrl,
        GATEWAY_IMAGES_NO_PROXY: 'intranet.example',
        GATEWAY_IMAGES_PROXY_STRICT_SSL: '0',
        GATEWAY_IMAGES_SYSTEM_CERTIFICATES: '0',
        GATEWAY_IMAGES_PROXY_SUPPORT: 'on',
        NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS?.trim() || undefined,
      },
    );

    const resolvedDefinitions = await extension.testing!.mcpResolvedDefinitions();
    const [resolved] = resolvedDefinitions;
    assert.strictEqual(resolved?.env.GATEWAY_IMAGES_API_KEY, key);
    assert.strictEqual(resolved.env.GATEWAY_IMAGES_PROXY_AUTHORIZATION, authorization);
    assert.strictEqual(resolved.env.HTTPS_PROXY, `http://agent:${password}@127.0.0.1:${proxy.port}`);
    assert.ok(!JSON.stringify(await extension.mcp.definitions()).includes(password), 'resolving changed the listed definition');

    const paidBefore = (await paidRequests()).length;
    const server = await start(resolved);
    try {
      const result = await generate(server, 'through the proxy, from the resolved definition');
      assert.ok(!result.isError, textOf(result));
    } finally {
      await server.close();
    }
    assert.strictEqual((await paidRequests()).length, paidBefore + 1);
    assert.ok(
      proxy.requests.some((r) => r.method === 'POST' && r.url === `${emulator().url}/v1/images/generations` && r.proxyAuthorization && !r.refused),
      'the paid request did not go through the proxy with credentials',
    );
  });

  it("a server started from the listed definition (no credentials) meets the proxy's 407: not charged, its cap whole", async () => {
    const [listed] = await (await api()).mcp.definitions();
    const paidBefore = (await paidRequests()).length;
    // The catalog is read while the proxy lets everyone through; the paid calls then meet its 407.
    proxy.options = {};
    const server = await start(listed!, { GATEWAY_IMAGES_API_KEY: emulator().keys.unlimited, GATEWAY_IMAGES_MAX_COST_PER_SESSION: '5' });
    try {
      assert.ok(!(await server.callTool({ name: 'list_models', arguments: {} })).isError);
      proxy.options = { requireAuthorization: authorization };
      for (const call of [1, 2, 3]) {
        const result = await generate(server, `no credentials ${call}`);
        assert.strictEqual(result.isError, true, textOf(result));
        assert.deepStrictEqual(
          result.structuredContent?.spendingCap,
          { maxCostPerCall: 50, maxCostPerSession: 5, spentThisSession: 0, remainingThisSession: 5 },
          textOf(result),
        );
        assert.match(textOf(result), /Not charged: the proxy refused the request before it reached the gateway/);
      }
    } finally {
      proxy.options = { requireAuthorization: authorization };
      await server.close();
    }
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a request reached the gateway');
  });
});
