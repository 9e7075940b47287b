// Proxy support through undici's own agents: the undici we bundle is not patched by VS Code,
// so `http.proxy`, `http.proxyStrictSSL`, `http.noProxy` and the HTTPS_PROXY / HTTP_PROXY /
// NO_PROXY environment variables are applied here.
//
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
import { Agent, Client, type Dispatcher, EnvHttpProxyAgent, Pool } from 'undici';
import * as l10n from '@vscode/l10n';
import { trustedWithSystem } from './certificates';
import { ValidationError } from './errors';

export interface ProxySettings {
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

/** Which proxy (if any) a target URL would use: for tests and the log, never with credentials. */
export interface ProxyChoice {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy: string;
}

const CONNECT_TIMEOUT_MS = 30_000;

/** The proxies and bypass list the settings and environment give, without building anything. */
export function resolveProxy(settings: Pick<ProxySettings, 'proxy' | 'noProxy' | 'env'>): ProxyChoice {
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

export function createDispatcher(settings: ProxySettings): Dispatcher {
  const timeouts = { headersTimeout: settings.timeoutMs, bodyTimeout: settings.timeoutMs };
  const choice = resolveProxy(settings);
  const trust = settings.systemCertificates ? { ca: trustedWithSystem() } : {};
  if (!choice.httpProxy && !choice.httpsProxy) {
    return new Agent({ ...timeouts, connect: { timeout: CONNECT_TIMEOUT_MS, ...trust } });
  }
  const tls = { rejectUnauthorized: settings.strictSSL !== false, timeout: CONNECT_TIMEOUT_MS, ...trust };
  return new EnvHttpProxyAgent({
    // Explicit values, so undici never falls back to process.env behind our back.
    httpProxy: choice.httpProxy,
    httpsProxy: choice.httpsProxy,
    noProxy: choice.noProxy,
    ...timeouts,
    // Direct connections (noProxy hosts): always verified.
    connect: { timeout: CONNECT_TIMEOUT_MS, ...trust },
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
