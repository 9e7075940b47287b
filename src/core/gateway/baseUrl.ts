// The base URL setting: https is required, except on loopback where the emulator and local
// proxies live. A trailing `/v1` (as people copy from other APIs) is accepted and dropped.
import { ValidationError } from './errors';
import * as l10n from '@vscode/l10n';

export function normalizeBaseUrl(input: string): string {
  const text = input.trim();
  if (!text) throw new ValidationError('baseUrl', l10n.t('Set "gatewayImages.baseUrl" to the gateway address, for example https://gateway.example/.'));
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError('baseUrl', l10n.t('"gatewayImages.baseUrl" is not a valid URL: "{0}". Use https://host[/path].', text));
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ValidationError(
      'baseUrl',
      l10n.t('"gatewayImages.baseUrl" must use https (plain http is allowed only on loopback such as 127.0.0.1); got "{0}".', `${url.protocol}//${url.host}`),
      ['https:'],
    );
  }
  if (url.username || url.password) {
    throw new ValidationError('baseUrl', l10n.t('"gatewayImages.baseUrl" must not contain a user name or password; the API key is stored separately.'));
  }
  url.search = '';
  url.hash = '';
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
  return `${url.origin}${path}`;
}

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
