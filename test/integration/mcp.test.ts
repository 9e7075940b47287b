// The MCP server inside VS Code: on hosts with `vscode.lm.registerMcpServerDefinitionProvider`
// (1.101+) the provider is registered; on 1.100 activation stays clean and the extension says what
// is missing. On every host, the definition the provider builds starts a real server (dist/mcp.js)
// that answers tools/list, and changes when the key or the base URL changes.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { api, emulator, EXTENSION_ID, paidRequests, prepareSuite, useKey, waitUntil, workspaceRoot } from './support';

// VS Code 1.100 has the function too, but only as a proposal that extensions cannot use: the API is final from 1.101.
const [major, minor] = vscode.version.split('.').map(Number);
const hostHasMcpApi =
  (major! > 1 || minor! >= 101) &&
  typeof (vscode.lm as unknown as { registerMcpServerDefinitionProvider?: unknown }).registerMcpServerDefinitionProvider === 'function';

describe('MCP server provider', function () {
  this.timeout(60_000);

  before(() => prepareSuite('budget'));

  it('activation passes and says whether agents get the MCP tools on this VS Code', async () => {
    const mcp = (await api()).mcp;
    if (hostHasMcpApi) {
      assert.strictEqual(mcp.status, 'registered', mcp.message);
    } else {
      assert.strictEqual(mcp.status, 'unsupported', mcp.message);
      assert.match(mcp.message, /need VS Code 1\.101 or newer \(this is 1\.\d+/);
      assert.match(mcp.message, /dist[/\\]mcp\.js/);
      // The page it names is in the extension's folder (the .vsix ships docs/*.md).
      assert.match(mcp.message, /docs\/agents-and-mcp\.md/);
      assert.ok(
        fs.existsSync(path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'docs', 'agents-and-mcp.md')),
        'docs/agents-and-mcp.md is not in the extension',
      );
    }
  });

  it('registers the provider with VS Code (1.101+ only)', async function () {
    if (!hostHasMcpApi) {
      console.log(`      (skipped: VS Code ${vscode.version} has no final vscode.lm.registerMcpServerDefinitionProvider; it is final from 1.101)`);
      this.skip();
    }
    const mcp = (await api()).mcp;
    assert.strictEqual(mcp.status, 'registered', mcp.message);
    assert.match(mcp.message, /offered to agents \(spending cap 50 ₽ per call, 200 ₽ per session\)/);
    const [definition] = await mcp.definitions();
    assert.ok(definition && definition.args[0]!.endsWith('mcp.js'), 'the registered provider offers no server');
  });

  it('its definition holds no key and starts a server that answers tools/list', async () => {
    const mcp = (await api()).mcp;
    const [definition] = await mcp.definitions();
    assert.ok(definition, 'no definition although a workspace folder and a base URL are set');
    const key = emulator().keys.budget;
    assert.ok(!JSON.stringify(definition).includes(key), 'the listed definition carries the key');
    assert.strictEqual(definition.env.GATEWAY_IMAGES_BASE_URL, emulator().url);
    assert.strictEqual(definition.cwd?.fsPath, workspaceRoot());
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', GATEWAY_IMAGES_API_KEY: key };
    for (const [name, value] of Object.entries(definition.env)) if (value !== null) env[name] = String(value);
    const client = new Client({ name: 'integration-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: definition.command, args: definition.args, env, cwd: definition.cwd?.fsPath, stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      assert.deepStrictEqual(
        tools.map((t) => t.name),
        ['list_models', 'list_styles', 'estimate_cost', 'generate_image', 'edit_image', 'get_account'],
      );
      const before = (await paidRequests()).length;
      const estimate = (await client.callTool({ name: 'estimate_cost', arguments: { model: 'aurora-1' } })) as {
        structuredContent?: { estimate?: { reservation: number } };
      };
      assert.strictEqual(estimate.structuredContent?.estimate?.reservation, 4);
      assert.strictEqual((await paidRequests()).length, before);
    } finally {
      await client.close();
    }
  });

  it("Set Up MCP Server for Other Agents copies a configuration with this installation's path and no key", async () => {
    const snippet = await vscode.commands.executeCommand<string>('gatewayImages.mcpSetup', { client: 'cursor' });
    const server = JSON.parse(snippet).mcpServers['gateway-images'];
    const [definition] = await (await api()).mcp.definitions();
    assert.deepStrictEqual(server.args, definition!.args);
    assert.strictEqual(server.env.GATEWAY_IMAGES_BASE_URL, emulator().url);
    assert.ok(!snippet.includes(emulator().keys.budget), 'the snippet carries the key');
  });

  it('the definition changes when the key or the base URL changes', async () => {
    const mcp = (await api()).mcp;
    let changes = 0;
    const subscription = mcp.onDidChangeDefinitions(() => changes++);
    try {
      await useKey(emulator().keys.unlimited);
      await waitUntil(() => changes >= 1, 10_000, 'a change event after the key changed');
      const afterKey = changes;
      const config = vscode.workspace.getConfiguration('gatewayImages');
      const url = emulator().url.replace('127.0.0.1', 'localhost');
      await config.update('baseUrl', url, vscode.ConfigurationTarget.Global);
      await waitUntil(() => changes > afterKey, 10_000, 'a change event after the base URL changed');
      assert.strictEqual((await mcp.definitions())[0]?.env.GATEWAY_IMAGES_BASE_URL, url);
    } finally {
      subscription.dispose();
      await useKey(emulator().keys.budget);
    }
  });
});
