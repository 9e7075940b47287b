// A region edit through the one job service against the emulator (issue 41): the crop around the
// mask is the edit's single reference, sent once at the crop's ratio; the answer is pasted back so
// that every pixel the feathered mask leaves out is the original's; the result is a new file next to
// the original (which is untouched) with the mask beside it and a provenance naming both. Bad masks
// are refused before anything is sent.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import type { GenerationRequest } from '../../src/core/gateway/types';
import { decodeImage } from '../../src/core/images/codecs';
import { readPngTextChunk } from '../../src/core/files/pngText';
import type { ImageApi, ImageJob } from '../../src/jobs/jobTypes';
import { PROVENANCE_KEYWORD } from '../../src/jobs/provenance';
import { finishRegionEdit, planRegionEdit, recordedReferences, regionJobOf } from '../../src/jobs/regionEdit';
import { caught, gatewaySuite, newService, paidRequests } from './support/gateway';
import { boxMask, gradient, rgbaPng } from './support/maskImages';

describe('region edit through the job service', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ models: true });
  const sent: { request: GenerationRequest; reference: { width: number; height: number } }[] = [];
  const api: ImageApi = {
    generate: (request, sink, options) => gw.client.generate(request, sink, options),
    generateWithReferences: async (request, files, sink, options) => {
      const reference = await decodeImage(await fs.readFile(files[0]!.path));
      sent.push({ request, reference });
      return gw.client.generateWithReferences(request, files, sink, options);
    },
    edit: (request, files, sink, options) => gw.client.edit(request, files, sink, options),
  };
  let dir: string;
  let index = 0;

  beforeEach(async () => {
    sent.length = 0;
    dir = path.join(gw.dir, `region-${++index}`);
    await fs.mkdir(dir, { recursive: true });
  });

  const W = 300;
  const H = 200;
  const BOX = { x: 200, y: 120, width: 20, height: 16 };
  const setUp = async (mask: Buffer = rgbaPng(boxMask(W, H, BOX))) => {
    const original = path.join(dir, 'photo.png');
    const maskFile = path.join(dir, 'photo-mask.png');
    await fs.writeFile(original, rgbaPng(gradient(W, H)));
    await fs.writeFile(maskFile, mask);
    return { original, maskFile };
  };
  const editJob = (original: string, model = 'prism-2'): ImageJob => ({
    request: { model, prompt: 'make it a red door', aspect_ratio: '3:2' },
    references: [original],
    transport: 'input_references',
    output: { directory: path.dirname(original), pattern: '{name}.edit-{index}', sourceName: 'photo' },
  });

  it('sends only the crop once, pastes the answer back outside-exact, saves photo.region-1.png and its mask', async () => {
    const { original, maskFile } = await setUp();
    const before = await fs.readFile(original);
    const model = gw.models.find((m) => m.id === 'prism-2')!;
    const plan = await planRegionEdit({ images: [original], mask: maskFile, model });
    assert.match(plan.description, /of 300×200, sent as/);
    const { job, dispose } = await regionJobOf(editJob(original), plan, model);
    assert.deepEqual(recordedReferences(job), [original, maskFile]);
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), { api: async () => api, provenance: () => true });
    const result = await rig.service.run(job);
    await dispose();
    const outcome = await finishRegionEdit(plan, result);

    assert.equal(paidRequests(gw.emu).length, 1);
    assert.equal(sent.length, 1);
    const { crop } = plan.record;
    assert.deepEqual(sent[0]!.reference, { ...sent[0]!.reference, width: crop.width, height: crop.height });
    assert.equal(sent[0]!.request.aspect_ratio, crop.ratio);
    assert.ok(model.supported_aspect_ratios.includes(crop.ratio));
    assert.ok(crop.width < W || crop.height < H, 'only a part of the image is sent');

    assert.deepEqual(outcome.files, [path.join(dir, 'photo.region-1.png')]);
    assert.deepEqual(outcome.masks, [path.join(dir, 'photo.region-1.mask.png')]);
    assert.deepEqual(outcome.notes, []);
    assert.deepEqual(await fs.readFile(original), before, 'the original is untouched');
    assert.deepEqual(await fs.readFile(outcome.masks[0]!), await fs.readFile(maskFile));

    const edited = await decodeImage(await fs.readFile(outcome.files[0]!));
    const source = gradient(W, H);
    assert.equal(edited.width, W);
    assert.equal(edited.height, H);
    let changed = 0;
    for (let p = 0; p < W * H; p++) {
      const same = edited.data.subarray(p * 4, p * 4 + 4).every((v, i) => v === source.data[p * 4 + i]);
      if (plan.mask.alpha[p] === 0) assert.ok(same, `pixel ${p % W},${Math.floor(p / W)} outside the region changed`);
      else if (!same) changed++;
    }
    assert.ok(changed > 0, 'the region took the answer');

    const provenance = JSON.parse((await readPngTextChunk(outcome.files[0]!, PROVENANCE_KEYWORD))!);
    assert.equal(provenance.region.original, 'photo.png');
    assert.equal(provenance.region.mask, 'photo-mask.png');
    assert.equal(provenance.region.feather, 8);
    assert.deepEqual(provenance.region.box, BOX);
    assert.deepEqual(provenance.region.crop, crop);
    await assert.rejects(fs.stat(job.references![0]!), 'the temporary crop is removed');
  });

  it('a mask the studio painted (its own file, removed after): provenance names the copy kept beside the result', async () => {
    const { original, maskFile } = await setUp();
    const model = gw.models.find((m) => m.id === 'prism-2')!;
    const plan = await planRegionEdit({ images: [original], mask: maskFile, maskShown: 'the painted region', maskKeptBeside: true, model });
    const { job, dispose } = await regionJobOf(editJob(original), plan, model);
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), { api: async () => api, provenance: () => true });
    const result = await rig.service.run(job);
    await dispose();
    const outcome = await finishRegionEdit(plan, result);
    assert.deepEqual(outcome.masks, [path.join(dir, 'photo.region-1.mask.png')]);
    const provenance = JSON.parse((await readPngTextChunk(outcome.files[0]!, PROVENANCE_KEYWORD))!);
    assert.equal(provenance.region.mask, 'photo.region-1.mask.png');
    assert.equal(provenance.region.original, 'photo.png');
  });

  it('a feather of 0 keeps every pixel outside the mask box exact', async () => {
    const { original, maskFile } = await setUp();
    const plan = await planRegionEdit({ images: [original], mask: maskFile, feather: 0, model: gw.models.find((m) => m.id === 'prism-2') });
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const inside = x >= BOX.x && x < BOX.x + BOX.width && y >= BOX.y && y < BOX.y + BOX.height;
        assert.equal(plan.mask.alpha[y * W + x]! > 0, inside, `${x},${y}`);
      }
  });

  const refusals: [string, () => Buffer, RegExp][] = [
    ['of another size', () => rgbaPng(boxMask(W / 2, H / 2, { x: 1, y: 1, width: 4, height: 4 })), /same size as the image, 300×200/],
    ['empty', () => rgbaPng(boxMask(W, H, undefined)), /marks nothing/],
    ['not a PNG', () => Buffer.from('GIF89a not really'), /is not a PNG/],
  ];
  for (const [what, bytes, message] of refusals) {
    it(`refuses a mask ${what} before any request`, async () => {
      const { original, maskFile } = await setUp(bytes());
      const error = await caught<ValidationError>(() => planRegionEdit({ images: [original], mask: maskFile }));
      assert.ok(error instanceof ValidationError, String(error));
      assert.equal(error.field, 'mask');
      assert.match(error.message, message);
      assert.equal(paidRequests(gw.emu).length, 0);
    });
  }

  it('refuses a region edit of two images, naming "mask"', async () => {
    const { original, maskFile } = await setUp();
    const error = await caught<ValidationError>(() => planRegionEdit({ images: [original, original], mask: maskFile }));
    assert.equal(error.field, 'mask');
    assert.match(error.message, /exactly one image; 2 were given/);
  });

  it('refuses an original that is not an image, naming "images"', async () => {
    const { maskFile } = await setUp();
    const original = path.join(dir, 'photo.svg');
    await fs.writeFile(original, '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const error = await caught<ValidationError>(() => planRegionEdit({ images: [original], mask: maskFile }));
    assert.equal(error.field, 'images');
    assert.match(error.message, /cannot be region-edited/);
  });
});
