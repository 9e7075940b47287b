// The extension under development is loaded, activates, registers every contributed command and
// contributes every setting with its manifest default. Runs inside VS Code (extension host).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

interface Manifest {
  name: string;
  publisher: string;
  contributes: {
    commands: { command: string; title: string }[];
    configuration: { properties: Record<string, { default?: unknown }> };
  };
}

// out/test/integration -> repository root. Read from disk, not from the extension, so a missing
// extension cannot make the expectations vanish.
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
const EXTENSION_ID = `${manifest.publisher}.${manifest.name}`;

describe('Activation', () => {
  let extension: vscode.Extension<unknown> | undefined;

  before(() => {
    extension = vscode.extensions.getExtension(EXTENSION_ID);
  });

  it(`finds the extension ${EXTENSION_ID} under development`, () => {
    assert.ok(extension, `extension ${EXTENSION_ID} is not loaded`);
    assert.strictEqual(path.resolve(extension.extensionUri.fsPath), REPO_ROOT, 'the loaded extension is not the one from this repository');
  });

  it('activates without throwing', async () => {
    assert.ok(extension, `extension ${EXTENSION_ID} is not loaded`);
    await extension.activate();
    assert.strictEqual(extension.isActive, true);
  });

  it('registers every command contributed in package.json', async () => {
    assert.ok(extension, `extension ${EXTENSION_ID} is not loaded`);
    await extension.activate();
    const registered = new Set(await vscode.commands.getCommands(true));
    const contributed = manifest.contributes.commands.map((c) => c.command);
    assert.ok(contributed.length > 0, 'package.json contributes no commands');
    const missing = contributed.filter((id) => !registered.has(id));
    assert.deepStrictEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });

  it('contributes every setting with its manifest default', () => {
    const properties = Object.entries(manifest.contributes.configuration.properties);
    assert.ok(properties.length > 0, 'package.json contributes no settings');
    const config = vscode.workspace.getConfiguration();
    for (const [key, schema] of properties) {
      const inspected = config.inspect(key);
      assert.ok(inspected, `setting ${key} is unknown to VS Code`);
      assert.deepStrictEqual(inspected.defaultValue, schema.default, `default of ${key}`);
    }
  });
});

describe('Test environment', () => {
  it('points gatewayImages.baseUrl at the gateway emulator', () => {
    const url = process.env.GATEWAY_IMAGES_TEST_EMULATOR_URL;
    assert.ok(url, 'GATEWAY_IMAGES_TEST_EMULATOR_URL is not set in the extension host');
    assert.ok(process.env.GATEWAY_IMAGES_TEST_KEYS, 'GATEWAY_IMAGES_TEST_KEYS is not set in the extension host');
    assert.doesNotThrow(() => JSON.parse(process.env.GATEWAY_IMAGES_TEST_KEYS ?? ''), 'GATEWAY_IMAGES_TEST_KEYS is not JSON');
    assert.strictEqual(vscode.workspace.getConfiguration('gatewayImages').get('baseUrl'), url);
  });

  it('opens a workspace folder', () => {
    assert.ok(vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders.length > 0, 'no workspace folder');
  });
});
