// Region edits and formats (issue 41): the result carries the original's ICC colour profile (PNG
// iCCP, JPEG APP2), and an answer that is not a PNG (a model asked for JPEG) is composited into a
// PNG of its own beside it, every pixel outside the feathered region still the original's. The
// large-image encoder's pieces (several IDAT chunks) decode to exactly what was encoded.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import type { GenerationRequest } from '../../src/core/gateway/types';
import { decodeImage, encodePng } from '../../src/core/images/codecs';
import { compositeRegion, withRegionComposited } from '../../src/core/images/composite';
import { decodePng } from '../../src/core/images/pngDecode';
import { featherMask, maskFromImage } from '../../src/core/images/regionMask';
import type { JobResult } from '../../src/jobs/jobResult';
import type { ImageApi, ImageJob } from '../../src/jobs/jobTypes';
import { finishRegionEdit, planRegionEdit, regionJobOf } from '../../src/jobs/regionEdit';
import { chunk, encodeJpeg, noise } from '../support/regionImages';
import { gatewaySuite, newService, paidRequests } from './support/gateway';
import { boxMask, gradient, rgbaPng } from './support/maskImages';

const W = 300;
const H = 200;
const BOX = { x: 200, y: 120, width: 20, height: 16 };
const PROFILE = Uint8Array.from({ length: 2500 }, (_, i) => (i * 13 + 5) & 0xff);

/** The decoded result against the decoded original: every pixel the feathered mask leaves out is equal. */
function assertOutsideExact(result: { data: Uint8Array }, original: { data: Uint8Array }, alpha: Uint8Array): number {
  let changed = 0;
  for (let p = 0; p < alpha.length; p++) {
    const same = result.data.subarray(p * 4, p * 4 + 4).every((v, i) => v === original.data[p * 4 + i]);
    if (alpha[p] === 0) assert.ok(same, `pixel ${p % W},${Math.floor(p / W)} outside the region changed`);
    else if (!same) changed++;
  }
  return changed;
}

describe('region edit: ICC profile and answers in other formats', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ models: true });
  let dir: string;
  let index = 0;

  beforeEach(async () => {
    dir = path.join(gw.dir, `formats-${++index}`);
    await fs.mkdir(dir, { recursive: true });
  });

  const result = (files: string[]): JobResult => ({ files, model: 'm', estimate: { n: 1, reservation: 0, expectedMin: 0, expectedMax: 0 } });

  for (const kind of ['png', 'jpeg'] as const) {
    it(`a ${kind.toUpperCase()} original with an ICC profile gives a result with the same profile bytes`, async () => {
      const original = path.join(dir, kind === 'png' ? 'photo.png' : 'photo.jpg');
      const pixels = gradient(W, H);
      if (kind === 'png') {
        // iCCP after IHDR: name, NUL, compression method 0, the zlib-compressed profile.
        const plain = rgbaPng(pixels);
        const iccp = chunk('iCCP', Buffer.concat([Buffer.from('sRGB-ish\0\0', 'latin1'), deflateSync(PROFILE)]));
        await fs.writeFile(original, Buffer.concat([plain.subarray(0, 33), iccp, plain.subarray(33)]));
      } else {
        const jpeg = await encodeJpeg(pixels);
        const app2 = Buffer.alloc(4);
        app2.writeUInt16BE(0xffe2, 0);
        app2.writeUInt16BE(2 + 12 + 2 + PROFILE.length, 2);
        await fs.writeFile(
          original,
          Buffer.concat([jpeg.subarray(0, 2), app2, Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([1, 1]), PROFILE, jpeg.subarray(2)]),
        );
      }
      const maskFile = path.join(dir, 'mask.png');
      await fs.writeFile(maskFile, rgbaPng(boxMask(W, H, BOX)));
      const plan = await planRegionEdit({ images: [original], mask: maskFile });
      assert.deepEqual(Buffer.from(plan.iccProfile!), Buffer.from(PROFILE));
      const answer = path.join(dir, 'photo.region-1.png');
      await fs.writeFile(answer, encodePng(noise(plan.record.crop.width, plan.record.crop.height, 3, true)));
      const outcome = await finishRegionEdit(plan, result([answer]));
      assert.deepEqual(outcome.notes, []);
      const edited = await decodeImage(await fs.readFile(outcome.files[0]!));
      assert.deepEqual(Buffer.from(edited.iccProfile!), Buffer.from(PROFILE));
      const decodedOriginal = await decodeImage(await fs.readFile(original));
      assert.ok(assertOutsideExact(edited, decodedOriginal, plan.mask.alpha) > 0);
    });
  }

  it('a JPEG answer (a model asked for JPEG): a composite PNG beside it, outside pixels exact; the journal keeps the answer', async () => {
    const original = path.join(dir, 'photo.png');
    const maskFile = path.join(dir, 'photo-mask.png');
    await fs.writeFile(original, rgbaPng(gradient(W, H)));
    await fs.writeFile(maskFile, rgbaPng(boxMask(W, H, BOX)));
    const catalogModel = gw.models.find((m) => m.id === 'aurora-1')!;
    // The model as one that cannot give PNG: the region job does not ask for PNG, the request asks for JPEG.
    const model = { ...catalogModel, supported_output_formats: ['jpeg'] };
    const plan = await planRegionEdit({ images: [original], mask: maskFile, model });
    const job: ImageJob = {
      request: { model: 'aurora-1', prompt: 'make it a red door', output_format: 'jpeg' },
      references: [original],
      transport: 'input_references',
      output: { directory: dir, pattern: '{name}.edit-{index}', sourceName: 'photo' },
    };
    const region = await regionJobOf(job, plan, model);
    assert.equal(region.job.request.output_format, 'jpeg');
    const sent: GenerationRequest[] = [];
    const api: ImageApi = {
      generate: (request, sink, options) => gw.client.generate(request, sink, options),
      generateWithReferences: (request, files, sink, options) => (sent.push(request), gw.client.generateWithReferences(request, files, sink, options)),
      edit: (request, files, sink, options) => (sent.push(request), gw.client.edit(request, files, sink, options)),
    };
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), { api: async () => api, provenance: () => true });
    const done = await rig.service.run(region.job);
    await region.dispose();
    assert.equal(paidRequests(gw.emu).length, 1);
    assert.equal(sent[0]!.output_format, 'jpeg');
    // What the service returns is what the journal records (jobRunner settles it before finish runs): the JPEG answer.
    assert.deepEqual(done.files, [path.join(dir, 'photo.region-1.jpg')]);
    const outcome = await finishRegionEdit(plan, done);
    assert.deepEqual(outcome.notes, []);
    assert.deepEqual(outcome.files, [path.join(dir, 'photo.region-1.png')]);
    assert.deepEqual(outcome.masks, [path.join(dir, 'photo.region-1.mask.png')]);
    assert.equal((await decodeImage(await fs.readFile(done.files[0]!))).mediaType, 'image/jpeg', 'the paid answer stays as it came');
    const edited = await decodeImage(await fs.readFile(outcome.files[0]!));
    assert.equal(edited.mediaType, 'image/png');
    assert.ok(assertOutsideExact(edited, gradient(W, H), plan.mask.alpha) > 0, 'the region took the answer');
  });

  it('the encoder of large images: many IDAT pieces decode to exactly the pixels, with the dictionary carried across', async () => {
    const image = noise(700, 900, 17);
    const png = encodePng(image);
    let idat = 0;
    for (let at = 8; at < png.length; at += 12 + png.readUInt32BE(at)) if (png.toString('latin1', at + 4, at + 8) === 'IDAT') idat++;
    assert.ok(idat > 2, `${idat} IDAT chunks`);
    const decoded = await decodeImage(png);
    assert.deepEqual(Buffer.from(decoded.data), Buffer.from(image.data));
    assert.deepEqual(Buffer.from(decodePng(png).data), Buffer.from(image.data));
  });

  it('the paste without a copy: what `use` sees equals compositeRegion, and the original is put back (also after a throw)', () => {
    const original = noise(64, 48, 5);
    const before = Buffer.from(original.data);
    const mask = featherMask(maskFromImage(boxMask(64, 48, { x: 20, y: 10, width: 12, height: 9 })), 4);
    const crop = { x: 8, y: 2, width: 40, height: 30 };
    const answer = noise(40, 30, 9);
    const expected = Buffer.from(compositeRegion(original, answer, crop, mask).data);
    const seen = withRegionComposited(original, answer, crop, mask, (image) => Buffer.from(image.data));
    assert.deepEqual(seen, expected);
    assert.deepEqual(Buffer.from(original.data), before);
    assert.throws(
      () =>
        withRegionComposited(original, answer, crop, mask, () => {
          throw new Error('disk full');
        }),
      /disk full/,
    );
    assert.deepEqual(Buffer.from(original.data), before);
  });
});
