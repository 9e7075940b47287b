// A region edit whose paid answer was saved and recorded in the results journal, and whose process
// stopped before pasting it into the original (finishRegionEdit): what a window or an MCP server
// that was closed, killed or paused there leaves for the next start (src/jobs/regionRecovery.ts).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ImageModel } from '../../../src/core/gateway/types';
import type { GatewayClient } from '../../../src/core/client/client';
import { JobHistoryRecord } from '../../../src/jobs/jobRecord';
import type { ImageJob } from '../../../src/jobs/jobTypes';
import { planRegionEdit, recordedReferences, regionJobOf } from '../../../src/jobs/regionEdit';
import { HistoryStore } from '../../../src/jobs/results/history';
import { SharedJournal } from '../../../src/jobs/results/journalFile';
import { journalLine, ResultsIndex } from '../../../src/jobs/results/resultsIndex';
import { newService } from './gateway';
import { boxMask, gradient, rgbaPng } from './maskImages';

export const journalCode = () => ({ SharedJournal, ResultsIndex, journalLine });

/** `photo.png` (a W×H gradient) in `dir`, its region `box` painted in `mask`, edited by prism-2; the journal is `dir`/results.jsonl. */
export async function regionEditStoppedBeforeFinish(
  gw: { client: GatewayClient; models: ImageModel[]; dir: string },
  where: { dir: string; mask: string; size: { width: number; height: number }; box: { x: number; y: number; width: number; height: number } },
) {
  const { dir, mask, size, box } = where;
  const original = path.join(dir, 'photo.png');
  await fs.writeFile(original, rgbaPng(gradient(size.width, size.height)));
  await fs.writeFile(mask, rgbaPng(boxMask(size.width, size.height, box)));
  const model = gw.models.find((m) => m.id === 'prism-2')!;
  const plan = await planRegionEdit({ images: [original], mask, maskShown: 'the painted region', maskKeptBeside: true, model });
  const job: ImageJob = {
    request: { model: 'prism-2', prompt: 'make it a red door', aspect_ratio: '3:2' },
    references: [original],
    transport: 'input_references',
    output: { directory: dir, pattern: '{name}.edit-{index}', sourceName: 'photo' },
  };
  const region = await regionJobOf(job, plan, model);
  const store = new HistoryStore(path.join(dir, 'results.jsonl'), { load: journalCode });
  const record = new JobHistoryRecord(store, { request: job.request, references: recordedReferences(region.job), model: 'prism-2', region: plan.record });
  const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), { provenance: () => true });
  const result = await rig.service.run(region.job);
  await region.dispose();
  await record.finish(result);
  return { original, mask, plan, result, store, answer: await fs.readFile(result.files[0]!) };
}
