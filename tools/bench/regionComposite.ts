// The region edit's put-back path (issue 41 item 7) against a plain decode, resize and encode of the
// same original, in the same process and run, interleaved: (a) decode the original and the model's
// answer, resize the answer to the crop, paste it through the feathered mask, encode the PNG — what
// finishRegionEdit does with a plan in hand; (b) decode the original, resize it (to 90 % of its
// size: a resize of the whole image), encode the PNG. Target: a / b ≤ 1.5. The absolute times are
// information.
import { decodeImage, encodePngParts } from '../../src/core/images/codecs';
import { withRegionComposited } from '../../src/core/images/composite';
import type { RgbaImage } from '../../src/core/images/pixels';
import { cropBoxFor } from '../../src/core/images/regionCrop';
import { featherMask, maskFromImage } from '../../src/core/images/regionMask';
import { resizeRgba } from '../../src/core/images/resize';
import { photoLike } from '../../test/support/regionImages';
import { type BenchContext, type BenchTarget, median, runsAtLeast, type ScenarioReport } from './scenario';

export const TARGET_REGION_COMPOSITE_RATIO = 1.5;
const SIDE = 4096;
const QUICK_SIDE = 1024;

const pngOf = (image: RgbaImage) => Buffer.concat(encodePngParts(image));
const time = async (task: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await task();
  return performance.now() - started;
};
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function regionCompositeScenario(ctx: BenchContext): Promise<ScenarioReport> {
  const side = ctx.quick ? QUICK_SIDE : SIDE;
  const runs = runsAtLeast(ctx, 5);
  ctx.log(`  region composite: ${side}×${side} original, ${runs} runs…`);
  // The region: a box of about 30 % × 22 % of the picture; the answer 3:2 at 1.5 MP, as a model gives it.
  const box = { x: Math.round(side * 0.56), y: Math.round(side * 0.37), width: Math.round(side * 0.29), height: Math.round(side * 0.22) };
  const originalPng = pngOf(photoLike(side, side, 7));
  const maskPixels = new Uint8Array(side * side * 4);
  for (let y = box.y; y < box.y + box.height; y++) maskPixels.fill(255, (y * side + box.x) * 4, (y * side + box.x + box.width) * 4);
  const mask = featherMask(maskFromImage({ width: side, height: side, data: maskPixels }), 8);
  const crop = cropBoxFor(box, { width: side, height: side }, ['1:1', '3:2', '2:3', '4:3', '3:4', '16:9', '9:16'], { feather: 8 });
  const answerPng = pngOf(photoLike(Math.round(1536 * (side / SIDE)), Math.round(1024 * (side / SIDE)), 11));
  let compositeBytes = 0;
  let plainBytes = 0;

  const composite = async () => {
    const original = await decodeImage(originalPng);
    const answer = await decodeImage(answerPng);
    const sized = resizeRgba(answer, crop.width, crop.height);
    const parts = withRegionComposited(original, sized, crop, mask, (image) => encodePngParts(image));
    compositeBytes = parts.reduce((sum, part) => sum + part.length, 0);
  };
  const plain = async () => {
    const original = await decodeImage(originalPng);
    const resized = resizeRgba(original, Math.round(side * 0.9), Math.round(side * 0.9));
    plainBytes = encodePngParts(resized).reduce((sum, part) => sum + part.length, 0);
  };
  await composite(); // warm: the first run also compiles the code
  await plain();
  const compositeMs: number[] = [];
  const plainMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    // Interleaved, so that the machine's moods fall on both alike.
    compositeMs.push(await time(composite));
    plainMs.push(await time(plain));
  }
  const ratio = median(compositeMs.map((v, i) => v / plainMs[i]!));
  const quickNote = ctx.quick ? ' (quick: 1024×1024)' : '';
  const lines = [
    `Region edit put-back, ${side}×${side} original (${(originalPng.length / 1e6).toFixed(1)} MB PNG), crop ${crop.width}×${crop.height}, median of ${runs} runs:`,
    `  composite (decode original + answer ${Math.round(1536 * (side / SIDE))}×${Math.round(1024 * (side / SIDE))}, resize to the crop, feathered paste, encode PNG): ${fmt(median(compositeMs))}, ${(compositeBytes / 1e6).toFixed(1)} MB`,
    `  baseline (decode original, resize to 90 %, encode PNG): ${fmt(median(plainMs))}, ${(plainBytes / 1e6).toFixed(1)} MB; ratio ${ratio.toFixed(2)}`,
  ];
  const target: BenchTarget = {
    name: `region composite / decode+resize+encode${quickNote}`,
    value: `${ratio.toFixed(2)} (${fmt(median(compositeMs))} / ${fmt(median(plainMs))})`,
    target: `≤ ${TARGET_REGION_COMPOSITE_RATIO}`,
    pass: ratio <= TARGET_REGION_COMPOSITE_RATIO,
    time: true,
  };
  return { lines, targets: [target], json: { regionComposite: { side, crop, compositeMs, plainMs, ratio, compositeBytes, plainBytes } } };
}
