// Image Studio: the command opens one panel and reveals it when run again. Runs inside VS Code.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { studioTabs, waitUntil } from './support';

describe('Image Studio', () => {
  after(async () => {
    for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
  });

  it('opens exactly one panel, and running the command again does not open a second', async () => {
    assert.strictEqual(studioTabs().length, 0, 'a studio tab is open before the test');
    await vscode.commands.executeCommand('gatewayImages.openStudio');
    await waitUntil(() => studioTabs().length > 0);
    assert.strictEqual(studioTabs().length, 1);
    const viewType = (studioTabs()[0]!.input as vscode.TabInputWebview).viewType;
    assert.ok(viewType.endsWith('gatewayImages.studio'), `viewType ${viewType}`);

    await vscode.commands.executeCommand('workbench.action.files.newUntitledFile');
    await vscode.commands.executeCommand('gatewayImages.openStudio');
    // Revealed or opened anew: either way a studio tab becomes the active one; then count.
    await waitUntil(() => studioTabs().some((tab) => tab.isActive), 10_000, 'a studio tab active again');
    assert.strictEqual(studioTabs().length, 1, 'a second studio panel was opened');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
