// Recover's second reading of a kept answer (answerSalvage.ts): images under any name, after a stray
// prefix, with stray characters, in the URL-safe alphabet, cut short, or the answer an image itself.
import * as assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { salvageAnswer } from '../../src/core/answers/answerSalvage';
import { IMAGE_MODELS } from '../../tools/emulator/catalog';
import { renderImage } from '../../tools/emulator/render';
import { removeDir, tempDir, TINY_PNG } from './support/gateway';

describe('reading a kept answer again', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-salvage-');
  });
  afterEach(() => removeDir(dir));

  /** A real PNG of some size (the emulator's renderer). */
  const png = (seed: number) =>
    renderImage({ model: IMAGE_MODELS[0]!, prompt: `salvage ${seed}`, seed, width: 96, height: 64, transparent: false, referencesDigest: '', extra: '' }, 0);

  async function salvage(text: string | Buffer) {
    const file = path.join(dir, 'job-answer.json');
    await writeFile(file, text);
    const result = await salvageAnswer(file, dir, 'job-answer');
    return { ...result, bytes: await Promise.all(result.images.map((i) => readFile(i.path))) };
  }

  it('images under other names, a data URL header, escaped slashes: byte-equal, in order, the answer read whole', async () => {
    const [a, b, c] = [png(1), png(2), TINY_PNG];
    const text = JSON.stringify({
      output: [{ image_base64: a.toString('base64') }, { nested: { img: `data:image/png;base64,${b.toString('base64')}` } }],
      tiny: c.toString('base64'),
      note: 'x'.repeat(100),
    }).replaceAll('/', '\\/');
    const result = await salvage(text);
    assert.equal(result.images.length, 3);
    [a, b, c].forEach((img, i) => assert.ok(result.bytes[i]!.equals(img), `image ${i + 1}`));
    assert.equal(result.complete, true);
    assert.deepEqual(
      result.images.map((i) => path.basename(i.path)),
      ['job-answer-1.png', 'job-answer-2.png', 'job-answer-3.png'],
    );
  });

  it('a stray prefix ("base64,", b\'…\'), a stray character, the URL-safe alphabet: byte-equal, flagged', async () => {
    const image = png(3);
    const b64 = image.toString('base64');
    const middle = Math.floor(b64.length / 2);
    for (const value of [`base64,${b64}`, `b'${b64}'`, `image/png;base64,${b64}`, `${b64.slice(0, middle)}!${b64.slice(middle)}`]) {
      const result = await salvage(JSON.stringify({ b64_json: value }));
      assert.equal(result.images.length, 1, value.slice(0, 20));
      assert.ok(result.bytes[0]!.equals(image), value.slice(0, 20));
      assert.ok(result.images[0]!.strayCharacters > 0);
      assert.equal(result.complete, false, 'the answer goes along: something was skipped');
    }
    const urlSafe = await salvage(JSON.stringify({ b64_json: b64.replaceAll('+', '-').replaceAll('/', '_') }));
    assert.ok(urlSafe.bytes[0]!.equals(image));
  });

  it('cut short: the first part, flagged cut; a long string that is no image keeps the answer', async () => {
    const image = png(4);
    const text = JSON.stringify({ data: [{ b64_json: image.toString('base64') }] });
    const cut = await salvage(text.slice(0, 2000));
    assert.equal(cut.images.length, 1);
    assert.equal(cut.images[0]!.cut, true);
    assert.ok(image.subarray(0, cut.bytes[0]!.length).equals(cut.bytes[0]!));
    const notImage = await salvage(JSON.stringify({ data: [{ b64_json: Buffer.alloc(9000, 7).toString('base64') }] }));
    assert.deepEqual(notImage.images, []);
    assert.equal(notImage.complete, false);
  });

  it('not JSON: base64 as plain text is one image; an image body cut short is the image itself', async () => {
    const image = png(5);
    const plain = await salvage(`\n${image.toString('base64')}\n`);
    assert.ok(plain.bytes[0]!.equals(image));
    const itself = await salvage(image.subarray(0, 100));
    assert.equal(itself.images[0]!.path, path.join(dir, 'job-answer.json'));
    assert.equal(itself.images[0]!.cut, true);
  });
});
