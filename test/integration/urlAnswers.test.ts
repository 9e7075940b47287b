// Images a gateway gives as addresses (data[i].url, the previous API version), inside VS Code: the
// images are downloaded and saved; one whose download failed is named in the warning with its
// address, "Recover Images" runs Recover Unsaved Images, which downloads it again through the
// extension's own client (the key to the gateway's origin) and moves it, byte-equal.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { WaitingJob } from '../../src/core/files/recoveryFolder';
import { admin, emulator, emulatorImages, prepareSuite, waitUntil, workspaceRoot } from './support';

interface Download {
  path: string;
  origin: string;
  authorization: boolean;
  status: number;
}

/** Answers the UI as a person would: "Recover Images" on the warning, the job with an address in Recover's pick, then `choice`. */
function scriptUi(choice: string): { shown: string[]; restore: () => void } {
  const window = vscode.window as unknown as Record<string, unknown>;
  const names = ['showQuickPick', 'showInformationMessage', 'showWarningMessage', 'showErrorMessage'];
  const saved = names.map((name) => [name, window[name]] as const);
  const shown: string[] = [];
  const notification = (text: string, ...items: unknown[]) => {
    const actions = items.filter((i): i is string => typeof i === 'string');
    shown.push(`${text} [${actions.join(' | ')}]`);
    if (actions.includes('Recover Images')) return 'Recover Images';
    return /^Where should/.test(text) ? choice : undefined;
  };
  window.showInformationMessage = async (text: string, ...items: unknown[]) => notification(text, ...items);
  window.showWarningMessage = async (text: string, ...items: unknown[]) => notification(text, ...items);
  window.showErrorMessage = async (text: string, ...items: unknown[]) => notification(text, ...items);
  window.showQuickPick = async (items: Thenable<unknown[]> | unknown[]) => {
    const list = (await items) as { job: WaitingJob }[];
    return list.find((item) => item.job.files.some((f) => f.kind === 'url'));
  };
  return { shown, restore: () => saved.forEach(([name, original]) => (window[name] = original)) };
}

const outputFolder = () => path.join(workspaceRoot(), 'generated-images');
const outputFiles = () => (fs.existsSync(outputFolder()) ? fs.readdirSync(outputFolder()) : []);

describe('URL answers: images given as addresses', function () {
  this.timeout(60_000);

  before(async () => {
    await prepareSuite();
    const config = vscode.workspace.getConfiguration('gatewayImages');
    await config.update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
    // Saved PNGs carry their request in a chunk by default: off, so that files compare with what the emulator sent.
    await config.update('embedProvenance', false, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('embedProvenance', undefined, vscode.ConfigurationTarget.Global);
    await admin('DELETE', 'faults');
    await admin('POST', 'forms', { forms: [] });
  });

  it('image 1 of 2 could not be downloaded: image 2 is saved, the warning names the address, Recover downloads it again and moves it byte-equal', async () => {
    const request = { model: 'aurora-1', prompt: `Given as addresses ${Date.now()}`, n: 2, seed: 77, size: '64x64' };
    const expected = await emulatorImages(emulator().keys.unlimited, request);
    await admin('POST', 'reset');
    await admin('POST', 'forms', { forms: ['url-images'] });
    await admin('POST', 'faults', { fault: 'download-404' });
    const folder = `url-answers-${Date.now()}`;
    const before = new Set(outputFiles());
    const ui = scriptUi('Move into Workspace');
    try {
      const result = await vscode.commands.executeCommand<{ files: vscode.Uri[] }>('gatewayImages.generate', { ...request, outputDirectory: folder });
      assert.strictEqual(result.files.length, 1);
      assert.ok(fs.readFileSync(result.files[0]!.fsPath).equals(expected[1]!), 'image 2 byte-equal');
      const { requests } = await admin<{ requests: { id: string; paid: boolean }[] }>('GET', 'requests');
      const paid = requests.filter((r) => r.paid);
      assert.strictEqual(paid.length, 1, 'paid once');
      const id = paid[0]!.id;
      const address = `${emulator().url}/files/${id}/0.png`;
      await waitUntil(() => ui.shown.some((s) => s.includes(address)), 10_000, 'the warning with the address');
      const warning = ui.shown.find((s) => s.includes(address))!;
      assert.match(
        warning,
        /^1 paid image could not be saved into the workspace \(.*image 1 at .*: the address answered 404.*Recover Unsaved Images downloads it again.*\[Recover Images\]$/,
      );
      await waitUntil(() => ui.shown.some((s) => /^Moved 1 image to /.test(s)), 15_000, 'the image moved into the workspace');
      assert.ok(
        ui.shown.some((s) => /^Where should the 1 image go\?.*1 image was downloaded from its address\./.test(s)),
        ui.shown.join('\n'),
      );
      const added = outputFiles().filter((f) => !before.has(f));
      assert.strictEqual(added.length, 1, added.join(', '));
      assert.ok(fs.readFileSync(path.join(outputFolder(), added[0]!)).equals(expected[0]!), 'image 1 byte-equal, downloaded by Recover');
      const { downloads } = await admin<{ downloads: Download[] }>('GET', 'downloads');
      assert.deepStrictEqual(
        downloads.map((d) => `${d.path} ${d.origin} key:${d.authorization} ${d.status}`),
        [`/files/${id}/0.png gateway key:true 404`, `/files/${id}/1.png gateway key:true 200`, `/files/${id}/0.png gateway key:true 200`],
      );
      fs.rmSync(path.join(outputFolder(), added[0]!));
    } finally {
      ui.restore();
      fs.rmSync(path.join(workspaceRoot(), folder), { recursive: true, force: true });
    }
  });
});
