// Proxy support through undici's own agents: the undici we bundle is not patched by VS Code,
// so `http.proxy`, `http.proxyStrictSSL` and `http.noProxy` are applied here.
import { Agent, Dispatcher, EnvHttpProxyAgent } from 'undici';

export interface ProxySettings {
  /** VS Code's `http.proxy`, when set. */
  proxy?: string;
  /** VS Code's `http.proxyStrictSSL` (default true). Applies only to proxied connections, never globally. */
  strictSSL?: boolean;
  /** VS Code's `http.noProxy` host list. */
  noProxy?: string[];
  /** Deadline of a paid request; undici's header/body timeouts are set to it. */
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

export function createDispatcher(settings: ProxySettings): Dispatcher {
  const timeouts = { headersTimeout: settings.timeoutMs, bodyTimeout: settings.timeoutMs };
  const env = settings.env ?? process.env;
  const noProxy = [...(settings.noProxy ?? []), ...(env.NO_PROXY ?? env.no_proxy ?? '').split(',')]
    .map((s) => s.trim())
    .filter(Boolean)
    .join(',');
  if (settings.proxy) {
    return new EnvHttpProxyAgent({
      httpProxy: settings.proxy,
      httpsProxy: settings.proxy,
      noProxy,
      ...timeouts,
      proxyTls: { rejectUnauthorized: settings.strictSSL !== false },
      requestTls: { rejectUnauthorized: settings.strictSSL !== false },
    });
  }
  const envProxy = env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy;
  if (envProxy) {
    return new EnvHttpProxyAgent({ httpProxy: env.HTTP_PROXY ?? env.http_proxy ?? envProxy, httpsProxy: envProxy, noProxy, ...timeouts });
  }
  return new Agent({ ...timeouts, connect: { timeout: 30_000 } });
}
