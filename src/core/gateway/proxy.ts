// Proxy support through undici's own agents: the undici we bundle is not patched by VS Code,
// so `http.proxy`, `http.proxyStrictSSL`, `http.noProxy` and the HTTPS_PROXY / HTTP_PROXY /
// NO_PROXY environment variables are applied here.
//
// - `http.proxySupport: off` turns every proxy off, the environment's too.
// - `http.proxy` wins over the environment and is used for http and https targets alike.
// - Without it, HTTPS_PROXY (or https_proxy) serves https targets and HTTP_PROXY (or http_proxy)
//   http targets; like VS Code, either one serves both when the other is absent.
// - `http.noProxy` and NO_PROXY are merged: a host listed in either is reached directly.
// - https targets go through a CONNECT tunnel; http targets are sent to the proxy as
//   absolute-URI requests (what forward proxies expect: many refuse CONNECT to port 80).
// - With `http.systemCertificates` on (VS Code's default), the system's trusted CAs are added to
//   Node's own (certificates.ts): a private CA or a TLS-inspecting proxy's CA installed there works.
// - TLS verification is never turned off globally. `proxyStrictSSL: false` relaxes it only for
//   connections that go through a proxy (the proxy itself and the target behind it); direct
//   connections, noProxy hosts included, always verify.
// - A paid request (every POST) goes on a connection of its own, never on a kept-alive one (see
//   PaidOnFreshConnections below).
import type { LookupFunction } from 'node:net';
import { Agent, Client, Dispatcher, EnvHttpProxyAgent, Pool } from 'undici';
import * as l10n from '@vscode/l10n';
import { trustedWithSystem } from './certificates';
import { ValidationError } from './errors';

export interface ProxySettings {
  /** VS Code's `http.proxySupport`: 'off' turns every proxy off, the environment's too. */
  proxySupport?: 'off' | 'on';
  /** VS Code's `http.proxy`, when set. */
  proxy?: string;
  /** VS Code's `http.proxyStrictSSL` (default true). Applies only to proxied connections, never globally. */
  strictSSL?: boolean;
  /** VS Code's `http.noProxy` host list. */
  noProxy?: string[];
  /** VS Code's `http.proxyAuthorization`: the Proxy-Authorization header value, when set. */
  proxyAuthorization?: string;
  /** VS Code's `http.systemCertificates`: trust the system's CAs too (certificates.ts). */
  systemCertificates?: boolean;
  /** Deadline of a paid request; undici's header/body timeouts are set to it. */
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * The connection settings as read from VS Code (host/gatewayConnection.ts) or from the MCP server's
 * environment (mcp/server/config.ts): one dispatcher is built from them in both processes.
 */
export type ConnectionSettings = Omit<ProxySettings, 'timeoutMs' | 'env'>;

/** Which proxy (if any) a target URL would use: for tests and the log, never with credentials. */
export interface ProxyChoice {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy: string;
}

const CONNECT_TIMEOUT_MS = 30_000;

/** The proxies and bypass list the settings and environment give, without building anything. */
export function resolveProxy(settings: Pick<ProxySettings, 'proxySupport' | 'proxy' | 'noProxy' | 'env'>): ProxyChoice {
  if (settings.proxySupport === 'off') return { noProxy: '' };
  const env = settings.env ?? process.env;
  const pick = (...names: string[]) => names.map((n) => env[n]?.trim()).find((v) => !!v);
  const entries = [...(settings.noProxy ?? []), ...(pick('NO_PROXY', 'no_proxy') ?? '').split(/[,\s]/)].map((s) => s.trim()).filter(Boolean);
  // undici only understands a lone '*' as "bypass everything".
  const noProxy = entries.includes('*') ? '*' : entries.join(',');
  const configured = settings.proxy?.trim();
  if (configured) {
    const uri = proxyUri(configured, 'http.proxy');
    return { httpProxy: uri, httpsProxy: uri, noProxy };
  }
  const https = pick('HTTPS_PROXY', 'https_proxy');
  const http = pick('HTTP_PROXY', 'http_proxy');
  if (!https && !http) return { noProxy };
  return {
    httpProxy: proxyUri((http ?? https)!, http ? 'HTTP_PROXY' : 'HTTPS_PROXY'),
    httpsProxy: proxyUri((https ?? http)!, https ? 'HTTPS_PROXY' : 'HTTP_PROXY'),
    noProxy,
  };
}

/**
 * The dispatcher of one gateway client: free GETs share kept-alive connections, paid POSTs each
 * open their own (see PaidOnFreshConnections).
 */
export function createDispatcher(settings: ProxySettings): Dispatcher {
  // The environment as it is now: a dispatcher built later from these settings (withLookup) uses the same proxies.
  const fixed = { ...settings, env: { ...(settings.env ?? process.env) } };
  return new PaidOnFreshConnections(fixed, buildDispatcher(fixed, true), buildDispatcher(fixed, false));
}

/**
 * A dispatcher with the same proxies and certificates as `dispatcher` (one createDispatcher made),
 * whose direct connections resolve names with `lookup`: image downloads check each address there,
 * right before connecting (answers/addressPolicy.ts). Names sent through a proxy are resolved by the
 * proxy, and the proxy's own name is not looked up with `lookup`. Undefined for a dispatcher made
 * elsewhere. The caller closes it.
 */
export function withLookup(dispatcher: Dispatcher, lookup: LookupFunction): Dispatcher | undefined {
  return dispatcher instanceof PaidOnFreshConnections ? buildDispatcher(dispatcher.settings, true, lookup) : undefined;
}

/**
 * Routes every POST (the paid requests) to a dispatcher that never reuses a connection (each
 * carries one request, with `Connection: close`), and the rest to one that keeps connections
 * alive. A server or a proxy may close a kept-alive connection just as the client reuses it
 * (tinyproxy closes each one after its answer without saying so): a request written into it is
 * cut, and nobody knows whether the gateway got it. A free GET is retried; a paid POST must not be
 * (RFC 9112, 9.3.1), so it never takes that risk. (undici 7 threw on a server's close met while the
 * answer was written to disk: mended by patches/undici@7.30.2.patch, see scripts/undiciMend.cjs.)
 */
class PaidOnFreshConnections extends Dispatcher {
  constructor(
    readonly settings: ProxySettings,
    private readonly shared: Dispatcher,
    private readonly fresh: Dispatcher,
  ) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return (options.method === 'POST' ? this.fresh : this.shared).dispatch(options, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all([this.shared.close(), this.fresh.close()]).then(() => undefined);
    if (!callback) return closed;
    void closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(error: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(error: Error | null, callback: () => void): void;
  override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
    const error = typeof first === 'function' ? null : (first ?? null);
    const callback = typeof first === 'function' ? first : second;
    const destroyed = Promise.all([this.shared.destroy(error), this.fresh.destroy(error)]).then(() => undefined);
    if (!callback) return destroyed;
    void destroyed.then(callback, callback);
  }
}

/**
 * `keepAlive: false`: each connection carries one request (undici's pipelining 0), then closes.
 * `lookup`: how direct connections resolve names (a proxy's connection and the targets behind it never use it).
 */
function buildDispatcher(settings: ProxySettings, keepAlive: boolean, lookup?: LookupFunction): Dispatcher {
  const timeouts = { headersTimeout: settings.timeoutMs, bodyTimeout: settings.timeoutMs, ...(keepAlive ? {} : { pipelining: 0 }) };
  const choice = resolveProxy(settings);
  const trust = settings.systemCertificates ? { ca: trustedWithSystem() } : {};
  const direct = { timeout: CONNECT_TIMEOUT_MS, ...trust, ...(lookup ? { lookup } : {}) };
  if (!choice.httpProxy && !choice.httpsProxy) {
    return new Agent({ ...timeouts, connect: direct });
  }
  const tls = { rejectUnauthorized: settings.strictSSL !== false, timeout: CONNECT_TIMEOUT_MS, ...trust };
  return new EnvHttpProxyAgent({
    // Explicit values, so undici never falls back to process.env behind our back.
    httpProxy: choice.httpProxy,
    httpsProxy: choice.httpsProxy,
    noProxy: choice.noProxy,
    ...timeouts,
    // Direct connections (noProxy hosts): always verified. (ProxyAgent replaces `connect` with its tunnel.)
    connect: direct,
    proxyTls: tls,
    requestTls: tls,
    proxyTunnel: false,
    ...(settings.proxyAuthorization ? { token: settings.proxyAuthorization } : {}),
    // undici builds the absolute-URI client without our timeouts (300 s defaults would cut a
    // slow generation): every pool and client it makes gets them.
    factory: (origin: string | URL, options: object) => {
      const merged = { ...options, ...timeouts };
      return (options as { connections?: number }).connections === 1 ? new Client(origin, merged) : new Pool(origin, merged);
    },
  });
}

function proxyUri(value: string, source: string): string {
  // VS Code accepts "host:port" in some places; a proxy URL without a scheme means http.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ValidationError(source, l10n.t('The proxy in {0} is not a valid URL.', source));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(source, l10n.t('The proxy in {0} must be an http:// or https:// URL (got {1}).', source, url.protocol));
  }
  return url.href;
}
