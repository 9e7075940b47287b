// Editing workspace images (one or several references) by both transports, and every refusal
// before upload. Inside VS Code against the emulator.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, closeAllEditors, paidRequests, rejectionOf, workspaceRoot, prepareSuite } from './support';

interface Result {
  files: vscode.Uri[];
  model: string;
  usage: { cost_rub: number; balance: number };
}

const TRANSPORTS = ['input_references', 'multipart'] as const;

describe('Edit Image (arguments, both transports)', function () {
  this.timeout(60_000);
  let sample: string;
  let second: string;
  let originalBytes: Buffer;

  before(async () => {
    await prepareSuite();
    sample = path.join(workspaceRoot(), 'images', 'sample.png');
    second = path.join(workspaceRoot(), 'images', 'second.png');
    fs.copyFileSync(sample, second);
    originalBytes = fs.readFileSync(sample);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('editTransport', undefined, vscode.ConfigurationTarget.Global);
  });

  afterEach(closeAllEditors);

  for (const transport of TRANSPORTS) {
    describe(`through ${transport}`, () => {
      before(() => vscode.workspace.getConfiguration('gatewayImages').update('editTransport', transport, vscode.ConfigurationTarget.Global));

      it('edits one image: result saved next to it, original untouched', async () => {
        const before = await paidRequests();
        const result = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', {
          images: [vscode.Uri.file(sample)],
          model: 'aurora-1',
          prompt: 'Make it blue',
        });
        assert.strictEqual(result.files.length, 1);
        const saved = result.files[0]!.fsPath;
        assert.strictEqual(path.dirname(saved), path.dirname(sample));
        assert.match(path.basename(saved), /^sample\.edit-1(-\d+)?\.png$/);
        assert.ok(
          fs
            .readFileSync(saved)
            .subarray(0, 8)
            .equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
        );
        assert.ok(fs.readFileSync(sample).equals(originalBytes), 'the original was modified');
        const sent = (await paidRequests()).slice(before.length);
        assert.strictEqual(sent.length, 1, 'exactly one paid request');
        assert.strictEqual(sent[0]!.path, transport === 'multipart' ? '/v1/images/edits' : '/v1/images/generations');
      });

      it('edits with several references', async () => {
        const result = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', {
          images: [sample, second],
          model: 'mosaic-edit',
          prompt: 'Combine them',
        });
        assert.strictEqual(result.files.length, 1);
        assert.ok(fs.existsSync(result.files[0]!.fsPath));
      });
    });
  }

  it('refuses too many references, naming the limit and the model, before sending', async () => {
    const before = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.editImage', { images: [sample, second], model: 'aurora-1', prompt: 'x' }));
    assert.strictEqual(error.kind, 'validation');
    assert.match(error.message, /aurora-1 accepts at most 1 reference image; got 2/);
    assert.strictEqual((await paidRequests()).length, before);
  });

  it('refuses a model without editing before sending', async () => {
    const before = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.editImage', { images: [sample], model: 'sketch-mini', prompt: 'x' }));
    // The gateway's kind for the same cause: one kind per cause, local or not.
    assert.strictEqual(error.kind, 'edit-not-supported');
    assert.strictEqual(error.field, 'input_references');
    assert.match(error.message, /sketch-mini does not support editing/);
    assert.strictEqual((await paidRequests()).length, before);
  });

  it('refuses a file over 25 MB with its size and the limit', async () => {
    const big = path.join(workspaceRoot(), 'images', 'big.png');
    const handle = fs.openSync(big, 'w');
    fs.writeSync(handle, fs.readFileSync(sample));
    fs.ftruncateSync(handle, 26 * 1024 * 1024);
    fs.closeSync(handle);
    const before = await admin<{ totalReservations: number }>('GET', 'requests');
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.editImage', { images: [big], model: 'aurora-1', prompt: 'x' }));
    assert.strictEqual(error.kind, 'validation');
    assert.match(error.message, /26\.0 MB; the gateway accepts reference images of at most 25 MB/);
    const after = await admin<{ totalReservations: number }>('GET', 'requests');
    assert.strictEqual(after.totalReservations, before.totalReservations);
  });

  it('refuses a renamed non-image by its bytes', async () => {
    const fake = path.join(workspaceRoot(), 'images', 'notes.png');
    fs.writeFileSync(fake, 'just some text, not an image\n');
    const before = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.editImage', { images: [fake], model: 'aurora-1', prompt: 'x' }));
    assert.strictEqual(error.kind, 'validation');
    assert.match(error.message, /not a PNG, JPEG or WebP image/);
    assert.strictEqual((await paidRequests()).length, before);
  });

  it('refuses a file that cannot be read', async () => {
    const error = await rejectionOf(
      vscode.commands.executeCommand('gatewayImages.editImage', {
        images: [path.join(workspaceRoot(), 'images', 'missing.png')],
        model: 'aurora-1',
        prompt: 'x',
      }),
    );
    assert.strictEqual(error.kind, 'validation');
    assert.match(error.message, /Cannot read "missing\.png"/);
  });
});
