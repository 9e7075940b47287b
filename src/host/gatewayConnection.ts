// Owns the gateway client: created on first use (the HTTP stack loads lazily), rebuilt when the
// base URL, timeout or proxy settings change, closed on dispose. A client replaced by a settings
// change stays open: a job may hold it between its confirmation and its request.
import * as vscode from 'vscode';
import type { GatewayClient } from '../core/client/client';
import { NotConfiguredError } from '../core/gateway/errors';
import { accountIdentity } from '../core/gateway/identity';
import type * as GatewayBundle from '../core/client/gatewayBundle';
import type { ConnectionSettings, ProxySettings } from '../core/gateway/proxy';
import { logRequest } from './log';
import { type ApiKeyStore } from './secrets';
import { readSettings } from './settings';

let bundle: typeof GatewayBundle | undefined;

/** Loads dist/gateway.js (client + undici; Recover's reading of the recovery folder) on first use; esbuild leaves this require alone. */
export function loadBundle(): typeof GatewayBundle {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  bundle ??= require('./gateway.js') as typeof GatewayBundle;
  return bundle;
}

export class GatewayConnection implements vscode.Disposable {
  private cached: { signature: string; client: GatewayClient } | undefined;
  /** Clients replaced by a settings change; closed with the connection (their idle sockets time out before). */
  private readonly retired = new Set<GatewayClient>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    readonly keys: ApiKeyStore,
    private readonly log: vscode.LogOutputChannel,
    private readonly userAgent: string,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('gatewayImages') || event.affectsConfiguration('http')) this.retireIfChanged();
      }),
    );
  }

  /** Whether a request could be sent now, without loading the HTTP stack. */
  async readiness(): Promise<'ready' | 'no-url' | 'no-key'> {
    if (!readSettings().baseUrl) return 'no-url';
    return (await this.keys.get()) ? 'ready' : 'no-key';
  }

  /** Throws NotConfiguredError when the base URL or the key is missing (before asking anything). */
  async assertReady(): Promise<void> {
    const readiness = await this.readiness();
    if (readiness === 'no-url') throw new NotConfiguredError('baseUrl');
    if (readiness === 'no-key') throw new NotConfiguredError('apiKey');
  }

  /** The client; throws NotConfiguredError when the base URL or the key is missing. */
  async client(): Promise<GatewayClient> {
    await this.assertReady();
    return this.clientFor(readSettings().baseUrl);
  }

  /**
   * The client with the key read once, and the identity (base URL + key fingerprint) it belongs to:
   * every call of one account refresh uses that key, even if the key changes meanwhile.
   */
  async keyedClient(): Promise<{ client: GatewayClient; key: string; identity: string } | 'no-url' | 'no-key'> {
    const baseUrl = readSettings().baseUrl;
    if (!baseUrl) return 'no-url';
    const key = await this.keys.get();
    if (!key) return 'no-key';
    return { client: this.clientFor(baseUrl), key, identity: accountIdentity(baseUrl, key) };
  }

  /** A client for the public catalog, which needs the base URL but no key. */
  clientForCatalog(): Promise<GatewayClient> {
    const baseUrl = readSettings().baseUrl;
    if (!baseUrl) return Promise.reject(new NotConfiguredError('baseUrl'));
    return Promise.resolve(this.clientFor(baseUrl));
  }

  /** A client for a given base URL and key, for checking a key before it is saved. */
  probeClient(baseUrl: string, key: string): GatewayClient {
    const { GatewayClient: Client, createDispatcher } = loadBundle();
    return new Client({
      baseUrl,
      getApiKey: () => key,
      dispatcher: createDispatcher(this.proxySettings(30_000)),
      closeDispatcher: true,
      onRequest: (entry) => logRequest(this.log, entry),
      userAgent: this.userAgent,
    });
  }

  private signature(baseUrl: string): string {
    return JSON.stringify([baseUrl, readSettings().requestTimeoutSeconds, this.proxySettings(0)]);
  }

  private clientFor(baseUrl: string): GatewayClient {
    const settings = readSettings();
    const signature = this.signature(baseUrl);
    if (this.cached?.signature === signature) return this.cached.client;
    this.retire();
    const { GatewayClient: Client, createDispatcher } = loadBundle();
    const timeoutMs = settings.requestTimeoutSeconds * 1000;
    const client = new Client({
      baseUrl,
      getApiKey: () => this.keys.get(),
      dispatcher: createDispatcher(this.proxySettings(timeoutMs)),
      // The agent is this client's alone: closing the client (on a settings change) closes it.
      closeDispatcher: true,
      paidTimeoutMs: timeoutMs,
      onRequest: (entry) => logRequest(this.log, entry),
      userAgent: this.userAgent,
    });
    this.cached = { signature, client };
    return client;
  }

  /** VS Code's connection settings with the request deadline. */
  private proxySettings(timeoutMs: number): ProxySettings {
    return { ...readConnectionSettings(), timeoutMs };
  }

  private retireIfChanged(): void {
    if (this.cached && this.cached.signature !== this.signature(readSettings().baseUrl)) this.retire();
  }

  /**
   * Stops handing out the current client without closing it: a closed agent refuses every new
   * request, and a job that took the client before the change (then wrote its in-flight record)
   * would fail with "The client is closed" although nothing about its gateway changed for it.
   */
  private retire(): void {
    if (this.cached) this.retired.add(this.cached.client);
    this.cached = undefined;
  }

  dispose(): void {
    this.retire();
    // Requests in flight keep their agent until they end; close() waits for them.
    for (const client of this.retired) void client.close().catch(() => undefined);
    this.retired.clear();
    for (const s of this.subscriptions) s.dispose();
  }
}

/**
 * VS Code's `http.*` settings the gateway connection follows; the MCP server gets the same through
 * its environment (mcp/register.ts), so the agents connect as the extension does.
 */
export function readConnectionSettings(): ConnectionSettings {
  const http = vscode.workspace.getConfiguration('http');
  const systemCertificates = http.get<boolean>('systemCertificates', true);
  // `off` turns every proxy off, the environment's too; VS Code's other values all use one.
  if (http.get<string>('proxySupport') === 'off') return { proxySupport: 'off', systemCertificates };
  const noProxy = http.get<unknown>('noProxy');
  return {
    proxy: http.get<string>('proxy')?.trim() || undefined,
    strictSSL: http.get<boolean>('proxyStrictSSL', true),
    noProxy: Array.isArray(noProxy) ? noProxy.filter((h): h is string => typeof h === 'string') : [],
    proxyAuthorization: http.get<string>('proxyAuthorization') || undefined,
    systemCertificates,
  };
}
