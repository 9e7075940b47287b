// Starts the MCP server (dist/mcp.js, built by `npm run build`) for the unit tests and connects
// the SDK's own client to it over stdio.
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const SERVER = path.resolve(__dirname, '../../../../dist/mcp.js');

export type ToolResult = {
  content: { type: string; text?: string; data?: string; mimeType?: string; uri?: string; name?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export interface ServerOutput {
  stderr: string;
  /** Every message the server wrote to stdout, as parsed by the transport. */
  received: string[];
}

/** Starts dist/mcp.js with exactly this environment (plus PATH) and connects the SDK's client. */
export async function launch(env: Record<string, string>): Promise<{ client: Client; output: ServerOutput }> {
  const output: ServerOutput = { stderr: '', received: [] };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER],
    cwd: env.GATEWAY_IMAGES_WORKSPACE,
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', ...env },
  });
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
