// Region edits by mask (issue 41) inside VS Code against the emulator: gatewayImages.editImage with
// `mask` by arguments sends only the crop, once; the result is a new file next to the untouched
// original whose every pixel outside the region is the original's, with the mask beside it; bad
// masks are refused with the field named before any request.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { decodeImage } from '../../src/core/images/codecs';
import { boxMask, gradient, rgbaPng } from '../unit/support/maskImages';
import { closeAllEditors, paidRequests, prepareSuite, rejectionOf, workspaceRoot } from './support';

describe('Region edit by mask (editImage command)', function () {
  this.timeout(60_000);
  let dir: string;
  const W = 320;
  const H = 240;
  const BOX = { x: 200, y: 40, width: 40, height: 30 };
  type Result = { files: vscode.Uri[]; model: string; usage?: { cost_rub?: number; balance?: number } };

  before(async () => {
    await prepareSuite();
    dir = path.join(workspaceRoot(), 'region-test');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'photo.png'), rgbaPng(gradient(W, H)));
    fs.writeFileSync(path.join(dir, 'door.png'), rgbaPng(boxMask(W, H, BOX)));
    fs.writeFileSync(path.join(dir, 'small.png'), rgbaPng(boxMask(W / 2, H / 2, BOX)));
    fs.writeFileSync(path.join(dir, 'empty.png'), rgbaPng(boxMask(W, H, undefined)));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(closeAllEditors);

  it('sends the crop once and saves photo.region-1.png with the outside pixels exact and the mask beside it', async () => {
    const photo = path.join(dir, 'photo.png');
    const original = fs.readFileSync(photo);
    const before = (await paidRequests()).length;
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', {
      images: [photo],
      prompt: 'a red door',
      model: 'mosaic-edit',
      mask: 'region-test/door.png',
      feather: 0,
    });
    assert.strictEqual((await paidRequests()).length, before + 1, 'exactly one paid request');
    assert.deepStrictEqual(
      result.files.map((f) => path.basename(f.fsPath)),
      ['photo.region-1.png'],
    );
    assert.strictEqual(typeof result.usage?.cost_rub, 'number');
    assert.ok(fs.existsSync(path.join(dir, 'photo.region-1.mask.png')), 'the mask is saved beside the result');
    assert.ok(fs.readFileSync(photo).equals(original), 'the original is untouched');
    const edited = await decodeImage(fs.readFileSync(result.files[0]!.fsPath));
    const source = gradient(W, H);
    assert.strictEqual(edited.width, W);
    assert.strictEqual(edited.height, H);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const inside = x >= BOX.x && x < BOX.x + BOX.width && y >= BOX.y && y < BOX.y + BOX.height;
        if (inside) continue;
        const p = (y * W + x) * 4;
        assert.ok(
          [0, 1, 2, 3].every((i) => edited.data[p + i] === source.data[p + i]),
          `pixel ${x},${y} outside the region changed`,
        );
      }
  });

  it('format "jpeg": a .jpg of the original size, the mask beside it a PNG; refused without a mask, naming "format"', async () => {
    const photo = path.join(dir, 'photo.png');
    const before = (await paidRequests()).length;
    const result = await vscode.commands.executeCommand<Result>('gatewayImages.editImage', {
      images: [photo],
      prompt: 'a red door',
      model: 'mosaic-edit',
      mask: 'region-test/door.png',
      format: 'jpeg',
    });
    assert.strictEqual((await paidRequests()).length, before + 1, 'exactly one paid request');
    const file = result.files[0]!.fsPath;
    // The earlier test's photo.region-1.png holds the name: the store adds -2 (photo.region-1-2.jpg).
    assert.match(path.basename(file), /^photo\.region-\d+(-\d+)?\.jpg$/);
    const bytes = fs.readFileSync(file);
    assert.deepStrictEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    const decoded = await decodeImage(bytes);
    assert.deepStrictEqual([decoded.width, decoded.height], [W, H]);
    const mask = file.replace(/\.jpg$/, '.mask.png');
    assert.deepStrictEqual([...fs.readFileSync(mask).subarray(1, 4)], [0x50, 0x4e, 0x47], 'the mask beside is a PNG');

    const error = await rejectionOf(
      vscode.commands.executeCommand('gatewayImages.editImage', { images: [photo], prompt: 'x', model: 'mosaic-edit', format: 'jpeg' }),
    );
    assert.strictEqual(error.field, 'format');
    assert.match(error.message, /give "mask" too/);
    assert.strictEqual((await paidRequests()).length, before + 1);
  });

  for (const [what, mask, message] of [
    ['of another size', 'region-test/small.png', /same size as the image, 320×240/],
    ['that is empty', 'region-test/empty.png', /marks nothing/],
    ['outside the workspace', '../region-outside.png', /leads outside the workspace folder/],
    ['that is not a PNG', 'region-test/notes.png', /is not a PNG|Cannot read "mask"/],
  ] as const) {
    it(`refuses a mask ${what}, naming "mask", before any request`, async () => {
      fs.writeFileSync(path.join(dir, 'notes.png'), 'not an image');
      const before = (await paidRequests()).length;
      const error = await rejectionOf(
        vscode.commands.executeCommand('gatewayImages.editImage', { images: [path.join(dir, 'photo.png')], prompt: 'x', model: 'mosaic-edit', mask }),
      );
      assert.strictEqual(error.field, 'mask');
      assert.match(error.message, message);
      assert.strictEqual((await paidRequests()).length, before);
    });
  }
});
