// Which addresses images are downloaded from (src/core/answers/addressPolicy.ts, ipAddress.ts), and how
// an address is shown in messages (shownAddress.ts). Pure: no network; names resolve through an
// injected resolver. The connections themselves are in refusedAddresses.test.ts.
import * as assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { AddressPolicy, AddressRefusedError } from '../../src/core/answers/addressPolicy';
import { type AddressKind, isIpAddress, nonPublicKind, parseIPv4, parseIPv6 } from '../../src/core/answers/ipAddress';
import { shownAddress } from '../../src/core/answers/shownAddress';
import { caught } from './support/gateway';

const WHY = "images are downloaded only from public addresses or the gateway's own host";

describe('Address policy of image downloads', () => {
  describe('IPv4 in every form a host can be written in', () => {
    it('reads the decimal, octal, hex and short forms as a URL does', () => {
      const cases: [string, string][] = [
        ['127.0.0.1', '127.0.0.1'],
        ['2130706433', '127.0.0.1'],
        ['0x7f000001', '127.0.0.1'],
        ['017700000001', '127.0.0.1'],
        ['0177.0.0.1', '127.0.0.1'],
        ['0x7f.1', '127.0.0.1'],
        ['0x7F.0.0.0x1', '127.0.0.1'],
        ['127.1', '127.0.0.1'],
        ['127.0.1', '127.0.0.1'],
        ['127.0.0.1.', '127.0.0.1'],
        ['0', '0.0.0.0'],
        ['0x', '0.0.0.0'],
        ['167772165', '10.0.0.5'],
        ['0xa9fea9fe', '169.254.169.254'],
        ['0300.0250.1.1', '192.168.1.1'],
        ['4294967295', '255.255.255.255'],
      ];
      for (const [raw, dotted] of cases) {
        assert.equal(parseIPv4(raw)?.join('.'), dotted, raw);
        // What the URL parser gives the same host: the two readings agree.
        assert.equal(new URL(`http://${raw}/`).hostname, dotted, `new URL() of ${raw}`);
      }
    });

    it('leaves names and malformed numbers alone', () => {
      for (const raw of ['example.com', 'localhost', '256.0.0.1', '1.2.3.4.5', '08.0.0.1', '0x1g', '4294967296', '1.16777216', '', '.', '1..2', '127.0.0.1..'])
        assert.equal(parseIPv4(raw), undefined, raw);
    });
  });

  describe('IPv6', () => {
    it('reads ::, an IPv4 tail, brackets and a zone', () => {
      const hex = (text: string) =>
        parseIPv6(text)
          ?.map((b) => b.toString(16).padStart(2, '0'))
          .join('');
      assert.equal(hex('::'), '0'.repeat(32));
      assert.equal(hex('::1'), `${'0'.repeat(30)}01`);
      assert.equal(hex('[::1]'), `${'0'.repeat(30)}01`);
      assert.equal(hex('::ffff:127.0.0.1'), `${'0'.repeat(20)}ffff7f000001`);
      assert.equal(hex('::ffff:7f00:1'), `${'0'.repeat(20)}ffff7f000001`);
      assert.equal(hex('fe80::1%eth0'), `fe80${'0'.repeat(26)}01`);
      assert.equal(hex('1:2:3:4:5:6:7:8'), '00010002000300040005000600070008');
      for (const bad of ['1:2:3:4:5:6:7:8:9', '1::2::3', ':1', '1:::2', '::ffff:1.2.3', '::ffff:1.2.3.256', 'g::1', '12345::', 'example.com', '[::1'])
        assert.equal(parseIPv6(bad), undefined, bad);
    });
  });

  it('names every non-public kind, in every form, and lets public addresses pass', () => {
    const cases: [string, AddressKind | undefined][] = [
      // IPv4 ranges, with their edges
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['9.255.255.255', undefined],
      ['10.0.0.0', 'private'],
      ['10.0.0.5', 'private'],
      ['10.255.255.255', 'private'],
      ['11.0.0.0', undefined],
      ['100.63.255.255', undefined],
      ['100.64.0.1', 'shared'],
      ['100.127.255.255', 'shared'],
      ['100.128.0.0', undefined],
      ['126.255.255.255', undefined],
      ['127.0.0.1', 'loopback'],
      ['127.0.0.2', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['169.254.169.254', 'link-local'],
      ['169.253.255.255', undefined],
      ['172.15.255.255', undefined],
      ['172.16.0.0', 'private'],
      ['172.31.255.255', 'private'],
      ['172.32.0.0', undefined],
      ['192.0.0.170', 'reserved'],
      ['192.168.0.1', 'private'],
      ['192.169.0.1', undefined],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['240.0.0.1', 'reserved'],
      ['255.255.255.255', 'broadcast'],
      ['8.8.8.8', undefined],
      ['1.1.1.1', undefined],
      // Documentation ranges route nowhere; 198.18/15 is where "fake IP" proxies map every name: public here.
      ['192.0.2.1', undefined],
      ['203.0.113.1', undefined],
      ['198.18.0.1', undefined],
      // The other IPv4 forms
      ['2130706433', 'loopback'],
      ['0177.0.0.1', 'loopback'],
      ['0x7f.1', 'loopback'],
      ['127.1', 'loopback'],
      ['0', 'unspecified'],
      ['167772165', 'private'],
      ['0xa9fea9fe', 'link-local'],
      ['0300.0250.1.1', 'private'],
      // IPv6
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['[::1]', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['febf:ffff::1', 'link-local'],
      ['fec0::1', 'private'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456:789a::1', 'unique-local'],
      ['ff02::1', 'multicast'],
      ['2001:4860:4860::8888', undefined],
      ['2606:4700::1111', undefined],
      ['2001:db8::1', undefined],
      // IPv4 inside IPv6: mapped, compatible, SIIT, NAT64, 6to4, Teredo
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['[::ffff:7f00:2]', 'loopback'],
      ['::ffff:10.0.0.5', 'private'],
      ['::ffff:a9fe:a9fe', 'link-local'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['::ffff:8.8.8.8', undefined],
      ['::127.0.0.1', 'loopback'],
      ['::ffff:0:192.168.0.1', 'private'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['64:ff9b::10.0.0.1', 'private'],
      ['64:ff9b::8.8.8.8', undefined],
      ['64:ff9b:1::1', 'private'],
      ['2002:7f00:1::', 'loopback'],
      ['2002:a9fe:a9fe::1', 'link-local'],
      ['2002:808:808::1', undefined],
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // Teredo, client 127.0.0.1 inverted
      ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', undefined], // client 8.8.8.8
      // Names are not addresses: resolved first, then judged.
      ['localhost', undefined],
      ['example.com', undefined],
    ];
    for (const [address, kind] of cases) assert.equal(nonPublicKind(address), kind, address);
    assert.ok(isIpAddress('0x7f.1') && isIpAddress('[::1]') && !isIpAddress('localhost'));
  });

  describe('check() before each request', () => {
    /** A resolver that answers from `table` and counts what it was asked. */
    const resolver = (table: Record<string, string[]>) => {
      const asked: string[] = [];
      const resolve = async (name: string): Promise<LookupAddress[]> => {
        asked.push(name);
        const addresses = table[name];
        if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
        return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      };
      return { asked, resolve };
    };
    const refusal = (url: string, policy: AddressPolicy) => caught<AddressRefusedError>(() => policy.check(new URL(url)));

    it('refuses a non-public literal in each form, with the address and why', async () => {
      const { asked, resolve } = resolver({});
      const policy = new AddressPolicy('http://127.0.0.1:8080', resolve);
      const cases: [string, string, string][] = [
        ['http://10.0.0.5/a.png', '10.0.0.5', 'a private address'],
        ['http://127.0.0.2:8080/a.png', '127.0.0.2', 'a loopback address (this machine)'],
        ['http://2130706434/a.png', '127.0.0.2', 'a loopback address (this machine)'],
        ['http://0177.0.0.2/', '127.0.0.2', 'a loopback address (this machine)'],
        ['http://0x7f.2/', '127.0.0.2', 'a loopback address (this machine)'],
        ['http://127.2/', '127.0.0.2', 'a loopback address (this machine)'],
        ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'a link-local address'],
        ['https://[fe80::1]/', 'fe80::1', 'a link-local address'],
        ['https://[fd00::5]/', 'fd00::5', 'a unique-local address'],
        ['http://[::1]:8080/', '::1', 'a loopback address (this machine)'],
        ['http://[::ffff:127.0.0.1]:8080/', '::ffff:7f00:1', 'a loopback address (this machine)'],
        ['http://[::ffff:7f00:1]:8080/', '::ffff:7f00:1', 'a loopback address (this machine)'],
        ['http://[64:ff9b::a00:5]/', '64:ff9b::a00:5', 'a private address'],
        ['http://0.0.0.0:8080/', '0.0.0.0', 'an unspecified address (this machine)'],
        ['http://0:8080/', '0.0.0.0', 'an unspecified address (this machine)'],
        ['http://[::]/', '::', 'an unspecified address (this machine)'],
        ['http://100.64.0.1/', '100.64.0.1', 'a shared address (carrier-grade NAT)'],
        ['http://224.0.0.1/', '224.0.0.1', 'a multicast address'],
        ['http://255.255.255.255/', '255.255.255.255', 'a broadcast address'],
        ['http://192.168.1.1/', '192.168.1.1', 'a private address'],
        ['http://172.16.0.1/', '172.16.0.1', 'a private address'],
      ];
      for (const [url, address, kind] of cases) {
        const error = await refusal(url, policy);
        assert.ok(error instanceof AddressRefusedError, url);
        assert.equal(error.message, `refused: ${address} is ${kind}; ${WHY}`, url);
      }
      assert.deepEqual(asked, [], 'a literal is never resolved');
      await policy.check(new URL('http://8.8.8.8/a.png'));
      await policy.check(new URL('https://[2606:4700::1111]/a.png'));
    });

    it("the gateway's own host is the exception, by name as written: not another name for it", async () => {
      const { resolve } = resolver({ localhost: ['127.0.0.1', '::1'], 'gw.corp': ['10.1.2.3'] });
      // The emulator on loopback: its host, any port.
      const local = new AddressPolicy('http://127.0.0.1:8080', resolve);
      await local.check(new URL('http://127.0.0.1:8080/files/0.png'));
      await local.check(new URL('http://127.0.0.1:9999/files/0.png'));
      await local.check(new URL('http://2130706433:8080/files/0.png')); // the same host, as a URL writes it
      assert.equal(
        (await refusal('http://localhost:8080/', local)).message,
        `refused: localhost resolves to 127.0.0.1, a loopback address (this machine); ${WHY}`,
      );
      assert.match((await refusal('http://127.0.0.2:8080/', local)).message, /^refused: 127\.0\.0\.2 is a loopback/);
      assert.match((await refusal('http://[::1]:8080/', local)).message, /^refused: ::1 is a loopback/);
      // A gateway on a private network, by name.
      const corp = new AddressPolicy('https://GW.corp/api', resolve);
      await corp.check(new URL('https://gw.corp/files/0.png'));
      await corp.check(new URL('http://gw.corp:8443/files/0.png'));
      assert.match((await refusal('https://10.1.2.3/files/0.png', corp)).message, /^refused: 10\.1\.2\.3 is a private address/);
    });

    it('refuses a name when any address it resolves to is not public; a name that does not resolve here passes', async () => {
      const { asked, resolve } = resolver({
        'internal.example': ['10.0.0.5'],
        'mixed.example': ['203.0.113.1', '127.0.0.2'],
        'mapped.example': ['::ffff:169.254.169.254'],
        'public.example': ['192.0.2.1', '2001:db8::1'],
      });
      const policy = new AddressPolicy('https://gw.example', resolve);
      assert.equal(
        (await refusal('https://internal.example/a.png', policy)).message,
        `refused: internal.example resolves to 10.0.0.5, a private address; ${WHY}`,
      );
      assert.equal(
        (await refusal('https://mixed.example/a.png', policy)).message,
        `refused: mixed.example resolves to 127.0.0.2, a loopback address (this machine); ${WHY}`,
      );
      assert.equal(
        (await refusal('https://mapped.example/a.png', policy)).message,
        `refused: mapped.example resolves to ::ffff:169.254.169.254, a link-local address; ${WHY}`,
      );
      await policy.check(new URL('https://public.example/a.png'));
      // Unresolvable here: a direct connection resolves (and checks) it again; a proxy resolves it itself.
      await policy.check(new URL('https://only-the-proxy-knows.example/a.png'));
      assert.deepEqual(asked, ['internal.example', 'mixed.example', 'mapped.example', 'public.example', 'only-the-proxy-knows.example']);
    });

    it('stops waiting for a resolver when the signal aborts', async () => {
      const policy = new AddressPolicy('https://gw.example', () => new Promise<never>(() => undefined));
      const abort = new AbortController();
      const checking = policy.check(new URL('https://slow.example/a.png'), abort.signal);
      abort.abort(new Error('deadline'));
      assert.equal((await caught(() => checking)).message, 'deadline');
    });
  });

  describe('lookup at connect time', () => {
    /** Calls the policy's lookup as net.connect does. */
    const lookup = (policy: AddressPolicy, name: string, options: { all?: boolean; family?: number }) =>
      new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
        policy.lookup(name, options, (error, address, family) => resolve({ error, address, family })),
      );

    it('answers as dns.lookup does, with all addresses or the first of the family asked for', async () => {
      const policy = new AddressPolicy('https://gw.example', async () => [
        { address: '192.0.2.1', family: 4 },
        { address: '2001:db8::1', family: 6 },
      ]);
      assert.deepEqual((await lookup(policy, 'cdn.example', { all: true })).address, [
        { address: '192.0.2.1', family: 4 },
        { address: '2001:db8::1', family: 6 },
      ]);
      assert.deepEqual(await lookup(policy, 'cdn.example', {}), { error: null, address: '192.0.2.1', family: 4 });
      assert.deepEqual(await lookup(policy, 'cdn.example', { family: 6 }), { error: null, address: '2001:db8::1', family: 6 });
    });

    it("refuses what a name resolves to now, whatever it resolved to before; the gateway's host passes", async () => {
      const answers = [['192.0.2.1'], ['127.0.0.1']];
      const policy = new AddressPolicy('http://localhost:8080', async () => answers.shift()!.map((address) => ({ address, family: 4 })));
      await policy.check(new URL('http://rebind.example/a.png'));
      const connect = await lookup(policy, 'rebind.example', { all: true });
      assert.ok(connect.error instanceof AddressRefusedError);
      assert.equal(connect.error.message, `refused: rebind.example resolves to 127.0.0.1, a loopback address (this machine); ${WHY}`);
      const gateway = new AddressPolicy('http://localhost:8080', async () => [{ address: '127.0.0.1', family: 4 }]);
      assert.deepEqual(await lookup(gateway, 'localhost', { all: true }), { error: null, address: [{ address: '127.0.0.1', family: 4 }], family: undefined });
    });

    it('passes on what the resolver failed with', async () => {
      const policy = new AddressPolicy('https://gw.example', () =>
        Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' })),
      );
      const { error } = await lookup(policy, 'nowhere.example', { all: true });
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOTFOUND');
    });
  });

  describe('shownAddress: no query, fragment or credentials in messages and logs', () => {
    it('keeps the origin and path and says a query was there', () => {
      const cases: [string, string][] = [
        ['https://cdn.example/img/0.png?X-Amz-Signature=abc123&X-Amz-Expires=60', 'https://cdn.example/img/0.png?…'],
        ['https://cdn.example/img/0.png#sig=abc123', 'https://cdn.example/img/0.png#…'],
        ['https://user:secret@cdn.example/0.png', 'https://cdn.example/0.png'],
        ['  http://127.0.0.1:8080/files/r1/0.png  ', 'http://127.0.0.1:8080/files/r1/0.png'],
        ['HTTPS://CDN.example:443/a%20b.png?', 'https://cdn.example/a%20b.png'],
        ['ftp://user:pw@files.example/a.png?token=abc123', 'ftp://files.example/a.png?…'],
        ['file:///etc/passwd', 'file:///etc/passwd'],
        ['javascript:alert(1)', 'javascript:alert(1)'],
        ['/relative/a.png?sig=abc123', '/relative/a.png?…'],
        ['not a url ?sig=abc123', 'not a url ?…'],
      ];
      for (const [address, shown] of cases) assert.equal(shownAddress(address), shown, address);
      const long = shownAddress(`https://cdn.example/${'a'.repeat(500)}.png?sig=abc123`);
      assert.ok(long.length < 210 && long.endsWith('…?…') && !long.includes('abc123'), long);
    });
  });
});
