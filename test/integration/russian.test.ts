// VS Code in Russian (runIntegration --locale ru, a language pack built by the harness): the
// display language is ru, and our l10n/bundle.l10n.ru.json and package.nls.ru.json are the ones
// in use. Runs only in that run (GATEWAY_IMAGES_TEST_LOCALE=ru); `npm test` makes it.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { EXTENSION_ID, prepareSuite, rejectionOf } from './support';

type Title = string | { value: string; original: string };

describe('Russian display language', function () {
  this.timeout(60_000);
  let root: string;

  before(async function () {
    if (process.env.GATEWAY_IMAGES_TEST_LOCALE !== 'ru') this.skip();
    root = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    await prepareSuite();
  });

  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as Record<string, string>;

  it('VS Code runs in Russian', () => {
    assert.strictEqual(vscode.env.language, 'ru');
  });

  it('vscode.l10n uses l10n/bundle.l10n.ru.json', () => {
    const ru = read('l10n/bundle.l10n.ru.json');
    assert.ok(vscode.l10n.uri?.path.endsWith('/l10n/bundle.l10n.ru.json'), String(vscode.l10n.uri));
    assert.deepStrictEqual(vscode.l10n.bundle, ru);
    assert.strictEqual(vscode.l10n.t('Model'), ru['Model']);
    assert.notStrictEqual(vscode.l10n.t('Model'), 'Model');
  });

  it('the manifest strings come from package.nls.ru.json', () => {
    const nls = read('package.nls.ru.json');
    const raw = read('package.json') as unknown as { contributes: { commands: { command: string; title: string }[] } };
    const loaded = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: { command: string; title: Title }[] } };
    for (const { command, title } of raw.contributes.commands) {
      const key = /^%(.+)%$/.exec(title)![1];
      const shown = loaded.contributes.commands.find((c) => c.command === command)!.title;
      assert.strictEqual(typeof shown === 'string' ? shown : shown.value, nls[key!], command);
    }
  });

  it('errors from the pure core are in Russian', async () => {
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'x', n: 99 }));
    assert.strictEqual(error.kind, 'validation');
    assert.match(error.message, /[а-яё]{4}/i, error.message);
  });
});
