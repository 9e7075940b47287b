// The studio's webview may load files from exactly the folders whose images it shows: the
// workspace folders, the gallery's thumbnail cache, and the folders outside the workspace that hold
// a result of the comparison on show (an absolute output folder from the arguments or user
// settings, the recovery folder of images that could not be placed). Inside VS Code, reading the
// options the extension gave the panel.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, captureUi, isInsideFolder, prepareSuite, studioTabs, waitUntil } from './support';

describe('Image Studio resource roots', function () {
  this.timeout(60_000);
  let outside: string;

  before(async () => {
    await prepareSuite();
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-shown-')));
  });

  after(async () => {
    for (const tab of studioTabs()) await vscode.window.tabGroups.close(tab);
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('adds exactly the folders outside the workspace whose files it shows: an absolute output folder, the recovery folder of a compared model', async () => {
    const ui = captureUi();
    try {
      await vscode.commands.executeCommand('gatewayImages.openStudio');
      await waitUntil(() => ui.panels.length > 0, 10_000, 'the studio panel');
      const panel = ui.panels[0]!;
      const roots = () => (panel.webview.options.localResourceRoots ?? []).map((uri) => uri.fsPath);
      const gateway = await api();
      const models = ['aurora-1', 'sketch-mini'];

      const placedFolder = path.join(outside, 'placed');
      const placed = await gateway.compareModels({ prompt: 'Shown from outside', models, size: '64x64', outputDirectory: placedFolder });
      assert.ok(placed.files.every((file) => path.dirname(file.fsPath) === placedFolder));
      await waitUntil(() => roots().includes(placedFolder), 10_000, `the webview may load ${placedFolder}`);
      // A folder that cannot be made (under a file): the paid images wait in the recovery folder, and the grid shows them there.
      fs.writeFileSync(path.join(outside, 'a-file'), 'not a folder');
      const recovered = await gateway.compareModels({
        prompt: 'Shown from recovery',
        models,
        size: '64x64',
        outputDirectory: path.join(outside, 'a-file', 'sub'),
      });
      const recoveryFolders = [...new Set(recovered.files.map((file) => path.dirname(file.fsPath)))];
      assert.ok(recoveryFolders.length > 0 && recoveryFolders.every((folder) => !isInsideFolder(outside, folder)), recoveryFolders.join(', '));

      // The grid now shows the second comparison: its folders, and no longer the first one's (the
      // gallery shows thumbnails from their cache, not the files).
      const shown = recoveryFolders;
      await waitUntil(
        () => shown.every((folder) => roots().includes(folder)) && !roots().includes(placedFolder),
        10_000,
        `the webview may load ${shown.join(', ')} only`,
      );
      // Exactly those folders: not their parents (the recovery folder as a whole, the temp folder, the home folder).
      for (const root of roots()) {
        for (const folder of shown) assert.ok(root === folder || !isInsideFolder(root, folder), `${root} holds ${folder} and more`);
      }
    } finally {
      ui.restore();
    }
  });
});
