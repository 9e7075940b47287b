// Real network parts where corporate users meet them, in the real VS Code: Debian's tinyproxy as
// http.proxy, as HTTPS_PROXY and with Basic authentication (http.proxyAuthorization), carrying a
// generation, a 25 MB edit upload and the account refresh; and the gateway over HTTPS with a
// certificate signed by a CA made in the test, untrusted, trusted with NODE_EXTRA_CA_CERTS, and
// trusted in the system store (a private mount namespace for code-server, where the CA is installed
// with update-ca-certificates as on Debian) with http.systemCertificates. `npm run test:crash`.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { paddedPngParts, paintPng } from '../../tools/emulator/png';
import { type RunningEmulator, startEmulator } from '../../tools/emulator/server';
import { captureOnFailure, openWorkbench, type OpenedWorkbench, prepareTest, waitForNotification } from '../e2e/workbench';
import { makePrivateCa, type PrivateCa, startTlsFront, type TlsFront } from '../support/privateCa';
import { startTinyproxy, type Tinyproxy } from '../support/tinyproxy';

const SETTINGS = { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.editTransport': 'multipart' };
/** A machine may point NODE_EXTRA_CA_CERTS and OpenSSL at its own bundle: the TLS cases set only what they test. */
const NO_CA_VARIABLES = { NODE_EXTRA_CA_CERTS: '', SSL_CERT_FILE: '', SSL_CERT_DIR: '' };

interface CommandResultJson {
  files: string[];
}

/** A PNG of about 25 MB (the gateway's limit for a reference image is 25 MB). */
async function bigReference(dir: string): Promise<string> {
  const file = path.join(dir, 'reference-25mb.png');
  await writeFile(file, Buffer.concat(paddedPngParts(paintPng({ width: 64, height: 64, transparent: false, identity: 'big reference' }), 25_000_000)));
  return file;
}

describe('Proxy in the real VS Code: Debian tinyproxy', function () {
  this.timeout(300_000);
  /** The window of the tests that name their proxy in the settings: one serves both (the settings change under it). */
  let settingsWindow: OpenedWorkbench | undefined;
  let opened: OpenedWorkbench | undefined;
  let proxy: Tinyproxy | undefined;

  afterEach(async function () {
    await captureOnFailure(this, opened);
    if (opened !== settingsWindow) await opened?.close();
    await proxy?.close();
    opened = undefined;
    proxy = undefined;
  });
  after(async () => {
    await settingsWindow?.close();
  });

  const openSettingsWindow = async () => (settingsWindow ??= await openWorkbench({ settings: SETTINGS }));

  /** A generation, a 25 MB multipart edit and the account refresh; each must have gone through the proxy. */
  async function throughProxy(name: string): Promise<void> {
    const o = opened!;
    const paidBefore = o.emulator.state.requests.filter((r) => r.paid).length;
    const started = Date.now();
    const generated = await o.command<CommandResultJson>('gatewayImages.generate', { model: 'aurora-1', prompt: `through ${name}`, size: '64x64' });
    const edited = await o
      .command<CommandResultJson>('gatewayImages.editImage', {
        images: [await bigReference(o.workspace)],
        prompt: `edit through ${name}`,
        model: 'mosaic-edit',
      })
      .catch((error: unknown) => {
        // What each side saw of a connection cut short: the emulator's record and tinyproxy's log.
        const { path: route, status, clientAborted, chargedRub, images } = o.emulator.state.requests.at(-1)!;
        console.log(
          `      ${name}: the edit failed; the emulator's last request: ${JSON.stringify({ route, status, clientAborted, chargedRub, images: images?.length })}`,
        );
        console.log(`      tinyproxy's log:\n        ${proxy!.logTail(15).join('\n        ')}`);
        throw error;
      });
    await o.command('gatewayImages.refreshAccount');
    const seen = proxy!.requests();
    const base = o.emulator.url;
    console.log(
      `      ${name}: ${((Date.now() - started) / 1000).toFixed(1)} s; tinyproxy forwarded ${seen.length} requests: ${[...new Set(seen.map((r) => r.replace(base, '')))].join(', ')}`,
    );
    assert.equal(generated.files.length, 1);
    assert.equal(edited.files.length, 1);
    for (const expected of [`POST ${base}/v1/images/generations`, `POST ${base}/v1/images/edits`, `GET ${base}/v1/gateway/balance`])
      assert.ok(seen.includes(expected), `tinyproxy did not forward ${expected}: ${JSON.stringify(seen)}`);
    const paid = o.emulator.state.requests.filter((r) => r.paid).slice(paidBefore);
    assert.deepEqual(
      paid.map((r) => r.path),
      ['/v1/images/generations', '/v1/images/edits'],
      'each paid request reached the gateway once',
    );
  }

  it('http.proxy: a generation, a 25 MB edit upload and the account refresh go through tinyproxy', async () => {
    proxy = await startTinyproxy();
    opened = await openSettingsWindow();
    await prepareTest(opened, { key: 'unlimited', settings: { ...SETTINGS, 'http.proxy': proxy.url } });
    await throughProxy('http.proxy');
  });

  it('a proxy that requires authentication: with http.proxyAuthorization it works; without it nothing reaches the gateway', async () => {
    proxy = await startTinyproxy({ auth: { user: 'gateway', password: 'images-27' } });
    opened = await openSettingsWindow();
    await prepareTest(opened, { key: 'unlimited', settings: { ...SETTINGS, 'http.proxy': proxy.url, 'http.proxyAuthorization': proxy.authorization } });
    await throughProxy('http.proxy with http.proxyAuthorization');
    // Not through prepareTest: its key check would meet the proxy's 407.
    await opened.settings({ 'http.proxyAuthorization': null });
    await opened.command('notifications.clearAll');
    const paidBefore = opened.emulator.state.requests.filter((r) => r.paid).length;
    const refused = await opened.command('gatewayImages.generate', { model: 'aurora-1', prompt: 'no credentials', size: '64x64' }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    const shown = await waitForNotification(opened, /407 Proxy Authentication Required/);
    console.log(`      without credentials: ${shown.find((t) => /407/.test(t))}`);
    assert.match(refused ?? '', /http\.proxyAuthorization/);
    assert.doesNotMatch(refused ?? '', /may have been charged/);
    assert.equal(opened.emulator.state.requests.filter((r) => r.paid).length, paidBefore, 'nothing reached the gateway');
  });

  it('HTTPS_PROXY in the environment (no http.proxy): the same three go through tinyproxy', async () => {
    proxy = await startTinyproxy();
    opened = await openWorkbench({ settings: SETTINGS, env: { HTTPS_PROXY: proxy.url, HTTP_PROXY: '', NO_PROXY: '' } });
    await prepareTest(opened, { key: 'unlimited', settings: SETTINGS });
    await throughProxy('HTTPS_PROXY');
  });
});

describe('HTTPS with a private CA in the real VS Code', function () {
  this.timeout(300_000);
  let ca: PrivateCa;
  let gateway: RunningEmulator;
  let front: TlsFront;
  let opened: OpenedWorkbench | undefined;

  before(async function () {
    try {
      ca = makePrivateCa();
    } catch (error) {
      console.log(`      skipped: openssl could not make a CA (${String(error)})`);
      this.skip();
    }
    gateway = await startEmulator({ quiet: true });
    front = await startTlsFront(ca, gateway.port);
  });
  afterEach(async function () {
    await captureOnFailure(this, opened);
    await opened?.close();
    opened = undefined;
  });
  after(async () => {
    await front?.close();
    await gateway?.close();
    ca?.remove();
  });

  const paid = () => gateway.state.requests.filter((r) => r.paid).length;
  const withGateway = () => ({ ...SETTINGS, 'gatewayImages.baseUrl': front.url });

  /** The files saved, or the error's message. */
  async function generate(prompt: string): Promise<{ files?: string[]; error?: string }> {
    return opened!
      .command<CommandResultJson>('gatewayImages.generate', { model: 'aurora-1', prompt, size: '64x64' })
      .catch((error: Error) => ({ error: error.message }));
  }

  it('trusted with NODE_EXTRA_CA_CERTS (set before VS Code starts): the key is checked and a generation works', async () => {
    opened = await openWorkbench({ settings: withGateway(), env: { ...NO_CA_VARIABLES, NODE_EXTRA_CA_CERTS: ca.caFile } });
    await prepareTest(opened, { key: 'unlimited', settings: SETTINGS });
    const result = await generate('trusted by NODE_EXTRA_CA_CERTS');
    console.log(`      NODE_EXTRA_CA_CERTS: ${result.error ?? `${result.files?.length} image saved`}`);
    assert.equal(result.error, undefined);
    assert.equal(result.files?.length, 1);
    assert.equal(paid(), 1);
  });

  it('the system store (update-ca-certificates in a private mount namespace): works with http.systemCertificates; untrusted with it off, a clear error and nothing sent', async function () {
    try {
      execFileSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'pipe' });
      execFileSync('which', ['update-ca-certificates'], { stdio: 'pipe' });
    } catch (error) {
      console.log(`      skipped: no private mount namespace or no update-ca-certificates here (${String(error).split('\n')[0]})`);
      return this.skip();
    }
    // In code-server's own mount namespace: a copy of /etc/ssl/certs and of the local CA folder, with the test CA installed as Debian does it.
    const script = [
      'set -e',
      `copy="${ca.dir}/etc-ssl-certs"`,
      'mkdir -p "$copy" && cp -a /etc/ssl/certs/. "$copy"/',
      'mount -t tmpfs tmpfs /etc/ssl/certs && cp -a "$copy"/. /etc/ssl/certs/',
      'mount -t tmpfs tmpfs /usr/local/share/ca-certificates',
      `cp "${ca.caFile}" /usr/local/share/ca-certificates/gateway-images-test-ca.crt`,
      'update-ca-certificates >/dev/null 2>&1',
      'exec "$@"',
    ].join('\n');
    opened = await openWorkbench({
      settings: withGateway(),
      env: NO_CA_VARIABLES,
      wrapCommand: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'sh'],
    });
    await prepareTest(opened, { key: 'unlimited', settings: SETTINGS });
    const before = paid();
    const trusted = await generate('trusted by the system store');
    console.log(`      system store, http.systemCertificates on: ${trusted.error ?? `${trusted.files?.length} image saved`}`);
    assert.equal(trusted.error, undefined);
    assert.equal(trusted.files?.length, 1);
    assert.equal(paid(), before + 1);

    // Not through prepareTest: its key check would go over the connection that is now untrusted.
    await opened.settings({ 'http.systemCertificates': false });
    await opened.command('notifications.clearAll');
    const refused = await generate('untrusted');
    const shown = await waitForNotification(opened, /not trusted/);
    console.log(`      untrusted (http.systemCertificates off): ${refused.error}`);
    assert.match(refused.error ?? '', /not trusted/);
    assert.match(refused.error ?? '', /NODE_EXTRA_CA_CERTS/);
    assert.match(refused.error ?? '', /http\.systemCertificates/);
    assert.ok(shown.some((t) => /not trusted/.test(t)));
    assert.equal(paid(), before + 1, 'nothing was sent');
  });
});
