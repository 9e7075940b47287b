// A region edit saved as JPEG (issue 41, the person's choice): the result is photo.region-N.jpg of the
// original's size, close to the PNG result of the same answer (every pixel re-compressed at quality 90),
// the mask beside it a PNG, the record (plan, journal) saying jpeg and the confirmation what it costs; an
// original with transparency is refused before anything is sent; a start finishes an interrupted JPEG
// edit as the edit would have, and never pastes a finished one (its COM mark) again.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import { decodeImage } from '../../src/core/images/codecs';
import { encodeJpeg } from '../../src/core/images/jpegEncode';
import { isPngBytes } from '../../src/core/files/maskInput';
import { JobHistoryRecord } from '../../src/jobs/jobRecord';
import type { ConfirmRequest, ImageJob } from '../../src/jobs/jobTypes';
import {
  compositeInto,
  finishRegionEdit,
  isCompositeFile,
  planRegionEdit,
  recordedReferences,
  recoverRegionEdits,
  regionJobOf,
} from '../../src/jobs/regionEdit';
import { pendingRegionEdits } from '../../src/jobs/regionPending';
import { HistoryStore } from '../../src/jobs/results/history';
import { SharedJournal } from '../../src/jobs/results/journalFile';
import { journalLine, ResultsIndex } from '../../src/jobs/results/resultsIndex';
import { caught, gatewaySuite, newService, paidRequests } from './support/gateway';
import { boxMask, gradient, rgbaPng } from './support/maskImages';

const journalCode = () => ({ SharedJournal, ResultsIndex, journalLine });
const isJpegBytes = (bytes: Uint8Array) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

/** Opaque and smooth, as photographs mostly are (gradient()'s every-pixel-its-own-colour is JPEG's worst case). */
function smooth(width: number, height: number) {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      data.set([Math.round((x * 255) / width), Math.round((y * 255) / height), Math.round(((x + y) * 127) / (width + height)), 255], (y * width + x) * 4);
  return { width, height, data };
}

/** The 8×8 JPEG block of pixel p in an image `width` wide. */
const blockOf = (p: number, width: number) => Math.floor(Math.floor(p / width) / 8) * Math.ceil(width / 8) + Math.floor((p % width) / 8);

describe('region edit saved as JPEG', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ models: true });
  const W = 300;
  const H = 200;
  const BOX = { x: 200, y: 120, width: 20, height: 16 };
  let dir: string;
  let index = 0;

  beforeEach(async () => {
    dir = path.join(gw.dir, `jpeg-${++index}`);
    await fs.mkdir(dir, { recursive: true });
  });

  const storeOf = () => new HistoryStore(path.join(dir, 'results.jsonl'), { load: journalCode });
  // lumen-xl takes a seed (and 3:2), so the answer, and so every figure compared below, is the same each run.
  const MODEL = 'lumen-xl';
  const model = () => gw.models.find((m) => m.id === MODEL)!;
  const editJob = (original: string): ImageJob => ({
    request: { model: MODEL, prompt: 'make it a red door', aspect_ratio: '3:2', seed: 41 },
    references: [original],
    transport: 'input_references',
    output: { directory: dir, pattern: '{name}.edit-{index}', sourceName: 'photo' },
  });
  const setUp = async (image = gradient(W, H)) => {
    const original = path.join(dir, 'photo.png');
    const mask = path.join(dir, 'photo-mask.png');
    await fs.writeFile(original, rgbaPng(image));
    await fs.writeFile(mask, rgbaPng(boxMask(W, H, BOX)));
    return { original, mask };
  };

  /** The answer saved and recorded (journal), finishRegionEdit not yet run. */
  const answered = async (format: 'png' | 'jpeg', image = gradient(W, H)) => {
    const { original, mask } = await setUp(image);
    const plan = await planRegionEdit({ images: [original], mask, format, model: model() });
    const region = await regionJobOf(editJob(original), plan, model());
    const confirms: ConfirmRequest[] = [];
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), {
      provenance: () => true,
      confirmAbove: () => 0,
      confirm: async (request) => {
        confirms.push(request);
        return true;
      },
    });
    const store = storeOf();
    const record = new JobHistoryRecord(store, {
      request: region.job.request,
      references: recordedReferences(region.job),
      model: MODEL,
      region: plan.record,
    });
    const result = await rig.service.run(region.job);
    await region.dispose();
    await record.finish(result);
    return { original, mask, plan, result, store, confirms };
  };

  it('photo.region-1.jpg of the original size, close to the PNG result of the same answer; the mask beside a PNG; the record says jpeg', async () => {
    const { mask, plan, result, store, confirms } = await answered('jpeg', smooth(W, H));
    assert.equal(plan.record.format, 'jpeg');
    assert.equal(confirms.length, 1);
    assert.equal(confirms[0]!.regionFormat, 'jpeg', 'the confirmation says what JPEG costs');
    assert.match(confirms[0]!.region!, /of 300×200, sent as/);
    const answer = result.files[0]!;
    const copy = path.join(dir, 'answer-copy.png');
    await fs.copyFile(answer, copy);

    const outcome = await finishRegionEdit(plan, result);
    assert.deepEqual(outcome.notes, []);
    assert.deepEqual(outcome.files, [path.join(dir, 'photo.region-1.jpg')]);
    assert.deepEqual(outcome.masks, [path.join(dir, 'photo.region-1.mask.png')]);
    await assert.rejects(fs.stat(answer), 'the answer goes once its JPEG composite is on disk (one result file)');
    const jpeg = await fs.readFile(outcome.files[0]!);
    assert.ok(isJpegBytes(jpeg));
    assert.ok(isPngBytes(await fs.readFile(outcome.masks[0]!)), 'the mask beside stays a PNG');
    assert.deepEqual(await fs.readFile(outcome.masks[0]!), await fs.readFile(mask));
    assert.equal(await isCompositeFile(outcome.files[0]!), true, 'marked as a composite (its COM segment)');
    const entry = (await store.index()).findByFile(answer)!;
    assert.equal(entry.region!.format, 'jpeg', 'the journal names the format');

    // The PNG result of the same answer, for comparison.
    const pngPlan = await planRegionEdit({ images: [plan.record.original], mask, model: model() });
    const pngFile = await compositeInto(pngPlan, copy);
    const asPng = await decodeImage(await fs.readFile(pngFile));
    const asJpeg = await decodeImage(jpeg);
    assert.deepEqual([asJpeg.width, asJpeg.height], [W, H]);
    // JPEG codes each 8×8 block on its own (4:4:4, no chroma shared across blocks), so a block with no pixel of
    // the region (mask or feather) is the smooth original's alone: its error is small and the same every run.
    // The answer's sharp edges ring through the blocks it shares with the original, inside the region and just
    // outside it, so those pixels get the looser bound of sharp content. (Measured: 3, 20 and a mean of 0.55.)
    const touched = new Set<number>();
    for (let p = 0; p < W * H; p++) if (plan.mask.alpha[p] !== 0) touched.add(blockOf(p, W));
    let untouched = 0;
    let sharedBlocks = 0;
    let sum = 0;
    for (let p = 0; p < asPng.data.length; p++) {
      if (p % 4 === 3) {
        assert.equal(asJpeg.data[p], 255);
        continue;
      }
      const difference = Math.abs(asPng.data[p]! - asJpeg.data[p]!);
      if (touched.has(blockOf(p >> 2, W))) sharedBlocks = Math.max(sharedBlocks, difference);
      else untouched = Math.max(untouched, difference);
      sum += difference;
    }
    const mean = sum / (W * H * 3);
    assert.equal(touched.size, 5 * 4, 'the 20×16 box at (200, 120) with its 8-pixel feather spans 5×4 blocks');
    assert.ok(untouched <= 8, `largest channel difference in blocks the region does not touch ${untouched}`);
    assert.ok(sharedBlocks <= 48, `largest channel difference in blocks the region touches ${sharedBlocks}`);
    assert.ok(mean <= 3, `mean channel difference ${mean}`);
    assert.equal(paidRequests(gw.emu).length, 1);
  });

  it('refuses JPEG for an original with transparency before anything is sent, naming "format"', async () => {
    const image = gradient(W, H);
    image.data[3] = 128;
    const { original, mask } = await setUp(image);
    const error = await caught<ValidationError>(() => planRegionEdit({ images: [original], mask, format: 'jpeg', model: model() }));
    assert.ok(error instanceof ValidationError);
    assert.equal(error.field, 'format');
    assert.match(error.message, /photo\.png has transparent pixels, which a JPEG cannot keep/);
    assert.deepEqual(error.allowed, ['png']);
    // PNG of the same original is fine.
    assert.equal((await planRegionEdit({ images: [original], mask, model: model() })).record.format, undefined);
    assert.equal(paidRequests(gw.emu).length, 0);
  });

  it('an interrupted JPEG edit is finished by the next start; a finished one is never pasted again', async () => {
    const { plan, result, store } = await answered('jpeg');
    const answer = result.files[0]!;
    const recent = async () => (await storeOf().index()).createdBetween(new Date(Date.now() - 86_400_000), new Date(Date.now() + 60_000));
    assert.equal((await pendingRegionEdits(await recent())).length, 1);
    const report = await recoverRegionEdits(store, await pendingRegionEdits(await recent()), { lockDir: path.join(dir, 'locks') });
    const jpg = path.join(dir, 'photo.region-1.jpg');
    assert.deepEqual(
      report.finished.map((f) => f.files),
      [[jpg]],
    );
    assert.ok(isJpegBytes(await fs.readFile(jpg)));
    assert.ok(await fs.stat(path.join(dir, 'photo.region-1.mask.png')));
    await assert.rejects(fs.stat(answer));
    assert.deepEqual(await pendingRegionEdits(await recent()), [], 'the next start has nothing to do');
    assert.equal(plan.record.format, 'jpeg');
    assert.equal(paidRequests(gw.emu).length, 1, 'nothing was sent again');
  });

  it('pasted as JPEG but stopped before the mask was saved: the composite (its mark) is not pasted again', async () => {
    const { plan, result, store } = await answered('jpeg');
    const file = await compositeInto(plan, result.files[0]!);
    assert.equal(file, path.join(dir, 'photo.region-1.jpg'));
    const composite = await fs.readFile(file);
    const recent = (await store.index()).createdBetween(new Date(Date.now() - 86_400_000), new Date(Date.now() + 60_000));
    const report = await recoverRegionEdits(store, await pendingRegionEdits(recent), { lockDir: path.join(dir, 'locks') });
    assert.deepEqual(report.finished, [], 'nothing pasted');
    assert.deepEqual(await fs.readFile(file), composite);
    assert.ok(await fs.stat(path.join(dir, 'photo.region-1.mask.png')), 'its mask saved');
    assert.deepEqual((await storeOf().index()).findByFile(file)?.files, [file]);
  });

  it('a JPEG answer without the mark is not taken for a composite; encodeJpeg keeps the ICC profile', async () => {
    const plain = path.join(dir, 'plain.jpg');
    await fs.writeFile(plain, encodeJpeg(gradient(32, 24)));
    assert.equal(await isCompositeFile(plain), false);
    const icc = Buffer.alloc(70_000, 7);
    icc.write('fake profile', 0);
    const decoded = await decodeImage(encodeJpeg(gradient(32, 24), { iccProfile: icc, comments: ['gateway-images-composite'] }));
    assert.deepEqual(Buffer.from(decoded.iccProfile!), icc, 'a profile over two APP2 segments comes back whole');
    assert.deepEqual([decoded.width, decoded.height], [32, 24]);
  });
});
