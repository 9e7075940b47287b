// 20 jobs at once in one process (what comparison and batch do): one ImageJobService, one client,
// 20 paid requests in flight, each streaming a large image. Peak RSS, event-loop delay, correctness.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ImageJobService } from '../../src/jobs/imageJobs';
import { type BenchContext, runsAtLeast, type BenchTarget, fmtS, lpad, median, MiB, pad, runNote, type ScenarioReport } from './scenario';
import type { WorkerResult, WorkerTask } from './worker';

const JOBS = 20;
const TARGET_RSS_OVER_IDLE_MB = 128;
const TARGET_LOOP_DELAY_MS = 30;
/** The max of one run is one tick: a single wait for a CPU moves it by 10 ms on a busy 2-core machine. */
const runsOf = (ctx: BenchContext) => runsAtLeast(ctx, 5);

/** Worker side: `task.jobs` jobs of one image each, started together. */
export async function concurrentRow(task: WorkerTask, service: ImageJobService): Promise<Partial<WorkerResult>> {
  const jobs = task.jobs ?? JOBS;
  const results = await Promise.allSettled(
    Array.from({ length: jobs }, (_, i) =>
      service.run({
        request: { model: task.model!, prompt: `${task.prompt} #${i + 1}`, n: 1, size: task.size },
        output: { directory: path.join(task.workDir, 'workspace', 'generated-images'), pattern: `job-${i + 1}-{index}` },
      }),
    ),
  );
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length) throw new Error(`${failed.length} of ${jobs} jobs failed: ${String((failed[0]!.reason as Error)?.message ?? failed[0]!.reason)}`);
  const files = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.files : []));
  const recovered = results.filter((r) => r.status === 'fulfilled' && r.value.recovered).length;
  if (recovered) throw new Error(`${recovered} job(s) left images in the recovery folder`);
  return { files: files.length, _files: files } as Partial<WorkerResult>;
}

export async function concurrentScenario(ctx: BenchContext): Promise<ScenarioReport> {
  const imageMiB = ctx.quick ? 1 : 8;
  ctx.emulator.state.clearFaults();
  ctx.emulator.state.armFault({ fault: 'large', times: -1, imageBytes: imageMiB * MiB });
  const runs: WorkerResult[] = [];
  const wrong: string[] = [];
  try {
    for (let run = 0; run < runsOf(ctx); run++) {
      const workDir = path.join(ctx.tmp, `concurrent-${run}`);
      ctx.takeExpected();
      const task: WorkerTask = {
        kind: 'concurrent',
        baseUrl: ctx.emulator.url,
        apiKey: ctx.emulator.keys.unlimited,
        workDir,
        model: 'prism-2',
        prompt: 'benchmark: together',
        size: '256x256',
        jobs: JOBS,
      };
      const result = await ctx.runWorker(task);
      // Jobs reach the emulator in any order: compare the sets of images.
      const expected = ctx.takeExpected().sort();
      const saved = [...(result.sha256 ?? [])].sort();
      if (result.ok && (saved.length !== JOBS || saved.some((h, i) => h !== expected[i])))
        wrong.push(`run ${run + 1}: ${saved.length} images saved, ${expected.length} sent, or bytes differ`);
      runs.push(result);
      await fs.rm(workDir, { recursive: true, force: true });
      ctx.log(
        `  concurrent ${JOBS} x ${imageMiB} MiB run ${run + 1}: ${runNote(result, (r) => `${fmtS(r.wallMs)}, +${(r.peakRssMb - r.idleRssMb).toFixed(0)} MB, loop ${r.maxLoopDelayMs.toFixed(0)} ms`)}`,
      );
    }
  } finally {
    ctx.emulator.state.clearFaults();
  }
  const good = runs.filter((r) => r.ok);
  const title = `${JOBS} concurrent jobs, 1 x ${imageMiB} MiB each, one process`;
  const lines = [
    `${pad(title, 52)}${lpad('wall', 9)}${lpad('idle RSS', 10)}${lpad('peak RSS', 10)}${lpad('peak−idle', 11)}${lpad('max loop delay (p99)', 22)}${lpad('probe lag (own)', 17)}`,
  ];
  const targets: BenchTarget[] = [];
  if (!good.length) {
    lines.push(`${pad('extension (ImageJobService.run x 20)', 52)}FAILED: ${runs[0]?.error?.split('\n')[0]!.slice(0, 110)}`);
    for (const name of ['peak RSS − idle', 'max event-loop delay', 'images correct'])
      targets.push({ name: `${JOBS} concurrent jobs: ${name}`, value: 'failed', target: '', pass: false });
    return { lines, targets, json: { imageMiB, runs } };
  }
  const over = median(good.map((r) => r.peakRssMb - r.idleRssMb));
  const loop = median(good.map((r) => r.maxLoopDelayMs));
  const raw = median(good.map((r) => r.rawLoopMaxMs ?? NaN));
  const p99 = median(good.map((r) => r.p99LoopDelayMs ?? 0));
  const own = good.every((r) => r.selfLagMs !== undefined) ? median(good.map((r) => r.selfLagMs!)) : undefined;
  lines.push(
    pad('extension (ImageJobService.run x 20, Promise.all)', 52) +
      lpad(fmtS(median(good.map((r) => r.wallMs))), 9) +
      lpad(`${median(good.map((r) => r.idleRssMb)).toFixed(0)} MB`, 10) +
      lpad(`${median(good.map((r) => r.peakRssMb)).toFixed(0)} MB`, 10) +
      lpad(`+${over.toFixed(0)} MB`, 11) +
      lpad(`${loop.toFixed(0)} ms (${p99.toFixed(0)})`, 22) +
      lpad(`${median(good.map((r) => r.probeLagMs)).toFixed(0)} ms (${own === undefined ? '?' : Math.max(0, own).toFixed(0)})`, 17),
  );
  lines.push(`  (median of ${runsOf(ctx)} run(s); 20 paid requests in flight at once against the emulator in the bench process)`);
  targets.push({
    name: `${JOBS} concurrent jobs: peak RSS − idle`,
    value: `+${over.toFixed(0)} MB`,
    target: `≤ +${TARGET_RSS_OVER_IDLE_MB} MB`,
    pass: over <= TARGET_RSS_OVER_IDLE_MB,
  });
  targets.push({
    name: `${JOBS} concurrent jobs: max event-loop delay`,
    value: `${loop.toFixed(0)} ms (histogram max ${raw.toFixed(0)})`,
    target: `≤ ${TARGET_LOOP_DELAY_MS} ms`,
    pass: loop <= TARGET_LOOP_DELAY_MS,
  });
  if (own !== undefined)
    targets.push({
      name: `${JOBS} concurrent jobs:   info: own loop delay, CPU waits removed`,
      value: `${Math.max(0, own).toFixed(0)} ms (+5 ms probe)`,
      target: `(≤ ${TARGET_LOOP_DELAY_MS} ms)`,
      pass: undefined,
    });
  targets.push({
    name: `${JOBS} concurrent jobs: all images correct`,
    value: wrong[0] ?? `${JOBS * good.length} images match`,
    target: 'SHA-256 equal',
    pass: wrong.length === 0 && good.length === runs.length,
  });
  return { lines, targets, json: { imageMiB, over, loop, p99, runs } };
}
