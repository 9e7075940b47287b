// VS Code's http.proxy inside VS Code: a real forwarding proxy on loopback, started here in the
// extension host, sees the generation; http.noProxy and clearing the setting bypass it.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { type ForwardProxy, startForwardProxy } from '../support/forwardProxy';
import { closeAllEditors, emulator, paidRequests, waitUntil, prepareSuite } from './support';

interface Result {
  files: vscode.Uri[];
}

describe('Proxy (http.proxy in VS Code settings)', function () {
  this.timeout(60_000);
  let proxy: ForwardProxy;
  const http = () => vscode.workspace.getConfiguration('http');

  async function setHttp(name: string, value: unknown): Promise<void> {
    await http().update(name, value, vscode.ConfigurationTarget.Global);
    await waitUntil(() => JSON.stringify(http().get(name)) === JSON.stringify(value ?? http().inspect(name)?.defaultValue), 5_000, `http.${name} applied`);
  }

  before(async () => {
    await prepareSuite();
    proxy = await startForwardProxy();
  });

  after(async () => {
    await setHttp('proxy', undefined);
    await setHttp('noProxy', undefined);
    await proxy?.close();
  });

  afterEach(closeAllEditors);

  it('sends a generation by arguments through http.proxy', async () => {
    await setHttp('proxy', proxy.url);
    const paidBefore = (await paidRequests()).length;
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Through the proxy' });
    assert.strictEqual(result.files.length, 1);
    const posts = proxy.requests.filter((r) => r.method === 'POST');
    assert.deepStrictEqual(
      posts.map((r) => r.url),
      [`${emulator().url}/v1/images/generations`],
      'the proxy did not see the generation',
    );
    assert.strictEqual(proxy.tunnels.length, 0, 'an http:// gateway is forwarded, not tunnelled');
    assert.strictEqual((await paidRequests()).length, paidBefore + 1);
    console.log(`      proxy saw: ${proxy.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`).join(', ')}`);
  });

  it('bypasses the proxy for a host in http.noProxy, and after the setting is cleared', async () => {
    // The generations are what this is about: an account refresh that a settings change starts may
    // rightly go through the proxy in the state between two changes, so only the paid POSTs count.
    const generations = () => proxy.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/images/generations').length;
    await setHttp('proxy', proxy.url);
    await setHttp('noProxy', ['127.0.0.1']);
    const before = generations();
    await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Bypass' });
    assert.strictEqual(generations() - before, 0, 'http.noProxy was not honoured');
    // Cleared proxy first: no state in between sends through the proxy.
    await setHttp('proxy', undefined);
    await setHttp('noProxy', undefined);
    await vscode.commands.executeCommand<Result>('gatewayImages.generate', { model: 'sketch-mini', prompt: 'No proxy' });
    assert.strictEqual(generations() - before, 0, 'the proxy was still used after http.proxy was cleared');
  });
});
