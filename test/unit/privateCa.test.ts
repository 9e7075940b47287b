// HTTPS with a private CA made in the test: the emulator behind a TLS front whose certificate that
// CA signed, as a corporate TLS-inspecting proxy does. Without the CA trusted: a clear error that
// names the certificate problem and the settings that fix it, and nothing sent (or retried). With it
// trusted the way users do it: NODE_EXTRA_CA_CERTS (set before the process starts: a child process
// here), and the system store (a private mount namespace whose system bundle holds the CA, where the
// machine allows one) with http.systemCertificates on. Verification is never turned off.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CertificateError } from '../../src/core/gateway/networkErrors';
import { GatewayClient } from '../../src/core/client/client';
import { createDispatcher } from '../../src/core/gateway/proxy';
import { type ForwardProxy, startForwardProxy } from '../support/forwardProxy';
import { makePrivateCa, type PrivateCa, startTlsFront, systemStoreNamespace, type TlsFront } from '../support/privateCa';
import { caught, DEMO_KEYS, MemorySink, paidRequests, type RunningEmulator, SMALL, startEmulator } from './support/gateway';

/** Runs a balance read and a generation in a new Node process (NODE_EXTRA_CA_CERTS is read at start-up). */
const CHILD = `
const { GatewayClient } = require(${JSON.stringify(path.join(__dirname, '../../src/core/client/client.js'))});
const { createDispatcher } = require(${JSON.stringify(path.join(__dirname, '../../src/core/gateway/proxy.js'))});
const [url, key, system] = process.argv.slice(2);
const sink = { open: async () => ({ write: async () => {}, close: async () => {}, abort: async () => {} }) };
const client = new GatewayClient({ baseUrl: url, getApiKey: () => key, maxRetries: 0,
  dispatcher: createDispatcher({ timeoutMs: 15000, env: {}, systemCertificates: system === 'true' }), closeDispatcher: true });
(async () => {
  try {
    await client.balance();
    const meta = await client.generate({ model: 'aurora-1', prompt: 'private ca', size: '64x64' }, sink);
    console.log(JSON.stringify({ ok: true, images: meta.images.length }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, kind: error.kind, message: error.message }));
  } finally { await client.close(); }
})();
`;

describe('HTTPS with a private CA (a TLS-inspecting proxy, a private gateway)', function () {
  this.timeout(30_000);
  let ca: PrivateCa;
  let emu: RunningEmulator;
  let front: TlsFront;
  let proxy: ForwardProxy;
  let script: string;

  before(async function () {
    try {
      ca = makePrivateCa();
    } catch (error) {
      console.log(`      skipped: openssl could not make a CA here (${String(error)})`);
      this.skip();
    }
    emu = await startEmulator();
    front = await startTlsFront(ca, emu.port);
    proxy = await startForwardProxy();
    script = path.join(ca.dir, 'child.js');
    writeFileSync(script, CHILD);
  });
  beforeEach(() => {
    emu?.state.reset();
    proxy?.reset();
  });
  after(async () => {
    await Promise.all([front?.close(), proxy?.close(), emu?.close()]);
    ca?.remove();
  });

  const client = (settings: { proxy?: string; systemCertificates?: boolean } = {}) =>
    new GatewayClient({
      baseUrl: front.url,
      getApiKey: () => DEMO_KEYS.unlimited,
      dispatcher: createDispatcher({ timeoutMs: 15_000, env: {}, ...settings }),
      closeDispatcher: true,
    });

  /** Runs the child (asynchronously: the emulator and the TLS front live in this process). */
  function child(env: Record<string, string>, system: boolean, wrap?: string[]): Promise<{ ok: boolean; kind?: string; message?: string }> {
    const command = wrap ? wrap[0]! : process.execPath;
    // process.execArgv: the child loads undici mended, as this process does (.mocharc.unit.json's preload).
    const node = [...process.execArgv, script, front.url, DEMO_KEYS.unlimited, String(system)];
    const args = wrap ? [...wrap.slice(1), process.execPath, ...node] : node;
    // Only what the case sets: a machine may set NODE_EXTRA_CA_CERTS (or OpenSSL's variables) to its own bundle.
    const { NODE_EXTRA_CA_CERTS: _extra, SSL_CERT_FILE: _file, SSL_CERT_DIR: _dir, ...machine } = process.env;
    const run = spawn(command, args, { env: { ...machine, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return new Promise((resolve, reject) => {
      run.on('close', () => {
        try {
          resolve(JSON.parse(output.trim().split('\n').pop() ?? '') as { ok: boolean; kind?: string; message?: string });
        } catch {
          reject(new Error(`the child printed no result: ${output}`));
        }
      });
    });
  }

  it('untrusted: a clear error that names the certificate problem and the settings that fix it; nothing sent, nothing retried', async () => {
    const direct = client({ systemCertificates: true });
    const before = front.handshakes();
    const paid = await caught(() => direct.generate({ model: 'aurora-1', prompt: 'untrusted', size: SMALL }, new MemorySink()));
    const free = await caught(() => direct.balance());
    await direct.close();
    for (const error of [paid, free]) {
      assert.ok(error instanceof CertificateError, String(error));
      assert.equal(error.kind, 'connection');
      assert.equal(error.outcomeUnknown, false, 'the handshake failed before any byte of the request: not charged');
      assert.match(error.message, /not trusted/);
      assert.match(error.message, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
      assert.match(error.message, /NODE_EXTRA_CA_CERTS/);
      assert.match(error.message, /http\.systemCertificates/);
    }
    assert.equal(front.handshakes() - before, 2, 'one handshake each: the free read is not retried on a certificate failure');
    assert.equal(paidRequests(emu).length, 0, 'nothing reached the gateway');
    // Through a proxy (CONNECT tunnel), the same.
    const proxied = client({ proxy: proxy.url });
    const viaProxy = await caught(() => proxied.generate({ model: 'aurora-1', prompt: 'untrusted via proxy', size: SMALL }, new MemorySink()));
    await proxied.close();
    assert.ok(viaProxy instanceof CertificateError, String(viaProxy));
    assert.equal(proxy.tunnels.length, 1);
    assert.equal(paidRequests(emu).length, 0);
    assert.notEqual(process.env.NODE_TLS_REJECT_UNAUTHORIZED, '0', 'verification was not turned off');
    console.log(`      untrusted: ${paid.message}`);
  });

  it('trusted with NODE_EXTRA_CA_CERTS (set before VS Code starts): balance and generation work, with or without http.systemCertificates', async () => {
    assert.deepEqual(await child({ NODE_EXTRA_CA_CERTS: ca.caFile }, true), { ok: true, images: 1 });
    assert.deepEqual(await child({ NODE_EXTRA_CA_CERTS: ca.caFile }, false), { ok: true, images: 1 });
    const without = await child({}, true);
    assert.equal(without.ok, false);
    assert.match(without.message ?? '', /not trusted/);
    assert.equal(paidRequests(emu).length, 2);
  });

  it('trusted in the system store (its bundle, in a private mount namespace): works with http.systemCertificates on, not with it off', async function () {
    const namespace = systemStoreNamespace(ca);
    if ('skipped' in namespace) {
      console.log(`      skipped: ${namespace.skipped}`);
      return this.skip();
    }
    const inNamespace = namespace.prefix;
    assert.deepEqual(await child({}, true, inNamespace), { ok: true, images: 1 });
    const off = await child({}, false, inNamespace);
    console.log(
      `      system store: trusted with http.systemCertificates on; with it off (${process.version}): ${off.ok ? 'trusted' : off.message?.slice(0, 70)}…`,
    );
    assert.equal(off.ok, false, 'with http.systemCertificates off the system store is not used');
    assert.equal(paidRequests(emu).length, 1);
  });
});
