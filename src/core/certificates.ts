// Certificates beyond Node's own: the operating system's store (VS Code's `http.systemCertificates`),
// for a gateway behind a TLS-inspecting proxy or with a private CA; and what a certificate failure
// means, in words that name the settings that fix it. TLS verification is never turned off here.
// Pure: no vscode import.
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import * as l10n from '@vscode/l10n';
import { ConnectionError } from './errors';

/** Where Linux distributions keep the system's bundle of trusted CAs (Debian/Ubuntu first). */
const LINUX_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

type CaReader = (type: 'default' | 'system') => string[];
const getCACertificates = (tls as unknown as { getCACertificates?: CaReader }).getCACertificates;

let cached: string[] | undefined;

/**
 * The CAs a connection trusts when `http.systemCertificates` is on: Node's defaults (its bundled
 * CAs and NODE_EXTRA_CA_CERTS) and the system's. Node 22.15 and newer read the system store on every
 * platform; older ones (VS Code 1.100's Node 20) read the Linux bundle. Read once (a file of ~200 KB).
 */
export function trustedWithSystem(): string[] {
  if (cached) return cached;
  const system = systemCertificates();
  const defaults = getCACertificates ? getCACertificates('default') : [...tls.rootCertificates, ...pemFile(process.env.NODE_EXTRA_CA_CERTS)];
  cached = [...new Set([...defaults, ...system])];
  return cached;
}

function systemCertificates(): string[] {
  if (getCACertificates) {
    try {
      return getCACertificates('system');
    } catch {
      // Falls back to the bundle files.
    }
  }
  if (process.platform !== 'linux') return [];
  for (const file of LINUX_BUNDLES) {
    const certificates = pemFile(file);
    if (certificates.length) return certificates;
  }
  return [];
}

function pemFile(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return readFileSync(file, 'latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  } catch {
    return [];
  }
}

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
