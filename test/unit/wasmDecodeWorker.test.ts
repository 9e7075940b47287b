// A JPEG or WebP over 2048×2048 pixels is decoded in a worker thread of its own (wasmDecoders.ts),
// ended right after so its WASM memory is given back at once (issue 41 item 7): the same pixels as
// a decode in this thread, the bytes handed over only when asked, EXIF orientation and ICC profile
// kept, a damaged image refused.
import * as assert from 'node:assert/strict';
import { decodeImage } from '../../src/core/images/codecs';
import { ImageRefused, type RgbaImage } from '../../src/core/images/pixels';
import { decodeInThread } from '../../src/core/images/wasmDecode';
import { decodeWithWasm, WORKER_PIXELS } from '../../src/core/images/wasmDecoders';
import { encodeJpeg, withOrientation } from '../support/regionImages';

const WIDTH = 2304;
const HEIGHT = 2048;

/** Smooth gradients with a red block at the top left: quick to encode, and its corner shows a turn. */
function picture(): RgbaImage {
  const data = new Uint8Array(WIDTH * HEIGHT * 4);
  for (let y = 0, i = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++, i += 4) {
      const red = x < 256 && y < 256;
      data.set(red ? [230, 20, 20, 255] : [(x * 255) / WIDTH, (y * 255) / HEIGHT, 128, 255], i);
    }
  }
  return { width: WIDTH, height: HEIGHT, data };
}

/** The bytes in an ArrayBuffer of their own (what fs.readFile gives for a large file). */
const own = (bytes: Uint8Array) => new Uint8Array(bytes);

function app2Icc(profile: Uint8Array): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xffe2, 0);
  head.writeUInt16BE(2 + 14 + profile.length, 2);
  return Buffer.concat([head, Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([1, 1]), profile]);
}

describe('Large JPEG and WebP decoded in a worker thread', function () {
  this.timeout(60_000);
  let jpeg: Buffer;

  before(async () => {
    assert.ok(WIDTH * HEIGHT > WORKER_PIXELS);
    jpeg = await encodeJpeg(picture(), 85);
  });

  it('gives the same pixels as a decode in this thread; the bytes are handed over only when asked', async () => {
    const here = await decodeInThread('image/jpeg', own(jpeg).buffer);
    const kept = own(jpeg);
    const viaWorker = await decodeWithWasm('image/jpeg', kept);
    assert.deepEqual([viaWorker.width, viaWorker.height], [WIDTH, HEIGHT]);
    assert.ok(Buffer.from(viaWorker.data.buffer, viaWorker.data.byteOffset, viaWorker.data.byteLength).equals(Buffer.from(here.data)));
    assert.equal(kept.byteLength, jpeg.length, 'not handed over: the caller keeps its bytes');

    const given = own(jpeg);
    const transferred = await decodeWithWasm('image/jpeg', given, { transfer: true });
    assert.equal(given.byteLength, 0, 'handed over: the buffer went to the worker');
    assert.ok(Buffer.from(transferred.data).equals(Buffer.from(here.data)));
  });

  it('decodeImage with transfer: the EXIF orientation applied, the ICC profile kept', async () => {
    const profile = Uint8Array.from({ length: 600 }, (_, i) => (i * 5 + 1) & 0xff);
    const withIcc = Buffer.concat([jpeg.subarray(0, 2), app2Icc(profile), jpeg.subarray(2)]);
    const bytes = own(withOrientation(withIcc, 6, true)); // 6: turned 90° clockwise to be shown
    const image = await decodeImage(bytes, { transfer: true });
    assert.equal(bytes.byteLength, 0);
    assert.deepEqual([image.width, image.height, image.mediaType], [HEIGHT, WIDTH, 'image/jpeg']);
    assert.deepEqual(Buffer.from(image.iccProfile!), Buffer.from(profile));
    // The red block, top left before the turn, is now at the top right.
    const at = (x: number, y: number) => [...image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 3)];
    assert.ok(at(image.width - 100, 100)[0]! > 200 && at(image.width - 100, 100)[1]! < 60, `top right: ${at(image.width - 100, 100).join()}`);
    assert.ok(at(100, 100)[0]! < 200, `top left: ${at(100, 100).join()}`);
  });

  it("refuses a damaged large JPEG (the worker's failure comes back as a refusal)", async () => {
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc2]));
    assert.ok(sof > 0, 'a progressive JPEG');
    const end = sof + 2 + jpeg.readUInt16BE(sof + 2);
    // The header says 2304×2048, but no scan follows.
    const damaged = Buffer.concat([jpeg.subarray(0, end), Buffer.from([0xff, 0xd9])]);
    await assert.rejects(decodeImage(own(damaged), { transfer: true }), (error: unknown) => error instanceof ImageRefused && error.reason === 'corrupt');
    await assert.rejects(decodeWithWasm('image/jpeg', own(damaged)));
  });
});
