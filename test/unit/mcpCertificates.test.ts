// The MCP server against a gateway whose certificate a private CA signed (a TLS-inspecting proxy, a
// private gateway): the real server (dist/mcp.js) under the SDK's client, the emulator behind a TLS
// front (test/support/privateCa.ts). Untrusted: a clear error and nothing sent. Trusted the ways the
// extension is, through what the definition provider passes: NODE_EXTRA_CA_CERTS, and the system
// store with GATEWAY_IMAGES_SYSTEM_CERTIFICATES (http.systemCertificates) on.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { makePrivateCa, type PrivateCa, startTlsFront, systemStoreNamespace, type TlsFront } from '../support/privateCa';
import { DEMO_KEYS, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir } from './support/gateway';
import { launch, textOf, type ToolResult } from './support/mcp';

describe('MCP server with a private CA', function () {
  this.timeout(30_000);
  let ca: PrivateCa;
  let emu: RunningEmulator;
  let front: TlsFront;
  let workspace: string;
  const running: Client[] = [];

  before(async function () {
    try {
      ca = makePrivateCa();
    } catch (error) {
      console.log(`      skipped: openssl could not make a CA here (${String(error)})`);
      this.skip();
    }
    emu = await startEmulator();
    front = await startTlsFront(ca, emu.port);
    workspace = await fs.realpath(await tempDir('gwi-mcp-ca-'));
  });
  beforeEach(() => emu?.state.reset());
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await Promise.all([front?.close(), emu?.close()]);
    await removeDir(workspace);
    ca?.remove();
  });

  /** A generation by a new server with exactly this environment (launch passes PATH and nothing of the machine's, NODE_EXTRA_CA_CERTS included). */
  async function generate(extra: Record<string, string>, wrap?: string[]): Promise<ToolResult> {
    const { client } = await launch(
      {
        GATEWAY_IMAGES_BASE_URL: front.url,
        GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
        GATEWAY_IMAGES_WORKSPACE: workspace,
        GATEWAY_IMAGES_RECOVERY_DIR: path.join(workspace, '.recovery'),
        GATEWAY_IMAGES_MAX_COST_PER_SESSION: '10',
        ...extra,
      },
      wrap,
    );
    running.push(client);
    return (await client.callTool({ name: 'generate_image', arguments: { prompt: 'private ca', model: 'aurora-1', size: '64x64' } })) as ToolResult;
  }

  it('untrusted: a clear error that names the certificate problem and what fixes it for this server; nothing sent, the cap whole', async () => {
    const handshakes = front.handshakes();
    const result = await generate({});
    const text = textOf(result);
    console.log(`      untrusted: ${text.split('\n').slice(0, 2).join(' ')}`);
    assert.equal(result.isError, true, text);
    assert.match(text, /certificate of the gateway .* is not trusted/);
    assert.match(text, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
    assert.match(text, /Nothing was sent\./);
    assert.doesNotMatch(text, /may have been charged/);
    assert.match(text, /For this server: set NODE_EXTRA_CA_CERTS .* keep GATEWAY_IMAGES_SYSTEM_CERTIFICATES on/);
    assert.equal((result.structuredContent?.spendingCap as { spentThisSession: number }).spentThisSession, 0);
    assert.ok(front.handshakes() > handshakes, 'the server did not try the gateway at all: this case proves nothing');
    assert.equal(paidRequests(emu).length, 0, 'nothing reached the gateway');
  });

  it('trusted with NODE_EXTRA_CA_CERTS in its environment: the generation works, with GATEWAY_IMAGES_SYSTEM_CERTIFICATES on or off', async () => {
    for (const system of ['1', '0']) {
      const result = await generate({ NODE_EXTRA_CA_CERTS: ca.caFile, GATEWAY_IMAGES_SYSTEM_CERTIFICATES: system });
      assert.ok(!result.isError, `system certificates ${system}: ${textOf(result)}`);
    }
    assert.equal(paidRequests(emu).length, 2);
  });

  it('trusted in the system store (its bundle, in a private mount namespace): works with GATEWAY_IMAGES_SYSTEM_CERTIFICATES on (the default), not with it 0', async function () {
    const namespace = systemStoreNamespace(ca);
    if ('skipped' in namespace) {
      console.log(`      skipped: ${namespace.skipped}`);
      return this.skip();
    }
    const inNamespace = namespace.prefix;
    const byDefault = await generate({}, inNamespace);
    assert.ok(!byDefault.isError, textOf(byDefault));
    const on = await generate({ GATEWAY_IMAGES_SYSTEM_CERTIFICATES: '1' }, inNamespace);
    assert.ok(!on.isError, textOf(on));
    const off = await generate({ GATEWAY_IMAGES_SYSTEM_CERTIFICATES: '0' }, inNamespace);
    assert.equal(off.isError, true, 'with GATEWAY_IMAGES_SYSTEM_CERTIFICATES 0 the system store is not used');
    assert.match(textOf(off), /not trusted/);
    assert.equal(paidRequests(emu).length, 2);
  });
});
