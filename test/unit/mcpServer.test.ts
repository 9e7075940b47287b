// The MCP server as its clients see it: the SDK's own Client starts `node dist/mcp.js` over stdio
// and drives it against the emulator on loopback. Nothing is mocked. Needs `npm run build` first.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { findImageModel } from '../emulator';
import { renderImage } from '../emulator/render';
import { DEMO_KEYS, listFiles, paidRequests, removeDir, RunningEmulator, startEmulator, tempDir } from './support/gateway';

const SERVER = path.resolve(__dirname, '../../../dist/mcp.js');

type ToolResult = { content: { type: string; text?: string; data?: string; mimeType?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

/** The PNG the emulator renders for a 64×64 request without options (its renderer is deterministic for a seed). */
function emulatorPng(model: string, prompt: string, seed: number, index: number): Buffer {
  return renderImage({ model: findImageModel(model)!, prompt, seed, width: 64, height: 64, transparent: false, referencesDigest: '', extra: JSON.stringify(['', {}]) }, index);
}

interface ServerOutput {
  stderr: string;
  /** Every message the server wrote to stdout, as parsed by the transport. */
  received: string[];
}

/** Starts dist/mcp.js with exactly this environment (plus PATH) and connects the SDK's client. */
async function launch(env: Record<string, string>): Promise<{ client: Client; output: ServerOutput }> {
  const output: ServerOutput = { stderr: '', received: [] };
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], cwd: env.GATEWAY_IMAGES_WORKSPACE, stderr: 'pipe', env: { PATH: process.env.PATH ?? '', ...env } });
  transport.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'gateway-images-test', version: '1.0.0' });
  await client.connect(transport);
  const deliver = transport.onmessage!;
  transport.onmessage = (message: JSONRPCMessage) => {
    output.received.push(JSON.stringify(message));
    deliver(message);
  };
  return { client, output };
}

describe('MCP server (dist/mcp.js over stdio, SDK client, emulator)', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let workspace: string;
  let outside: string;
  let recovery: string;
  let client: Client;
  let output: ServerOutput;
  // A key that exists only in this test: it must appear nowhere the server writes.
  const sentinel = `gw-sentinel-${randomBytes(12).toString('hex')}`;

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
  const textOf = (result: ToolResult) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  const invalidParams = async (name: string, args: Record<string, unknown>) => {
    try {
      await client.callTool({ name, arguments: args });
    } catch (error) {
      return error as { code: number; message: string; data?: { field?: string; allowed?: unknown[] } };
    }
    throw new Error(`${name} accepted ${JSON.stringify(args)}`);
  };

  before(async function () {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
    emu = await startEmulator();
    emu.state.addKey(sentinel, 'budget');
    workspace = await fs.realpath(await tempDir('gwi-mcp-ws-'));
    outside = await fs.realpath(await tempDir('gwi-mcp-outside-'));
    recovery = await tempDir('gwi-mcp-recovery-');
    await fs.symlink(outside, path.join(workspace, 'escape'), 'dir');
    const server = await launch({
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: sentinel,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_MAX_COST_PER_CALL: '10',
      GATEWAY_IMAGES_MAX_COST_PER_SESSION: '12',
      GATEWAY_IMAGES_RECOVERY_DIR: recovery,
      // Byte equality with the emulator needs the files as sent: no provenance chunk.
      GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
    });
    client = server.client;
    output = server.output;
  });

  after(async () => {
    await client?.close();
    await emu?.close();
    await Promise.all([workspace, outside, recovery].map((d) => removeDir(d)));
  });

  it('lists the five tools, each with a JSON schema that refuses unknown arguments', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['list_models', 'estimate_cost', 'generate_image', 'edit_image', 'get_account']);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal((tool.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, tool.name);
      assert.ok(tool.description && tool.description.length > 40, tool.name);
    }
    assert.deepEqual(tools.find((t) => t.name === 'generate_image')?.inputSchema.required, ['prompt']);
  });

  it('list_models filters by edit support and price, and reports the session allowance', async () => {
    const result = await call('list_models', { supports_edit: true, max_price_per_image: 5 });
    const models = (result.structuredContent?.models as { id: string; max_price_per_image: number }[]).map((m) => m.id).sort();
    assert.deepEqual(models, ['aurora-1', 'retouch-pro', 'vector-forge'].filter((id) => findImageModel(id)!.max_price_per_image <= 5).sort());
    assert.match(textOf(result), /Spending cap: ₽12\.00 left of ₽12\.00/);
    assert.equal(paidRequests(emu).length, 0);
  });

  it('estimate_cost gives the reservation and range and sends no paid request', async () => {
    const result = await call('estimate_cost', { model: 'aurora-1', n: 2 });
    const estimate = result.structuredContent?.estimate as { reservation: number; expectedMin: number; expectedMax: number };
    assert.deepEqual(estimate, { n: 2, reservation: 8, expectedMin: 5, expectedMax: 8 });
    assert.equal(result.structuredContent?.allowed, true);
    assert.match(textOf(result), /reserves ₽8\.00.*expected ₽5\.00–₽8\.00\. Nothing was sent\./);
    assert.equal(paidRequests(emu).length, 0);
    assert.equal(emu.state.requests.filter((r) => r.path.startsWith('/v1/images')).length, 0);
  });

  it('generate_image saves a file byte-equal to the emulator\'s image and reports cost, balance and allowance', async () => {
    const notes: string[] = [];
    const result = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'A red fox in snow', model: 'aurora-1', size: '64x64', seed: 7 } }, undefined, {
      onprogress: (p) => notes.push(p.message ?? ''),
    })) as ToolResult;
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual(notes, ['Sending to aurora-1; the gateway reserves ₽4.00.', 'Image 1 of 1 received.']);
    const files = result.structuredContent?.files as { path: string; uri: string }[];
    assert.equal(files.length, 1);
    assert.match(files[0].path, /^generated-images\/\d{4}-\d{2}-\d{2}-a-red-fox-in-snow-aurora-1-1\.png$/);
    const saved = path.join(workspace, files[0].path);
    assert.equal(files[0].uri, `file://${saved}`);
    assert.ok((await fs.readFile(saved)).equals(emulatorPng('aurora-1', 'A red fox in snow', 7, 0)), 'the saved image differs from the emulator\'s');
    const paid = paidRequests(emu);
    assert.equal(paid.length, 1);
    assert.equal(result.structuredContent?.cost_rub, paid[0].chargedRub);
    assert.equal(result.structuredContent?.balance_rub, emu.state.balanceRub);
    const cap = result.structuredContent?.spendingCap as { spentThisSession: number; remainingThisSession: number };
    assert.equal(cap.spentThisSession, paid[0].chargedRub);
    assert.equal(Math.round(cap.remainingThisSession * 100), 1200 - Math.round(paid[0].chargedRub * 100));
    assert.match(textOf(result), new RegExp(`Cost ₽${paid[0].chargedRub.toFixed(2).replace('.', '\\.')}`));
    // A small preview, not the image itself.
    const preview = result.content.find((c) => c.type === 'image');
    assert.equal(preview?.mimeType, 'image/png');
    const png = Buffer.from(preview!.data!, 'base64');
    assert.ok(png.readUInt32BE(16) <= 128 && png.readUInt32BE(20) <= 128);
  });

  it('edit_image takes workspace-relative images and saves next to the first', async () => {
    await fs.mkdir(path.join(workspace, 'art'));
    await fs.writeFile(path.join(workspace, 'art', 'photo.png'), emulatorPng('aurora-1', 'source', 1, 0));
    const before = paidRequests(emu).length;
    const result = await call('edit_image', { prompt: 'Make it night', images: ['art/photo.png'], model: 'aurora-1', size: '64x64' });
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual((result.structuredContent?.files as { path: string }[]).map((f) => f.path), ['art/photo.edit-1.png']);
    assert.equal(paidRequests(emu).length, before + 1);
  });

  it('refuses above the per-call cap and above the session total before sending, with the figures', async () => {
    const before = paidRequests(emu).length;
    const perCall = await call('generate_image', { prompt: 'x', model: 'lumen-xl', size: '64x64' });
    assert.equal(perCall.isError, true);
    assert.equal(perCall.structuredContent?.refusedBy, 'maxCostPerCall');
    assert.match(textOf(perCall), /reserves ₽12\.50, above the per-call cap of ₽10\.00/);
    const bySession = await call('generate_image', { prompt: 'x', model: 'prism-2', size: '64x64' });
    assert.equal(bySession.isError, true, textOf(bySession));
    assert.equal(bySession.structuredContent?.refusedBy, 'maxCostPerSession');
    assert.match(textOf(bySession), /reserves ₽9\.80, but only ₽\d+\.\d\d of the session cap of ₽12\.00 is left/);
    assert.equal(paidRequests(emu).length, before, 'a refused call reached the gateway');
    // estimate_cost says so too, without sending.
    const estimate = await call('estimate_cost', { model: 'prism-2' });
    assert.equal(estimate.structuredContent?.allowed, false);
    assert.equal(paidRequests(emu).length, before);
  });

  it('bad arguments give an invalid-params error naming the field and what is allowed, before anything is sent', async () => {
    const before = emu.state.requests.length;
    const wrongType = await invalidParams('generate_image', { prompt: 'x', n: 'two' });
    assert.equal(wrongType.code, -32602);
    assert.equal(wrongType.data?.field, 'n');
    assert.match(wrongType.message, /"n" must be a whole number from 1 to 10; got "two"/);
    const unknown = await invalidParams('generate_image', { prompt: 'x', colour: 'red' });
    assert.equal(unknown.data?.field, 'colour');
    assert.ok(unknown.data?.allowed?.includes('aspect_ratio'));
    const missing = await invalidParams('edit_image', { prompt: 'x' });
    assert.equal(missing.data?.field, 'images');
    const quality = await invalidParams('generate_image', { prompt: 'x', quality: 'ultra' });
    assert.deepEqual(quality.data?.allowed, ['low', 'medium', 'high', 'auto']);
    assert.equal(emu.state.requests.length, before, 'a schema error reached the network');
    // The model's own lists (from the catalog, a free request) are checked before paying too.
    const resolution = await invalidParams('generate_image', { prompt: 'x', model: 'aurora-1', resolution: '8K' });
    assert.equal(resolution.data?.field, 'resolution');
    assert.ok(resolution.data?.allowed?.length);
    assert.equal(paidRequests(emu).length, 2);
  });

  it('refuses paths outside the workspace root: .., absolute, and through a symbolic link', async () => {
    const before = paidRequests(emu).length;
    for (const output_directory of ['../elsewhere', outside, 'escape/inner', 'a/../../elsewhere']) {
      const error = await invalidParams('generate_image', { prompt: 'x', model: 'aurora-1', size: '64x64', output_directory });
      assert.equal(error.data?.field, 'output_directory', output_directory);
      assert.match(error.message, /leads outside the workspace folder/);
    }
    await fs.writeFile(path.join(outside, 'secret.png'), emulatorPng('aurora-1', 'secret', 1, 0));
    for (const image of ['../secret.png', path.join(outside, 'secret.png'), 'escape/secret.png']) {
      const error = await invalidParams('edit_image', { prompt: 'x', images: [image], model: 'aurora-1' });
      assert.equal(error.data?.field, 'images', image);
    }
    assert.equal(paidRequests(emu).length, before);
    assert.deepEqual(await listFiles(outside), ['secret.png']);
  });

  it('get_account reports balance, budget, expiry and stats', async () => {
    const result = await call('get_account', {});
    assert.ok(!result.isError, textOf(result));
    assert.equal((result.structuredContent?.balance as { balance: number }).balance, emu.state.balanceRub);
    assert.match(textOf(result), /budget ₽[\d,.]+ left of ₽1,000\.00, resets monthly/);
    assert.match(textOf(result), /The key does not expire\./);
    assert.match(textOf(result), /Spending cap:/);
  });

  it('the key appears nowhere in the server\'s stderr, its output or the files it wrote', async () => {
    const { stderr, received } = output;
    assert.ok(stderr.includes('POST /v1/images/generations 200'), 'stderr was not captured');
    assert.ok(received.length > 10, 'stdout was not captured');
    assert.ok(!stderr.includes(sentinel), 'the key is in stderr');
    assert.ok(!received.some((m) => m.includes(sentinel)), 'the key is in the output');
    for (const dir of [workspace, recovery]) {
      for (const file of await listFiles(dir)) {
        const bytes = await fs.readFile(path.join(dir, file)).catch(() => Buffer.alloc(0));
        assert.ok(!bytes.includes(sentinel), `the key is in ${file}`);
      }
    }
  });
});

describe('MCP server: paid calls that fail or are cancelled', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let workspace: string;
  let recovery: string;
  let client: Client;
  const spent = async () => {
    const result = (await client.callTool({ name: 'estimate_cost', arguments: { model: 'aurora-1' } })) as ToolResult;
    return (result.structuredContent?.spendingCap as { spentThisSession: number }).spentThisSession;
  };

  before(async () => {
    emu = await startEmulator();
    workspace = await fs.realpath(await tempDir('gwi-mcp-ws-'));
    recovery = await tempDir('gwi-mcp-recovery-');
    ({ client } = await launch({
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_RECOVERY_DIR: recovery,
    }));
  });

  after(async () => {
    await client?.close();
    await emu?.close();
    await Promise.all([workspace, recovery].map((d) => removeDir(d)));
  });

  it('a connection cut mid-answer: sent once, "may have been charged", the cap counts the whole reservation, arrived images kept', async () => {
    emu.state.armFault({ fault: 'drop-mid-body' });
    const result = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'cut', model: 'aurora-1', size: '64x64', n: 3 } })) as ToolResult;
    assert.equal(result.isError, true);
    const text = result.content.map((c) => c.text).join('\n');
    assert.match(text, /may have been charged/);
    assert.match(text, /kept in .*recovery/i);
    assert.equal(paidRequests(emu).length, 1, 'the paid request was resent');
    assert.equal(await spent(), 12);
    assert.ok((await listFiles(recovery)).some((f) => f.endsWith('.img')), 'the image that arrived was not kept');
  });

  it('an error answer of the gateway is not counted against the cap; a proxy\'s 502 is (the gateway may have charged)', async () => {
    const before = await spent();
    const paidBefore = paidRequests(emu).length;
    emu.state.armFault({ fault: 'html-500' });
    const failed = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'err', model: 'aurora-1', size: '64x64' } })) as ToolResult;
    assert.equal(failed.isError, true);
    assert.match(failed.content.map((c) => c.text).join('\n'), /Not charged\./);
    assert.equal(await spent(), before);
    emu.state.armFault({ fault: 'html-502' });
    const unknown = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'err', model: 'aurora-1', size: '64x64' } })) as ToolResult;
    assert.match(unknown.content.map((c) => c.text).join('\n'), /may have been charged/);
    assert.equal(await spent(), before + 4);
    assert.equal(paidRequests(emu).length, paidBefore + 2, 'a failed paid request was resent');
  });

  it('a cancelled call aborts the request; the cap counts it in full, nothing is resent', async () => {
    emu.state.armFault({ fault: 'latency', latencyMs: 3_000 });
    const before = await spent();
    await assert.rejects(
      client.callTool({ name: 'generate_image', arguments: { prompt: 'cancel me', model: 'aurora-1', size: '64x64' } }, undefined, { signal: AbortSignal.timeout(500) }),
    );
    const end = Date.now() + 5_000;
    while (!paidRequests(emu).some((r) => r.clientAborted) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.ok(paidRequests(emu).some((r) => r.clientAborted), 'the server did not abort the request');
    assert.equal(paidRequests(emu).filter((r) => r.clientAborted).length, 1);
    assert.equal(await spent(), before + 4);
  });
});
