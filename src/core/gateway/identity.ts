// Which account figures belong to: the gateway's base URL and a fingerprint of the key. The
// fingerprint is a short SHA-256 prefix: enough to tell keys apart, never enough to recover one.
// Pure: no vscode import.
import { createHash } from 'node:crypto';
import { normalizeBaseUrl } from './baseUrl';

export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key.trim(), 'utf8').digest('hex').slice(0, 12);
}

/** `<normalised base URL>|<key fingerprint>`; a base URL that does not parse is used as typed. */
export function accountIdentity(baseUrl: string, key: string): string {
  let url: string;
  try {
    url = normalizeBaseUrl(baseUrl);
  } catch {
    url = baseUrl.trim();
  }
  return `${url}|${keyFingerprint(key)}`;
}
