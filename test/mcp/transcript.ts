// Prints one MCP tool session against the emulator: the SDK's client starts `node dist/mcp.js`,
// lists the tools, asks for an estimate, generates an image, is refused by the cap, and cancels two
// calls (before and after the gateway answered). Usage (after `npm run build` and
// `npm run compile-tests`): node out/test/mcp/transcript.js
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEMO_KEYS, startEmulator } from '../../tools/emulator';

const SERVER = path.resolve(__dirname, '../../../dist/mcp.js');

function show(direction: '→' | '←', value: unknown): void {
  const text = JSON.stringify(
    value,
    (key, v) => (key === 'data' && typeof v === 'string' && v.length > 60 && /^[A-Za-z0-9+/=]+$/.test(v) ? `${v.slice(0, 40)}… (${v.length} base64 chars)` : v),
    2,
  );
  console.log(`${direction} ${text}\n`);
}

async function main(): Promise<void> {
  const emulator = await startEmulator({ quiet: true });
  const workspace = await mkdtemp(path.join(tmpdir(), 'gwi-mcp-transcript-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER],
    stderr: 'pipe',
    env: {
      PATH: process.env.PATH ?? '',
      GATEWAY_IMAGES_BASE_URL: emulator.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.budget,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      // Low enough that the last call shows a refusal.
      GATEWAY_IMAGES_MAX_COST_PER_CALL: '20',
      GATEWAY_IMAGES_MAX_COST_PER_SESSION: '100',
    },
  });
  transport.stderr?.on('data', (chunk: Buffer) => process.stdout.write(`  [server stderr] ${chunk.toString('utf8')}`));
  const client = new Client({ name: 'transcript', version: '1.0.0' });
  try {
    await client.connect(transport);
    console.log(`# server ${JSON.stringify(client.getServerVersion())}, workspace ${workspace}\n`);
    show('→', { method: 'tools/list' });
    const { tools } = await client.listTools();
    show(
      '←',
      tools.map((t) => ({ name: t.name, description: t.description?.slice(0, 90) + '…', arguments: Object.keys(t.inputSchema.properties ?? {}) })),
    );
    for (const [name, args] of [
      ['estimate_cost', { model: 'aurora-1', n: 2 }],
      ['generate_image', { prompt: 'A lighthouse at dawn, watercolour', model: 'aurora-1', size: '256x256', seed: 7 }],
      ['generate_image', { prompt: 'Two foxes in the snow', model: 'lumen-xl', n: 2 }],
    ] as const) {
      show('→', { method: 'tools/call', params: { name, arguments: args } });
      const result = await client.callTool({ name, arguments: args });
      show('←', { content: result.content, isError: result.isError ?? false });
    }
    // Progress, and a cancel: once the request is out and the gateway works (a 3 s latency), and once
    // the gateway has answered (charged: the image is saved anyway, and a log message says so).
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => show('←', { method: n.method, params: n.params }));
    for (const [cancelOn, fault] of [
      ['Sent;', () => emulator.state.armFault({ fault: 'latency', latencyMs: 3_000 })],
      ['The gateway answered', () => (emulator.state.headGapMs = 1_000)],
    ] as const) {
      fault();
      const params = { name: 'generate_image', arguments: { prompt: 'A paper boat', model: 'aurora-1', size: '256x256' }, _meta: { progressToken: 1 } };
      show('→', { method: 'tools/call', params });
      const controller = new AbortController();
      const call = client.callTool(params, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          show('←', { method: 'notifications/progress', params: p });
          if (p.message?.startsWith(cancelOn)) {
            show('→', { method: 'notifications/cancelled', params: { reason: `cancelled on "${cancelOn}"` } });
            controller.abort(`cancelled on "${cancelOn}"`);
          }
        },
      });
      await call.catch((error: unknown) => console.log(`# the call was cancelled: ${String(error)}\n`));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      emulator.state.headGapMs = 0;
    }
    const account = await client.callTool({ name: 'get_account', arguments: {} });
    show('←', { get_account: (account.structuredContent as { spendingCap?: unknown } | undefined)?.spendingCap });
    console.log(`# emulator: ${emulator.state.requests.filter((r) => r.paid).length} paid request(s); balance ${emulator.state.balanceRub} ₽`);
  } finally {
    await client.close();
    await emulator.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
