// The mask of a region edit (issue 41) is checked before any money moves: its arguments, its path
// (confined to the workspace like every input), its bytes (a PNG), its size and that it marks
// something. Every refusal names the field.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import { readMask, regionArgsOf, resolveMaskPath } from '../../src/core/files/maskInput';
import { caught, removeDir, tempDir, TINY_PNG } from './support/gateway';
import { boxMask, rgbaPng } from './support/maskImages';

describe('region edit mask input', () => {
  let root: string;
  let outside: string;

  beforeEach(async () => {
    root = await fs.realpath(await tempDir('gwi-mask-'));
    outside = await fs.realpath(await tempDir('gwi-mask-outside-'));
  });

  afterEach(async () => {
    await removeDir(root);
    await removeDir(outside);
  });

  const refusal = async (fn: () => Promise<unknown>, field: string, pattern: RegExp) => {
    const error = await caught<ValidationError>(fn);
    assert.ok(error instanceof ValidationError, String(error));
    assert.equal(error.field, field);
    assert.match(error.message, pattern);
    return error;
  };

  describe('arguments', () => {
    it('picks mask, feather and wholeImage', () => {
      assert.deepEqual(regionArgsOf({ mask: ' masks/sky.png ', feather: 0 }), { mask: 'masks/sky.png', feather: 0 });
      assert.deepEqual(regionArgsOf({ wholeImage: true }), { wholeImage: true });
      assert.deepEqual(regionArgsOf({ mask: 'm.png', format: 'jpeg' }), { mask: 'm.png', format: 'jpeg' });
      assert.deepEqual(regionArgsOf({ mask: 'm.png', format: 'png' }), { mask: 'm.png', format: 'png' });
      assert.deepEqual(regionArgsOf({ prompt: 'x' }), {});
    });

    it('refuses a mask that is not a path, naming "mask"', async () => {
      await refusal(async () => regionArgsOf({ mask: 3 }), 'mask', /PNG in the workspace/);
      await refusal(async () => regionArgsOf({ mask: '  ' }), 'mask', /PNG in the workspace/);
    });

    it('refuses a feather out of range or without a mask, and mask with wholeImage', async () => {
      await refusal(async () => regionArgsOf({ mask: 'm.png', feather: -1 }), 'feather', /0 to 256/);
      await refusal(async () => regionArgsOf({ mask: 'm.png', feather: 2.5 }), 'feather', /whole number/);
      await refusal(async () => regionArgsOf({ feather: 4 }), 'feather', /give "mask" too/);
      await refusal(async () => regionArgsOf({ format: 'jpeg' }), 'format', /"format" applies only to a region edit: give "mask" too/);
      await refusal(async () => regionArgsOf({ mask: 'm.png', format: 'webp' }), 'format', /"png" \(the default\) or "jpeg"/);
      await refusal(async () => regionArgsOf({ mask: 'm.png', format: 'JPG' }), 'format', /"png" \(the default\) or "jpeg"/);
      await refusal(async () => regionArgsOf({ mask: 'm.png', wholeImage: true }), 'mask', /not both/);
      await refusal(async () => regionArgsOf({ wholeImage: 'yes' }), 'wholeImage', /true or false/);
    });
  });

  describe('confinement', () => {
    it('takes a relative path, an absolute one and a file URI inside the workspace', async () => {
      const file = path.join(root, 'masks', 'sky.png');
      assert.equal(await resolveMaskPath('masks/sky.png', [root]), file);
      assert.equal(await resolveMaskPath(file, [root]), file);
      assert.equal(await resolveMaskPath(`file://${file}`, [root]), file);
    });

    it('refuses a path outside the workspace', async () => {
      await refusal(() => resolveMaskPath('../elsewhere/mask.png', [root]), 'mask', /leads outside the workspace folder;/);
      await refusal(() => resolveMaskPath(path.join(outside, 'mask.png'), [root]), 'mask', /leads outside/);
    });

    it('refuses a symbolic link that leads outside', async () => {
      await fs.writeFile(path.join(outside, 'mask.png'), rgbaPng(boxMask(4, 4, { x: 0, y: 0, width: 2, height: 2 })));
      await fs.symlink(path.join(outside, 'mask.png'), path.join(root, 'mask.png'));
      await refusal(() => resolveMaskPath('mask.png', [root]), 'mask', /through a symbolic link/);
    });

    it('refuses without a workspace folder', async () => {
      await refusal(() => resolveMaskPath('mask.png', []), 'mask', /Open a workspace folder/);
    });
  });

  describe('the file', () => {
    const write = async (name: string, bytes: Buffer) => {
      const file = path.join(root, name);
      await fs.writeFile(file, bytes);
      return file;
    };

    it('refuses a file that is not a PNG by its bytes, whatever its name', async () => {
      const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
      const error = await refusal(async () => readMask(await write('mask.png', jpeg), { width: 4, height: 4 }), 'mask', /is not a PNG/);
      assert.deepEqual(error.allowed, ['png']);
      await refusal(async () => readMask(await write('text.png', Buffer.from('not an image')), { width: 4, height: 4 }), 'mask', /is not a PNG/);
    });

    it('refuses a missing file', async () => {
      await refusal(() => readMask(path.join(root, 'none.png'), { width: 4, height: 4 }), 'mask', /Cannot read "mask"/);
    });

    // These use the decoder (core/images/codecs.ts).
    it('refuses a mask of another size than the image, naming both sizes', async () => {
      const file = await write('small.png', TINY_PNG);
      await refusal(() => readMask(file, { width: 64, height: 48 }), 'mask', /is 1×1; it must be the same size as the image, 64×48/);
    });

    it('refuses an empty mask: all black, or all transparent', async () => {
      const black = await write('black.png', rgbaPng(boxMask(16, 12, undefined)));
      await refusal(() => readMask(black, { width: 16, height: 12 }), 'mask', /marks nothing/);
      const clear = await write('clear.png', rgbaPng(boxMask(16, 12, undefined, 'alpha')));
      await refusal(() => readMask(clear, { width: 16, height: 12 }), 'mask', /marks nothing/);
    });

    it('reads white on black and opaque on transparent as the same region', async () => {
      const box = { x: 3, y: 2, width: 5, height: 4 };
      for (const mode of ['black-white', 'alpha'] as const) {
        const mask = await readMask(await write(`${mode}.png`, rgbaPng(boxMask(16, 12, box, mode))), { width: 16, height: 12 });
        assert.deepEqual(mask.box, box, mode);
        assert.equal(mask.alpha[2 * 16 + 3], 255);
        assert.equal(mask.alpha[0], 0);
      }
    });
  });
});
