// Connection failures that a setting fixes, in words that name it: a certificate that cannot be
// verified, a proxy that asks for credentials. Both happen before the request reaches the gateway:
// nothing is charged, and they are not tried again. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { ConnectionError, GatewayError } from './errors';

/** The certificate could not be verified: never retried, and its message says what fixes it. */
export class CertificateError extends ConnectionError {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const UNTRUSTED = new Set([
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const OUT_OF_DATE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const WRONG_HOST = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);

/** The TLS failure as a CertificateError, or undefined when `code` is not one. */
export function certificateError(code: string | undefined, cause: unknown): CertificateError | undefined {
  if (!code) return undefined;
  const detail = cause instanceof Error ? cause.message : String(cause);
  if (UNTRUSTED.has(code))
    return new CertificateError(
      code,
      l10n.t(
        'The certificate of the gateway (or of a proxy that inspects TLS on your network) is not trusted: {0} ({1}). Nothing was sent. Trust the certificate authority that signed it: set the NODE_EXTRA_CA_CERTS environment variable to its PEM file before starting VS Code, or add it to the system certificate store and keep "http.systemCertificates" on. Verification is not turned off.',
        detail,
        code,
      ),
      { cause },
    );
  if (OUT_OF_DATE.has(code))
    return new CertificateError(
      code,
      l10n.t(
        'The gateway\'s certificate is out of date: {0} ({1}). Nothing was sent. Check this computer\'s clock, and the address in "gatewayImages.baseUrl".',
        detail,
        code,
      ),
      { cause },
    );
  if (WRONG_HOST.has(code))
    return new CertificateError(
      code,
      l10n.t('The gateway\'s certificate is for another host: {0} ({1}). Nothing was sent. Check the address in "gatewayImages.baseUrl".', detail, code),
      { cause },
    );
  return undefined;
}

/** The proxy answered 407: the request never reached the gateway. */
export class ProxyAuthenticationError extends ConnectionError {
  readonly stoppedByProxy = true;
}

// This module is bundled into gateway.js (the client that throws these errors) and into the
// bundles that run jobs and show errors (extension.js, mcp.js), each with its own copy of the
// classes: outside gateway.js, `instanceof` cannot tell them, so these read what the error carries.

/** A proxy's 407: the request went no further than the proxy, even when its body had left. */
export function stoppedByProxy(error: unknown): boolean {
  return error instanceof GatewayError && (error as Partial<ProxyAuthenticationError>).stoppedByProxy === true;
}

/** A certificate that no trusted authority signed (as opposed to one out of date or for another host). */
export function untrustedCertificate(error: unknown): boolean {
  const code = (error as Partial<CertificateError>).code;
  return error instanceof GatewayError && error.kind === 'connection' && typeof code === 'string' && UNTRUSTED.has(code);
}

/** undici's words for a proxy's 407 (absolute-URI requests, and CONNECT tunnels). */
const PROXY_407 = /Proxy Authentication Required \(407\)|Proxy response \(407\)/;

/** The failure as a ProxyAuthenticationError when the proxy asked for credentials. */
export function proxyAuthenticationError(cause: unknown): ProxyAuthenticationError | undefined {
  if (!(cause instanceof Error) || !PROXY_407.test(cause.message)) return undefined;
  return new ProxyAuthenticationError(
    l10n.t(
      'The proxy asks for credentials (407 Proxy Authentication Required). Nothing reached the gateway. Set "http.proxyAuthorization" (Basic and the base64 of user:password), or put them in "http.proxy" (http://user:password@host:port).',
    ),
    { cause },
  );
}
