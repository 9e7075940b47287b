// Certificates beyond Node's own: the operating system's store (VS Code's `http.systemCertificates`),
// for a gateway behind a TLS-inspecting proxy or with a private CA. TLS verification is never turned
// off here. Pure: no vscode import.
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';

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
