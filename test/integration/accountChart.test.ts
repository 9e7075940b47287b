// Account and Usage inside VS Code: the runway at the 30-day pace and the local spend chart
// (SVG bars from this workspace's job history) with what it counts.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { api, closeAllEditors, prepareSuite } from './support';

describe('Account view: runway and spend chart', function () {
  this.timeout(60_000);

  before(() => prepareSuite());
  afterEach(closeAllEditors);

  it('shows days left and a bar for today after a paid job', async () => {
    await vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'a small boat', size: '64x64' });
    await (await api()).refreshAccount();
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse('gateway-images:/Account.md'));
    const text = doc.getText();
    assert.match(text, /Runway at the 30-day pace \| Balance lasts ≈ [\d.,\s]+ days at/);
    assert.match(text, /<svg [^>]*role="img"/);
    assert.match(text, /<rect [^>]*style="fill:var\(--vscode-charts-blue/);
    assert.match(text, /Spend on this machine, last 30 days/);
    assert.match(text, /only the jobs recorded by this machine in this workspace/);
  });
});
