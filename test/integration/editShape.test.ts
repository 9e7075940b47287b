// Edits keep their shape, inside VS Code against the emulator: with no aspect ratio chosen, the
// edit asks for the model's ratio nearest to the source's, and the result has that shape.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { readImageHeaderFile } from '../../src/core/images/imageHeader';
import { paintPng } from '../../tools/emulator/png';
import { closeAllEditors, prepareSuite, workspaceRoot } from './support';

describe('Edits keep the source shape', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    await prepareSuite();
    dir = path.join(workspaceRoot(), 'shape-test');
    fs.mkdirSync(dir, { recursive: true });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(closeAllEditors);

  it('a 4:3 photo edited without an aspect ratio comes back 4:3; an explicit ratio wins', async () => {
    const photo = path.join(dir, 'photo.png');
    fs.writeFileSync(photo, paintPng({ width: 400, height: 300, transparent: false, identity: 'shape' }));
    type Result = { files: vscode.Uri[] };
    const kept = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', { images: [photo], prompt: 'make it night', model: 'mosaic-edit' });
    const header = await readImageHeaderFile(kept.files[0]!.fsPath);
    assert.ok(header, 'the result has a readable header');
    assert.strictEqual(header.width * 3, header.height * 4, `result ${header.width}x${header.height} is not 4:3`);

    const square = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', {
      images: [photo],
      prompt: 'make it night',
      model: 'mosaic-edit',
      aspect_ratio: '1:1',
    });
    const squareHeader = await readImageHeaderFile(square.files[0]!.fsPath);
    assert.strictEqual(squareHeader?.width, squareHeader?.height);
  });
});
