// Starts the MCP server (dist/mcp.js, built by `npm run build`) for the unit tests and connects
// the SDK's own client to it over stdio.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
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
  /** Every message the client sent. */
  sent: string[];
}

let testHome: string | undefined;
/**
 * The servers' home (where a server started without GATEWAY_IMAGES_RESULTS_JOURNAL records its
 * results, ~/.gateway-images/results): one temporary folder for this test process, never the user's.
 */
export function serverHome(): string {
  if (!testHome) {
    const home = (testHome = mkdtempSync(path.join(os.tmpdir(), 'gwi-mcp-home-')));
    process.once('exit', () => rmSync(home, { recursive: true, force: true }));
  }
  return testHome;
}

/**
 * Starts dist/mcp.js with exactly this environment (plus PATH and HOME: serverHome() unless given) and connects the SDK's client;
 * `wrap` starts it through a command (`wrap[0] ...wrap.slice(1) node dist/mcp.js`).
 */
export async function launch(env: Record<string, string>, wrap: string[] = []): Promise<{ client: Client; output: ServerOutput }> {
  const output: ServerOutput = { stderr: '', received: [], sent: [] };
  const transport = new StdioClientTransport({
    command: wrap[0] ?? process.execPath,
    args: [...(wrap.length ? [...wrap.slice(1), process.execPath] : []), SERVER],
    cwd: env.GATEWAY_IMAGES_WORKSPACE,
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', HOME: serverHome(), ...env },
  });
  transport.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'gateway-images-test', version: '1.0.0' });
  await client.connect(transport);
  const deliver = transport.onmessage!;
  transport.onmessage = (message: JSONRPCMessage) => {
    output.received.push(JSON.stringify(message));
    deliver(message);
  };
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => {
    output.sent.push(JSON.stringify(message));
    return send(message);
  };
  return { client, output };
}

/**
 * The server as a child this test owns, with the SDK's Client over its stdio: unlike the SDK's
 * StdioClientTransport (which ends stdin, then sends SIGTERM and SIGKILL within 4 s), the test
 * decides when stdin ends and which signal comes, and sees when the process exits.
 */
export class ChildTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly exited: Promise<number | null>;
  private readonly buffer = new ReadBuffer();

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  start(): Promise<void> {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
    this.child.once('close', () => this.onclose?.());
    this.child.stdin.on('error', (error) => this.onerror?.(error));
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => (this.child.stdin.write(serializeMessage(message)) ? resolve() : this.child.stdin.once('drain', () => resolve())));
  }

  close(): Promise<void> {
    this.child.stdin.end();
    return Promise.resolve();
  }
}

/** Like launch(), over a ChildTransport: the test owns the process. */
export async function launchChild(env: Record<string, string>): Promise<{ client: Client; transport: ChildTransport; output: ServerOutput }> {
  const output: ServerOutput = { stderr: '', received: [], sent: [] };
  const child = spawn(process.execPath, [SERVER], {
    cwd: env.GATEWAY_IMAGES_WORKSPACE,
    env: { PATH: process.env.PATH ?? '', HOME: serverHome(), ...env },
    stdio: 'pipe',
  });
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  const transport = new ChildTransport(child);
  const client = new Client({ name: 'gateway-images-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, output };
}

/** The text parts of a tool's answer, one per line. */
export const textOf = (result: ToolResult) =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

/** The spending cap that a tool's answer reports. */
export const capOf = (result: ToolResult) => result.structuredContent?.spendingCap as { spentThisSession: number; remainingThisSession: number };
