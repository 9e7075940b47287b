// Which addresses images are downloaded from (imageDownload.ts): public ones, and the gateway's own
// host. Anything an answer (or a redirect) points at on this machine or its networks is refused:
// loopback, private, link-local (cloud metadata at 169.254.169.254), unique-local, unspecified,
// carrier-grade NAT, multicast, broadcast and reserved addresses (ipAddress.ts), so that a gateway,
// or whatever shapes its answer, cannot make the extension call services only this machine reaches.
// - An IP literal is judged as written (it is never resolved).
// - A name is judged by every address it resolves to, when the connection is made: `lookup` is the
//   resolver of the download's direct connections (proxy.ts withLookup), so a name that answers one
//   address to a check and another to the connect cannot pass. check() also resolves it before the
//   request: the only check there can be when a proxy resolves the name (docs/security.md).
// - The gateway's own host (its base URL's hostname, as written) is the exception: the emulator on
//   loopback and a gateway on a private network keep working. Only that host: `localhost` is refused
//   when the gateway is 127.0.0.1.
// Pure: no vscode import.
import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import * as l10n from '@vscode/l10n';
import { type AddressKind, isIpAddress, nonPublicKind } from './ipAddress';

/** Every address a name resolves to (dns.lookup with `all`); tests inject their own. */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export const resolveWithSystem: ResolveAll = (hostname) => systemLookup(hostname, { all: true });

/** An address that images are not downloaded from: the message says which and why. */
export class AddressRefusedError extends Error {
  constructor(
    message: string,
    readonly address: string,
    readonly kind: AddressKind,
  ) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

export class AddressPolicy {
  private readonly gatewayHost: string;

  /** `gatewayOrigin`: the gateway's base URL (or its origin); its hostname is the one exception. */
  constructor(
    gatewayOrigin: string,
    private readonly resolve: ResolveAll = resolveWithSystem,
  ) {
    this.gatewayHost = new URL(gatewayOrigin).hostname.toLowerCase();
  }

  /**
   * Before each request (the first and every redirect): refuses a non-public IP literal, and a name
   * that resolves to a non-public address now. A name that cannot be resolved here passes: a direct
   * connection resolves it again through `lookup` (and fails or is checked there); a proxy resolves
   * it itself. Rejects with an AddressRefusedError, or with the signal's reason once it aborts.
   */
  async check(url: URL, signal?: AbortSignal): Promise<void> {
    const host = url.hostname.toLowerCase();
    if (host === this.gatewayHost) return;
    const literal = /^\[.*\]$/.test(host) ? host.slice(1, -1) : host;
    if (isIpAddress(literal)) {
      const kind = nonPublicKind(literal);
      if (kind) throw new AddressRefusedError(refusedLiteral(literal, kind), literal, kind);
      return;
    }
    let addresses: LookupAddress[];
    try {
      addresses = await untilAborted(this.resolve(host), signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      return;
    }
    refuseNonPublic(host, addresses);
  }

  /**
   * The `lookup` of the download's direct connections (net.connect calls it for a name, never for an
   * IP literal): every address the name resolves to is checked, right before the connection is made.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    void this.resolveChecked(hostname, options).then(
      (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family)),
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : ''),
    );
  };

  private async resolveChecked(hostname: string, options: LookupOptions): Promise<LookupAddress[]> {
    const all = await this.resolve(hostname);
    if (hostname.toLowerCase() !== this.gatewayHost) refuseNonPublic(hostname, all);
    const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    const wanted = family ? all.filter((a) => a.family === family) : all;
    if (!wanted.length) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    return wanted;
  }
}

/** Refuses the name when any of its addresses is not public: the connection may use any of them. */
function refuseNonPublic(hostname: string, addresses: LookupAddress[]): void {
  for (const { address } of addresses) {
    const kind = nonPublicKind(address);
    if (kind) {
      throw new AddressRefusedError(
        l10n.t(
          "refused: {0} resolves to {1}, {2}; images are downloaded only from public addresses or the gateway's own host",
          hostname,
          address,
          kindText(kind),
        ),
        address,
        kind,
      );
    }
  }
}

function refusedLiteral(address: string, kind: AddressKind): string {
  return l10n.t("refused: {0} is {1}; images are downloaded only from public addresses or the gateway's own host", address, kindText(kind));
}

function kindText(kind: AddressKind): string {
  switch (kind) {
    case 'loopback':
      return l10n.t('a loopback address (this machine)');
    case 'private':
      return l10n.t('a private address');
    case 'link-local':
      return l10n.t('a link-local address');
    case 'unique-local':
      return l10n.t('a unique-local address');
    case 'unspecified':
      return l10n.t('an unspecified address (this machine)');
    case 'shared':
      return l10n.t('a shared address (carrier-grade NAT)');
    case 'multicast':
      return l10n.t('a multicast address');
    case 'broadcast':
      return l10n.t('a broadcast address');
    case 'reserved':
      return l10n.t('a reserved address');
  }
}

/** `promise`, or the signal's reason as soon as it aborts (a resolver cannot be cancelled, only left). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
