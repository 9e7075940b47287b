// IP addresses in every form a host can be written in, and which of them are not public: what the
// address policy of image downloads (addressPolicy.ts) refuses. Pure: no vscode import, no network.
// - IPv4 as WHATWG URLs and inet_aton read it: 1 to 4 parts, each decimal, octal (leading 0) or hex
//   (0x), the last filling the remaining bytes: 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 are all
//   127.0.0.1. `new URL()` already writes them as 127.0.0.1; the raw forms are read here all the same.
// - IPv6 with `::`, an IPv4 tail, brackets and a zone (`%eth0`, as a resolver may answer for fe80::).
// - Addresses that carry an IPv4 address inside (IPv4-mapped and -compatible, NAT64 64:ff9b::/96,
//   6to4 2002::/16, Teredo 2001::/32) are judged by the IPv4 address they lead to.

/** Why an address is not public. */
export type AddressKind = 'loopback' | 'private' | 'link-local' | 'unique-local' | 'unspecified' | 'shared' | 'multicast' | 'broadcast' | 'reserved';

/** IPv4 ranges that are not public, first match wins. Not listed on purpose: the documentation ranges
 * (192.0.2/24, 198.51.100/24, 203.0.113/24: routed nowhere) and 198.18/15, where proxies in "fake IP"
 * mode (Clash, Surge) map every name they resolve: refusing it would refuse every name behind them. */
const IPV4_RANGES: [base: [number, number, number, number], prefix: number, kind: AddressKind][] = [
  [[0, 0, 0, 0], 8, 'unspecified'], // "this network": 0.0.0.0 reaches this machine
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'shared'], // carrier-grade NAT
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'], // 169.254.169.254: cloud metadata
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'reserved'], // IETF protocol assignments (NAT64 discovery and others)
  [[192, 168, 0, 0], 16, 'private'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[255, 255, 255, 255], 32, 'broadcast'],
  [[240, 0, 0, 0], 4, 'reserved'],
];

/**
 * Why `address` (an IPv4 or IPv6 address in any form above, brackets allowed) is not public, or
 * undefined when it is public or is not an IP address at all (a name: resolve it, then ask again).
 */
export function nonPublicKind(address: string): AddressKind | undefined {
  const v4 = parseIPv4(address);
  if (v4) return ipv4Kind(v4);
  const v6 = parseIPv6(address);
  return v6 ? ipv6Kind(v6) : undefined;
}

/** Whether `text` is an IP address in one of the forms above (and so is never resolved). */
export function isIpAddress(text: string): boolean {
  return parseIPv4(text) !== undefined || parseIPv6(text) !== undefined;
}

/** The 4 bytes of an IPv4 address written in any of the WHATWG / inet_aton forms, else undefined. */
export function parseIPv4(text: string): number[] | undefined {
  const parts = text.split('.');
  // One trailing dot is allowed, as a URL allows it ("127.0.0.1." is 127.0.0.1).
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  if (parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const value = ipv4Number(part);
    if (value === undefined) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  for (const [i, n] of numbers.entries()) value += n * 256 ** (3 - i);
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255];
}

/** The 16 bytes of an IPv6 address (brackets and a zone allowed), else undefined. */
export function parseIPv6(text: string): number[] | undefined {
  let rest = /^\[.*\]$/.test(text) ? text.slice(1, -1) : text;
  rest = rest.replace(/%[^%]*$/, '');
  if (!rest.includes(':')) return undefined;
  // An IPv4 tail (::ffff:127.0.0.1) becomes its two groups; only plain dotted decimal is allowed there.
  const tailAt = rest.lastIndexOf(':') + 1;
  const tail = rest.slice(tailAt);
  if (tail.includes('.')) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(tail)) return undefined;
    const bytes = tail.split('.').map(Number);
    if (bytes.some((b) => b > 255)) return undefined;
    rest = `${rest.slice(0, tailAt)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === '') return [];
    const groups = half.split(':');
    return groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g)) ? groups.map((g) => parseInt(g, 16)) : undefined;
  };
  const head = groupsOf(halves[0]!);
  const end = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !end) return undefined;
  const missing = 8 - head.length - end.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<number>(missing).fill(0), ...end];
  return groups.flatMap((g) => [g >> 8, g & 255]);
}

function ipv4Number(part: string): number | undefined {
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) {
    radix = 16;
    digits = part.slice(2);
    if (digits === '') return 0; // "0x" alone is 0, as a URL reads it
  } else if (part.length > 1 && part.startsWith('0')) {
    radix = 8;
    digits = part.slice(1);
  }
  const pattern = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!pattern.test(digits)) return undefined;
  const value = parseInt(digits, radix);
  return Number.isFinite(value) ? value : undefined;
}

function ipv4Kind(bytes: number[]): AddressKind | undefined {
  const value = toUint32(bytes);
  for (const [base, prefix, kind] of IPV4_RANGES) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if ((value & mask) >>> 0 === toUint32(base)) return kind;
  }
  return undefined;
}

function ipv6Kind(b: number[]): AddressKind | undefined {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const embedded = (at: number, xor = 0) => ipv4Kind(b.slice(at, at + 4).map((x) => x ^ xor));
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96 (deprecated), and SIIT's ::ffff:0:0:0/96.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return embedded(12);
  if (zeros(0, 12)) return embedded(12);
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return embedded(12);
  // NAT64, the well-known prefix 64:ff9b::/96; the local-use 64:ff9b:1::/48 leads into a local network.
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zeros(4, 12)) return embedded(12);
    if (b[4] === 0 && b[5] === 1) return 'private';
  }
  if (b[0] === 0x20 && b[1] === 0x02) return embedded(2); // 6to4
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return embedded(12, 0xff); // Teredo: the client's address, inverted
  if ((b[0]! & 0xfe) === 0xfc) return 'unique-local'; // fc00::/7
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local'; // fe80::/10
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private'; // fec0::/10, the former site-local
  if (b[0] === 0xff) return 'multicast';
  return undefined;
}

function toUint32(bytes: readonly number[]): number {
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}
