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
    const viewType = (studioTabs()[0].input as vscode.TabInputWebview).viewType;
    assert.ok(viewType.endsWith('gatewayImages.studio'), `viewType ${viewType}`);

    await vscode.commands.executeCommand('workbench.action.files.newUntitledFile');
    await vscode.commands.executeCommand('gatewayImages.openStudio');
    await new Promise((r) => setTimeout(r, 500));
    assert.strictEqual(studioTabs().length, 1, 'a second studio panel was opened');
    await waitUntil(() => studioTabs()[0].isActive);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
