// The MCP server's paid calls that do not end well, driven like mcpServer.test.ts: a connection cut
// mid-answer, an error answer, a proxy's 502, a cancel before and after the paid answer, and a client
// of an older protocol.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEMO_KEYS, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir, waitFor } from './support/gateway';
import { launch, SERVER, serverHome, type ToolResult } from './support/mcp';

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
    // The image that arrived whole was saved into the workspace as it landed, and the answer says where.
    const saved = /arrived whole before the failure and are saved in the workspace: (\S+)/.exec(text);
    assert.ok(saved, text);
    assert.ok(existsSync(path.join(workspace, saved[1]!)), `${saved[1]} is not in the workspace`);
    assert.equal(paidRequests(emu).length, 1, 'the paid request was resent');
    assert.equal(await spent(), 12);
  });

  it("an error answer of the gateway is not counted against the cap; a proxy's 502 is (the gateway may have charged)", async () => {
    const before = await spent();
    const paidBefore = paidRequests(emu).length;
    // The gateway's own refusal, in its form (a 429 with its JSON body).
    emu.state.armFault({ fault: 'rate-limit' });
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

  it('a client of an older protocol (2025-03-26) gets no resource links, only text and the preview', async () => {
    const child = spawn(process.execPath, [SERVER], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: serverHome(),
        GATEWAY_IMAGES_BASE_URL: emu.url,
        GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
        GATEWAY_IMAGES_WORKSPACE: workspace,
        GATEWAY_IMAGES_RECOVERY_DIR: recovery,
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const lines = createInterface({ input: child.stdout });
    const answers = new Map<number, { result?: ToolResult }>();
    lines.on('line', (line) => {
      const message = JSON.parse(line) as { id?: number; result?: ToolResult };
      if (typeof message.id === 'number') answers.set(message.id, message);
    });
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const answer = async (id: number) => {
      const end = Date.now() + 10_000;
      while (!answers.has(id) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      return answers.get(id);
    };
    try {
      send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
      assert.ok(await answer(1));
      send({ method: 'notifications/initialized' });
      send({ id: 2, method: 'tools/call', params: { name: 'generate_image', arguments: { prompt: 'old client', model: 'aurora-1', size: '64x64' } } });
      const result = (await answer(2))?.result;
      assert.ok(result && !result.isError, JSON.stringify(result));
      assert.deepEqual(
        result.content.map((c) => c.type),
        ['text', 'image'],
      );
    } finally {
      child.kill();
    }
  });

  it('a cancel while the gateway works (latency) aborts the request before the paid answer; sent, so the cap counts it in full; nothing is resent', async () => {
    // The gateway holds the request until the cancel has come through (and the drop stops it): no
    // race between a fixed latency and a cancel that a busy machine delays.
    emu.state.armFault({ fault: 'latency', latencyMs: 600_000 });
    const before = await spent();
    const paidBefore = paidRequests(emu).length;
    const controller = new AbortController();
    const notes: string[] = [];
    const call = client.callTool({ name: 'generate_image', arguments: { prompt: 'cancel me', model: 'aurora-1', size: '64x64' } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => void notes.push(p.message ?? ''),
    });
    const rejected = assert.rejects(call);
    // Cancelled once the body is out and the gateway works on it: it has the request and has reserved for it.
    const held = () => paidRequests(emu).slice(paidBefore);
    await waitFor(() => notes.includes('Sent; waiting for the gateway.') && held().length === 1 && held()[0]!.reservedRub > 0, 15_000);
    controller.abort();
    await rejected;
    const [request] = held();
    // The server aborted the request: the emulator saw its connection drop before any answer.
    await waitFor(() => request!.clientAborted === true, 15_000);
    assert.deepEqual(notes.slice(0, 2), ['Reserved ₽4.00 of the spending cap for aurora-1; sending.', 'Sent; waiting for the gateway.']);
    assert.equal(request!.status, 0, 'the emulator answered the held request');
    assert.equal(request!.chargedRub, 0, 'the emulator charged an aborted request');
    assert.equal(paidRequests(emu).length, paidBefore + 1, 'the cancelled request was resent');
    // The server counts the call once its job has unwound (the cancelled call itself gets no answer).
    let after = await spent();
    for (const end = Date.now() + 10_000; after === before && Date.now() < end; after = await spent()) await new Promise((r) => setTimeout(r, 50));
    assert.equal(after, before + 4);
  });

  it('a cancel after the gateway answered (charged): the call goes on, saves the image, counts its cost, and a log message says so', async () => {
    const messages: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(String(n.params.data)));
    emu.state.headGapMs = 1_000;
    const before = await spent();
    const controller = new AbortController();
    await assert.rejects(
      client.callTool({ name: 'generate_image', arguments: { prompt: 'too late to cancel', model: 'aurora-1', size: '64x64' } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          if (p.message?.startsWith('The gateway answered')) controller.abort();
        },
      }),
    );
    await waitFor(() => messages.length > 0, 10_000);
    const [message] = messages;
    assert.match(
      message!,
      /^generate_image: The call was cancelled after the gateway had answered \(it has charged\): the paid image\(s\) are saved anyway: (\S+)\.$/,
    );
    const file = /saved anyway: (\S+)\.$/.exec(message!)![1]!;
    assert.ok(existsSync(path.join(workspace, file)), `${file} is not in the workspace`);
    const charged = paidRequests(emu).at(-1)!.chargedRub;
    assert.ok(charged > 0);
    assert.equal(Math.round((await spent()) * 100), Math.round((before + charged) * 100));
  });
});
