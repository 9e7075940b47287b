// The generation rows (10 x 24 MiB and the 671 MB answer: the limit, the naive json() client and
// the extension's job service, each in its own process) and the uploads to the emulator: running
// them, their tables and their targets.
import { promises as fs, rmSync } from 'node:fs';
import * as path from 'node:path';
import type { RunningEmulator } from '../emulator';
import { compareHashes, runWorker, type RowStats, summarise, takeExpected } from './rowRunner';
import { type BenchTarget, fmtS, lpad, median, MiB, pad, TARGET_LOOP_GAP_RATIO } from './scenario';
import { makeReference } from './uploadLimit';
import type { WorkerResult, WorkerTask } from './workerTypes';

const TARGET_WALL_RATIO = 1.3;

const TARGET_RSS_OVER_LIMIT_MB = 64;

const TARGET_UPLOAD_RSS_MB = 64;

export interface GenerationScenario {
  title: string;
  images: number;
  imageBytes: number;
  bodyBytes: number;
  rows: { limit: RowStats; naive: RowStats; extension: RowStats };
}

const NAIVE_LABEL = 'naive (json() + Buffer.from + writeFile)';

const LIMIT_LABEL = 'limit (drain + decode + write, no parsing)';

const EXTENSION_LABEL = 'extension (ImageJobService.run, streaming)';

export async function generationScenario(
  emulator: RunningEmulator,
  tmp: string,
  images: number,
  imageMiB: number,
  runs: number,
  naiveRuns: number,
): Promise<GenerationScenario> {
  const imageBytes = imageMiB * MiB;
  emulator.state.clearFaults();
  emulator.state.armFault({ fault: 'large', times: -1, imageBytes });
  const base: Omit<WorkerTask, 'kind' | 'workDir'> = {
    baseUrl: emulator.url,
    apiKey: emulator.keys.unlimited,
    model: 'prism-2',
    prompt: 'benchmark: a lighthouse at dusk',
    n: images,
    size: '256x256',
  };
  const results = { limit: [] as WorkerResult[], naive: [] as WorkerResult[], extension: [] as WorkerResult[] };
  const checks = { limit: [] as (string | undefined)[], naive: [] as (string | undefined)[], extension: [] as (string | undefined)[] };
  for (let run = 0; run < runs; run++) {
    // Interleaved, so that drift of the machine spreads over all rows.
    for (const kind of ['limit', 'naive', 'extension'] as const) {
      if (kind === 'naive' && run >= naiveRuns) continue;
      const workDir = path.join(tmp, `${kind}-${imageMiB}-${run}`);
      takeExpected();
      const result = await runWorker({ ...base, kind, workDir });
      const expected = takeExpected();
      results[kind].push(result);
      if (kind === 'limit') {
        const imageTotal = imageBytes * images;
        checks.limit.push(undefined);
        if (result.ok && (result.bytesWritten ?? 0) < imageTotal) result.error = `wrote ${result.bytesWritten} bytes, fewer than the ${imageTotal} image bytes`;
      } else {
        checks[kind].push(result.ok ? compareHashes(result, expected) : undefined);
      }
      rmSync(workDir, { recursive: true, force: true });
      process.stderr.write(
        `  ${kind} ${images}x${imageMiB} MiB run ${run + 1}: ${result.ok ? `${(result.wallMs / 1000).toFixed(2)} s, peak ${result.peakRssMb.toFixed(0)} MB` : `failed: ${result.error?.slice(0, 100)}`}\n`,
      );
    }
  }
  const bodyBytes = images * 4 * Math.ceil(imageBytes / 3);
  return {
    title: `Generation ${images} x ${imageMiB} MiB (body ${(bodyBytes / 1e6).toFixed(1)} MB)`,
    images,
    imageBytes,
    bodyBytes,
    rows: {
      limit: summarise(LIMIT_LABEL, results.limit, checks.limit),
      naive: summarise(NAIVE_LABEL, results.naive, checks.naive),
      extension: summarise(EXTENSION_LABEL, results.extension, checks.extension),
    },
  };
}

interface UploadRow extends RowStats {
  transport: string;
  overIdleMb: number;
}

export async function uploadScenario(emulator: RunningEmulator, tmp: string, runs: number, bytes: number): Promise<{ title: string; rows: UploadRow[] }> {
  emulator.state.clearFaults();
  const dir = path.join(tmp, 'references');
  await fs.mkdir(dir, { recursive: true });
  const references: string[] = [];
  for (let i = 0; i < 4; i++) {
    const file = path.join(dir, `reference-${i + 1}.png`);
    await makeReference(file, bytes);
    references.push(file);
  }
  const rows: UploadRow[] = [];
  for (const transport of ['input_references', 'multipart'] as const) {
    const results: WorkerResult[] = [];
    for (let run = 0; run < runs; run++) {
      const workDir = path.join(tmp, `upload-${transport}-${run}`);
      const result = await runWorker({
        kind: 'upload',
        baseUrl: emulator.url,
        apiKey: emulator.keys.unlimited,
        workDir,
        model: 'mosaic-edit',
        prompt: 'benchmark: combine these',
        n: 1,
        references,
        transport,
      });
      takeExpected();
      if (result.ok && result.files !== 1) {
        result.ok = false;
        result.error = `expected 1 saved image, got ${result.files}`;
      }
      results.push(result);
      rmSync(workDir, { recursive: true, force: true });
      process.stderr.write(
        `  upload ${transport} run ${run + 1}: ${result.ok ? `${(result.wallMs / 1000).toFixed(2)} s, +${(result.peakRssMb - result.idleRssMb).toFixed(0)} MB` : `failed: ${result.error}`}\n`,
      );
    }
    const label = transport === 'input_references' ? 'generateWithReferences (JSON, data: URLs from disk)' : 'edit (multipart from disk)';
    const stats = summarise(label, results, []);
    const good = results.filter((r) => r.ok);
    rows.push({ ...stats, transport, overIdleMb: median((good.length ? good : results).map((r) => r.peakRssMb - r.idleRssMb)) });
  }
  return { title: `Upload 4 x ${bytes.toLocaleString('en')} bytes (mosaic-edit, n=1)`, rows };
}

const fmtMb = (mb: number) => `${mb.toFixed(0)} MB`;

export const fmtDelta = (mb: number) => `${mb >= 0 ? '+' : '−'}${Math.abs(mb).toFixed(0)} MB`;

function generationTable(s: GenerationScenario, runs: number): string[] {
  const lines: string[] = [];
  const limit = s.rows.limit;
  lines.push(
    `${pad(s.title, 50)}${lpad('wall', 9)}${lpad('CPU', 9)}${lpad('peak RSS', 10)}${lpad('idle RSS', 10)}${lpad('RSS-limit', 11)}${lpad('max loop delay (p99)', 22)}${lpad('probe lag (own)', 17)}${lpad('CPU wait', 10)}${lpad('wall/limit', 12)}`,
  );
  for (const row of [s.rows.limit, s.rows.naive, s.rows.extension]) {
    const n = `${row.runs.length} run${row.runs.length === 1 ? '' : 's'}`;
    if (!row.ok && row.runs.every((r) => !r.ok)) {
      lines.push(`${pad(row.label, 50)}FAILED (${n}): ${row.error?.split('\n')[0]!.slice(0, 110)}`);
      continue;
    }
    const isLimit = row === limit;
    let line =
      pad(row.label, 50) +
      lpad(fmtS(row.wallMs), 9) +
      lpad(fmtS(row.cpuMs), 9) +
      lpad(fmtMb(row.peakRssMb), 10) +
      lpad(fmtMb(row.idleRssMb), 10) +
      lpad(isLimit ? '—' : fmtDelta(row.peakRssMb - limit.peakRssMb), 11) +
      lpad(`${row.maxLoopDelayMs.toFixed(0)} ms (${row.p99LoopDelayMs.toFixed(0)})`, 22) +
      lpad(`${row.probeLagMs.toFixed(0)} ms (${row.selfLagMs === undefined ? '?' : Math.max(0, row.selfLagMs).toFixed(0)})`, 17) +
      lpad(row.runqueueWaitMs === undefined ? '?' : fmtS(row.runqueueWaitMs), 10) +
      lpad((row.wallMs / limit.wallMs).toFixed(2), 12);
    if (row.verified !== undefined) line += `   saved images ${row.verified ? 'match the emulator (SHA-256)' : `WRONG: ${row.verifyNote}`}`;
    if (!row.ok) line += `   (${row.runs.filter((r) => !r.ok).length} of ${row.runs.length} runs failed: ${row.error?.slice(0, 80)})`;
    lines.push(line);
  }
  lines.push(
    `  (median of ${runs} runs per row; the naive row ran ${s.rows.naive.runs.length} time(s). Peak RSS: the row's process only (VmHWM reset at idle).`,
  );
  lines.push(
    "   CPU: user+system time of the row's process. Loop delay: monitorEventLoopDelay({resolution: 10}) max minus its 10 ms interval (an idle process reads 0-3 ms).",
  );
  lines.push('   Probe lag: a setInterval(5 ms) probe; (own) = minus the time its main thread was runnable but waiting for a CPU (schedstat),');
  lines.push('   CPU wait = that waiting in total: the share of the delays a loaded machine adds, not the row.)');
  return lines;
}

export interface OlderRows {
  big: GenerationScenario;
  huge: GenerationScenario;
  uploads: { title: string; rows: UploadRow[] };
}

/** The generation and upload rows: their tables and targets. */
export function olderReport({ big, huge, uploads }: OlderRows, runs: number, lines: string[], targets: BenchTarget[]): void {
  for (const s of [big, huge]) {
    lines.push(...generationTable(s, s === big ? runs : Math.min(runs, 2)), '');
    const ext = s.rows.extension;
    const limit = s.rows.limit;
    const tag = `${s.images} x ${s.imageBytes / MiB} MiB`;
    if (ext.ok && limit.ok) {
      targets.push({
        name: `[${tag}] extension wall / limit`,
        value: (ext.wallMs / limit.wallMs).toFixed(2),
        target: `≤ ${TARGET_WALL_RATIO}`,
        pass: ext.wallMs <= TARGET_WALL_RATIO * limit.wallMs,
        time: true,
      });
      targets.push({
        name: `[${tag}] extension peak RSS − limit peak RSS`,
        value: fmtDelta(ext.peakRssMb - limit.peakRssMb),
        target: `≤ +${TARGET_RSS_OVER_LIMIT_MB} MB`,
        pass: ext.peakRssMb - limit.peakRssMb <= TARGET_RSS_OVER_LIMIT_MB,
      });
      const gapRatio = ext.rawLoopMaxMs / limit.rawLoopMaxMs;
      targets.push({
        name: `[${tag}] extension longest loop gap / limit's`,
        value: `${gapRatio.toFixed(2)} (${ext.rawLoopMaxMs.toFixed(0)} / ${limit.rawLoopMaxMs.toFixed(0)} ms)`,
        target: `≤ ${TARGET_LOOP_GAP_RATIO}`,
        pass: gapRatio <= TARGET_LOOP_GAP_RATIO,
        time: true,
      });
      targets.push({
        name: `[${tag}]   info: max event-loop delay`,
        value: `${ext.maxLoopDelayMs.toFixed(0)} ms (limit ${limit.maxLoopDelayMs.toFixed(0)} ms)`,
        target: '',
        pass: undefined,
      });
      if (ext.selfLagMs !== undefined) {
        targets.push({
          name: `[${tag}]   info: own loop delay, CPU waits removed`,
          value: `${Math.max(0, ext.selfLagMs).toFixed(0)} ms (+5 ms probe)`,
          target: '',
          pass: undefined,
        });
      }
    } else {
      targets.push({ name: `[${tag}] extension row`, value: ext.error ?? limit.error ?? 'failed', target: 'succeeds', pass: false });
    }
    if (s === huge) {
      targets.push({
        name: `[${tag}] ${(s.bodyBytes / 1e6).toFixed(0)} MB response saved correctly`,
        value: ext.ok && ext.verified ? 'all images match' : (ext.verifyNote ?? ext.error ?? 'not verified'),
        target: 'SHA-256 equal',
        pass: ext.ok && ext.verified === true,
      });
    } else {
      targets.push({
        name: `[${tag}] extension images correct`,
        value: ext.ok && ext.verified ? 'all images match' : (ext.verifyNote ?? ext.error ?? 'not verified'),
        target: 'SHA-256 equal',
        pass: ext.ok && ext.verified === true,
      });
    }
  }

  lines.push(`${pad(uploads.title, 56)}${lpad('wall', 9)}${lpad('idle RSS', 10)}${lpad('peak RSS', 11)}${lpad('peak−idle', 11)}${lpad('max loop delay', 16)}`);
  for (const row of uploads.rows) {
    if (!row.ok && row.runs.every((r) => !r.ok)) {
      lines.push(`${pad(row.label, 56)}FAILED: ${row.error?.split('\n')[0]!.slice(0, 120)}`);
      targets.push({ name: `upload ${row.transport}: peak RSS − idle`, value: 'failed', target: `≤ ${TARGET_UPLOAD_RSS_MB} MB`, pass: false });
      continue;
    }
    lines.push(
      pad(row.label, 56) +
        lpad(fmtS(row.wallMs), 9) +
        lpad(fmtMb(row.idleRssMb), 10) +
        lpad(fmtMb(row.peakRssMb), 11) +
        lpad(fmtDelta(row.overIdleMb), 11) +
        lpad(`${row.maxLoopDelayMs.toFixed(0)} ms`, 16),
    );
    targets.push({
      name: `upload ${row.transport}: peak RSS − idle`,
      value: fmtDelta(row.overIdleMb),
      target: `≤ ${TARGET_UPLOAD_RSS_MB} MB`,
      pass: row.ok && row.overIdleMb <= TARGET_UPLOAD_RSS_MB,
    });
  }
  lines.push(`  (median of ${runs} runs; wall includes the emulator buffering, parsing and checking the upload)`, '');
}
