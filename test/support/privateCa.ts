// A certificate authority made in the test (openssl from Debian), a server certificate it signs for
// 127.0.0.1 and localhost, and a TLS front that serves the emulator with it: what a corporate
// TLS-inspecting proxy or a private gateway looks like to the client. No vscode import.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';

export interface PrivateCa {
  dir: string;
  /** The CA's certificate (PEM file): what a user trusts. */
  caFile: string;
  caPem: string;
  key: Buffer;
  /** The server's certificate, signed by the CA (leaf only, as servers send it). */
  cert: Buffer;
  remove(): void;
}

/** Makes a CA and a server certificate; throws when openssl is missing. */
export function makePrivateCa(): PrivateCa {
  const dir = mkdtempSync(path.join(tmpdir(), 'gwi-private-ca-'));
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=Gateway Images Test CA', '-keyout', at('ca.key'), '-out', at('ca.pem'));
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', at('server.key'), '-out', at('server.csr'));
  writeFileSync(at('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    at('server.ext'),
    '-out',
    at('server.pem'),
  );
  return {
    dir,
    caFile: at('ca.pem'),
    caPem: readFileSync(at('ca.pem'), 'utf8'),
    key: readFileSync(at('server.key')),
    cert: readFileSync(at('server.pem')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsFront {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  /** TLS handshakes begun (a client that gives up on the certificate counts too). */
  handshakes(): number;
  close(): Promise<void>;
}

/** Terminates TLS with the CA's server certificate and passes the bytes on to `targetPort` on loopback. */
export async function startTlsFront(ca: PrivateCa, targetPort: number): Promise<TlsFront> {
  let handshakes = 0;
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ key: ca.key, cert: ca.cert }, (client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.on('connection', (socket: net.Socket) => {
    handshakes++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    handshakes: () => handshakes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The command prefix that runs a process with `ca` trusted by the system store: a private mount
 * namespace where the system's CA bundle is that bundle plus `ca` (nothing changes outside it). Undefined
 * where there is no system bundle or no private mount namespace (then the test says so and skips).
 */
export function systemStoreNamespace(ca: PrivateCa): { prefix: string[] } | { skipped: string } {
  const system = '/etc/ssl/certs/ca-certificates.crt';
  try {
    const bundle = path.join(ca.dir, 'system-bundle.crt');
    writeFileSync(bundle, `${readFileSync(system, 'utf8')}\n${ca.caPem}`);
    execFileSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'pipe' });
    return { prefix: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', `mount --bind "${bundle}" ${system} && exec "$@"`, 'sh'] };
  } catch (error) {
    return { skipped: `no system bundle at ${system} or no private mount namespace here (${String(error).split('\n')[0]})` };
  }
}
