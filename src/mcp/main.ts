// Entry of dist/mcp.js: the stdio MCP server, started by VS Code (through the provider in
// register.ts) or by any MCP client as `node dist/mcp.js`. Configuration comes from environment
// variables (config.ts). The key and the proxy's credentials are read once, removed from the
// environment (the key and GATEWAY_IMAGES_PROXY_AUTHORIZATION) and never written out.
import { realpathSync } from 'node:fs';
import * as os from 'node:os';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type * as GatewayBundle from '../core/client/gatewayBundle';
import { ConfigError, connectionSecrets, ENV, type McpConfig, PROXY_VARIABLES, readConfig } from './server/config';
import { isAgentJournal, secureAgentJournal } from '../jobs/results/agentJournal';
import { boundJournal } from '../jobs/results/agentJournalBound';
import { HistoryStore } from '../jobs/results/history';
import { SharedJournal } from '../jobs/results/journalFile';
import { journalLine, ResultsIndex } from '../jobs/results/resultsIndex';
import { ImageTools } from './server/imageTools';
import { createMcpServer } from './server/mcpServer';
import { finishInterruptedRegionEdits } from './server/regionRecoveryAtStart';

declare const MCP_SERVER_VERSION: string | undefined;

/** Beyond the request deadline, time for the last images to be placed before the server leaves. */
const DRAIN_MARGIN_MS = 10_000;
/** The agents' journal is checked against its bound at the start and after this many changes. */
const BOUND_EVERY_CHANGES = 100;

function log(line: string): void {
  process.stderr.write(`[gateway-images-mcp] ${line}\n`);
}

async function main(): Promise<void> {
  const config = readConfig(process.env, process.cwd(), (p) => realpathSync(p));
  const secrets = [...(config.apiKey ? [config.apiKey] : []), ...connectionSecrets(process.env, config.connection)];
  // Nothing started from here (or a crash report) can see the key or the proxy's credentials.
  delete process.env[ENV.apiKey];
  delete process.env[ENV.proxyAuthorization];
  const key = config.apiKey;
  const redact = (text: string) => secrets.reduce((redacted, secret) => redacted.split(secret).join('***'), text);
  const provenance = !/^(0|false|off|no)$/i.test(process.env.GATEWAY_IMAGES_EMBED_PROVENANCE?.trim() ?? '');
  const version = typeof MCP_SERVER_VERSION === 'string' ? MCP_SERVER_VERSION : '0.0.0-dev';

  // The HTTP stack (client + undici) is the extension's own chunk, dist/gateway.js.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GatewayClient, createDispatcher } = require('./gateway.js') as typeof GatewayBundle;
  const client = new GatewayClient({
    baseUrl: config.baseUrl,
    getApiKey: () => key,
    // The extension's own connection: its proxy, credentials and certificate settings (config.ts).
    dispatcher: createDispatcher({ ...config.connection, timeoutMs: config.timeoutMs, env: process.env }),
    closeDispatcher: true,
    paidTimeoutMs: config.timeoutMs,
    userAgent: `gateway-images-mcp/${version}`,
    onRequest: (e) =>
      log(
        redact(
          [e.method, e.path, e.status ?? '-', `${e.durationMs} ms`, e.requestId ? `request-id=${e.requestId}` : '', e.error ? `error=${e.error}` : '']
            .filter(Boolean)
            .join(' '),
        ),
      ),
  });
  // Paid results go into a results journal: the window's when VS Code started the server, else the agents' file of this workspace.
  const journal = config.resultsJournal
    ? new HistoryStore(config.resultsJournal, { load: () => ({ SharedJournal, ResultsIndex, journalLine }), warn: (m) => log(redact(m)) })
    : undefined;
  // The agents' file holds prompts: only its owner reads it, and it keeps only the newest results.
  if (journal && isAgentJournal(journal.file, os.homedir())) {
    // Private before its first line; cut (under its lock, which another server may hold a while) meanwhile.
    await keepAgentJournal(journal.file, false);
    void keepAgentJournal(journal.file, true);
    let changes = 0;
    journal.onDidChange(() => {
      if (++changes % BOUND_EVERY_CHANGES === 0) void keepAgentJournal(journal.file, true);
    });
  }
  // Finished beside the calls; the way out waits for it before the journal closes.
  const regionRecovery = journal
    ? finishInterruptedRegionEdits(journal, (line) => log(redact(line))).catch((error: unknown) =>
        log(redact(`interrupted region edits could not be finished: ${String(error)}`)),
      )
    : Promise.resolve();
  const tools = new ImageTools(config, () => client, { provenance, ...(journal ? { journal } : {}), warn: (m) => log(redact(m)) });
  let clientProtocol: string | undefined;
  const server = createMcpServer(tools, version, redact, () => clientProtocol, log);
  const transport = new StdioServerTransport();
  // On the way out no new call is taken, and calls in flight end first (each within its request
  // deadline): a paid answer streaming in is saved, or kept for recovery, not cut off.
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    const waiting = tools.callsInFlight;
    if (waiting) log(`${why}: taking no new calls; waiting for ${waiting} call(s) in flight`);
    if (!(await tools.drain(config.timeoutMs + DRAIN_MARGIN_MS))) log('calls still in flight after their deadline: leaving anyway');
    // The SDK writes an answer a few promise steps after its handler ended: one turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    await regionRecovery;
    await journal?.close().catch(() => undefined);
    await server.close().catch(() => undefined);
    await client.close().catch(() => undefined);
    process.exit(0);
  };
  process.stdin.on('end', () => void stop('stdin closed'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A client gone before an answer: writing it fails (EPIPE), which must not end the calls in flight.
  process.stdout.on('error', (error: Error) => log(`cannot write to stdout: ${error.message}`));
  await server.connect(transport);
  // The SDK does not expose the negotiated version; the client's request names the one it speaks.
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'initialize') {
      const requested = (message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      clientProtocol = typeof requested === 'string' ? requested : undefined;
    }
    deliver?.(message);
  };
  log(
    redact(
      `ready: workspace ${config.workspaceRoot}, results journal ${config.resultsJournal}, gateway ${client.baseUrl}, key ${key ? 'set' : 'NOT SET'}, cap ${config.maxCostPerCall} ₽ per call / ${config.maxCostPerSession} ₽ per session; ${describeConnection(config.connection)}`,
    ),
  );
}

/** The connection in the ready line, for whoever reads the log: never a credential. */
function describeConnection(connection: McpConfig['connection']): string {
  const proxies = connection?.proxySupport === 'off' ? 'proxies off' : `proxy ${proxyVariables()}${connection?.proxyAuthorization ? ' with credentials' : ''}`;
  const extra = process.env.NODE_EXTRA_CA_CERTS?.trim();
  const trust = ["Node's CAs", ...(extra ? [`NODE_EXTRA_CA_CERTS (${extra})`] : []), ...(connection?.systemCertificates === false ? [] : ['the system store'])];
  return `${proxies}; trusts ${trust.join(', ')}`;
}

function proxyVariables(): string {
  const set = PROXY_VARIABLES.filter((name) => process.env[name]?.trim());
  return set.length ? `from ${set.join(', ')}` : 'none';
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  log(`cannot start: ${message}`);
  process.exit(2);
});

/** The agents' journal private (0600 in 0700 folders) and, with `bound`, within its bound (agentJournalBound.ts); a failure is logged and tried again later. */
async function keepAgentJournal(file: string, bound: boolean): Promise<void> {
  try {
    await secureAgentJournal(file, os.homedir());
    const dropped = bound ? await boundJournal(new SharedJournal(file)) : 0;
    if (dropped) log(`agents' results journal ${file}: its ${dropped} oldest results were dropped, the newest kept`);
  } catch (error) {
    log(`agents' results journal ${file}: could not be made private or kept small (${String(error)}); tried again later`);
  }
}
