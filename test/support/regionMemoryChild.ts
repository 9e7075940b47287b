// The child process of test/unit/regionMemory.test.ts: a region edit of a 4096×4096 original, measured
// from the outside of the code (the process's peak RSS against its idle RSS). Two steps, each its own
// process, so that making the inputs costs the measured one nothing:
//   node regionMemoryChild.js make <dir> [baseline] [jpeg]   the PNG original, the mask, an answer, and the
//     same picture as the JPEGs named: baseline (as a camera writes it: baseline, 4:2:0) and jpeg
//     (mozjpeg's defaults: progressive, 4:4:4). The picture is made once for them all.
//   node regionMemoryChild.js edit <dir> <png|jpeg|baseline>   loads the modules, idles, runs the region edit
//   node regionMemoryChild.js peak   measures nothing done, as `edit` measures (the measurement's own test)
// `edit` prints one JSON line: { idleKb, peakKb, ... }.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import type { JobResult } from '../../src/jobs/jobResult';
import { resetPeakRss, vmHwmMb } from '../../tools/bench/procStats';
import { chunk, encodeJpeg, photoLike, PNG_SIGNATURE } from './regionImages';

const deflateAsync = promisify(deflate);

export const SIDE = 4096;
/** The region: a box in the middle-right of the picture, as a person would paint a sky or a door. */
export const REGION = { x: 2300, y: 1500, width: 1200, height: 900 };
/** The model's answer: 3:2 at about 1.5 MP, resized to the crop's size when pasted back. */
export const ANSWER = { width: 1536, height: 1024 };
export const RATIOS = ['1:1', '3:2', '2:3', '4:3', '3:4', '16:9', '9:16'];

export interface MemoryFigures {
  kind: OriginalKind;
  idleKb: number;
  peakKb: number;
  originalBytes: number;
  resultBytes: number;
  crop: string;
}

/** A PNG fast to write (rows unfiltered, zlib level 1, on the thread pool): the inputs' encoder is not what is measured. */
async function quickPng(image: { width: number; height: number; data: Uint8Array }): Promise<Buffer> {
  const stride = image.width * 4;
  const rows = Buffer.alloc((stride + 1) * image.height);
  for (let y = 0; y < image.height; y++) rows.set(image.data.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(image.width, 0);
  ihdr.writeUInt32BE(image.height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', await deflateAsync(rows, { level: 1 })), chunk('IEND', Buffer.alloc(0))]);
}

export type OriginalKind = 'png' | 'jpeg' | 'baseline';
const ORIGINAL_FILES: Record<OriginalKind, string> = { png: 'photo.png', jpeg: 'photo.jpg', baseline: 'photo-baseline.jpg' };

/**
 * The originals (one picture: the PNG, and the JPEGs of `jpegs`), the mask and an answer. The PNG's
 * deflate runs on the thread pool while the JPEGs are encoded (the slow step, ~5 s each) on this one.
 */
async function make(dir: string, jpegs: ('jpeg' | 'baseline')[]): Promise<void> {
  const { encodePng } = await import('../../src/core/images/codecs');
  await fs.mkdir(dir, { recursive: true });
  const original = photoLike(SIDE, SIDE, 7);
  const mask = new Uint8Array(SIDE * SIDE * 4);
  for (let y = REGION.y; y < REGION.y + REGION.height; y++) mask.fill(255, (y * SIDE + REGION.x) * 4, (y * SIDE + REGION.x + REGION.width) * 4);
  const pngs = Promise.all([
    quickPng(original).then((png) => fs.writeFile(path.join(dir, ORIGINAL_FILES.png), png)),
    quickPng({ width: SIDE, height: SIDE, data: mask }).then((png) => fs.writeFile(path.join(dir, 'mask.png'), png)),
  ]);
  await fs.writeFile(path.join(dir, 'answer.png'), encodePng(photoLike(ANSWER.width, ANSWER.height, 11)));
  for (const kind of jpegs) await fs.writeFile(path.join(dir, ORIGINAL_FILES[kind]), await encodeJpeg(original, 90, { baseline: kind === 'baseline' }));
  await pngs;
}

/**
 * The idle RSS, and the kernel's peak mark from here on (VmHWM, reset at idle). Not
 * resourceUsage().maxRSS: Linux carries the peak of the process that forked this one across exec, so
 * a test process of 364 MB made both edits "peak 364 MB" (CI, 2026-12-03). `peakKb()` reads the peak
 * since the mark, or maxRSS where the mark cannot be reset (it may then count the parent's).
 */
function markIdle(): { idleKb: number; peakKb: () => number } {
  const idleKb = Math.round(process.memoryUsage.rss() / 1024);
  const marked = resetPeakRss();
  return {
    idleKb,
    peakKb: () => {
      const hwmMb = marked ? vmHwmMb() : undefined;
      return hwmMb !== undefined ? Math.round(hwmMb * 1024) : process.resourceUsage().maxRSS;
    },
  };
}

/** `peak`: the figures of a process that does nothing, measured as `edit` measures: what the parent's memory adds to them. */
function idlePeak(): Pick<MemoryFigures, 'idleKb' | 'peakKb'> {
  const mark = markIdle();
  return { idleKb: mark.idleKb, peakKb: mark.peakKb() };
}

async function edit(dir: string, kind: OriginalKind): Promise<MemoryFigures> {
  const regionEdit = await import('../../src/jobs/regionEdit');
  // The JPEG decoder's WASM is compiled on first use, as in the extension: part of the edit's cost.
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const { idleKb, peakKb: peakSinceIdle } = markIdle();

  const original = path.join(dir, ORIGINAL_FILES[kind]);
  const work = path.join(dir, `work-${kind}`);
  await fs.mkdir(work, { recursive: true });
  const model = { supported_aspect_ratios: RATIOS, supported_output_formats: ['png'] };
  const plan = await regionEdit.planRegionEdit({ images: [original], mask: path.join(dir, 'mask.png'), feather: 8, model });
  const job = { request: { model: 'm', prompt: 'p' }, references: [original], output: { directory: work, pattern: '{name}', sourceName: 'photo' } };
  const { dispose } = await regionEdit.regionJobOf(job, plan, model, work);
  await dispose();
  const answer = path.join(work, 'photo.region-1.png');
  await fs.copyFile(path.join(dir, 'answer.png'), answer);
  const result: JobResult = { files: [answer], model: 'm', estimate: { n: 1, reservation: 0, expectedMin: 0, expectedMax: 0 } };
  const outcome = await regionEdit.finishRegionEdit(plan, result, path.join(dir, 'mask.png'));
  if (outcome.notes.length || outcome.files.length !== 1) throw new Error(`the region edit failed: ${outcome.notes.join('; ')}`);
  const peakKb = peakSinceIdle();
  const { crop } = plan.record;
  return {
    kind,
    idleKb,
    peakKb,
    originalBytes: (await fs.stat(original)).size,
    resultBytes: (await fs.stat(outcome.files[0]!)).size,
    crop: `${crop.width}×${crop.height}+${crop.x}+${crop.y}`,
  };
}

if (require.main === module) {
  const [step, dir, kind] = process.argv.slice(2);
  const run =
    step === 'peak'
      ? Promise.resolve(idlePeak())
      : step === 'make'
        ? make(
            dir!,
            process.argv.slice(4).filter((jpeg): jpeg is 'jpeg' | 'baseline' => jpeg === 'jpeg' || jpeg === 'baseline'),
          )
        : edit(dir!, kind === 'jpeg' || kind === 'baseline' ? kind : 'png');
  run.then(
    (figures) => {
      if (figures) process.stdout.write(`${JSON.stringify(figures)}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
