// How fast this machine's cores are right now, as the CPU time of one fixed piece of work: the same
// machine type differed by 13-15 % of CPU for unchanged layers from one hour to the next, so a run's
// CPU figures are only comparable with the gauge beside them. CPU time, not wall: other processes and
// a CPU quota make the work wait, not cost more; a slower core (or one whose caches a neighbour
// shares) makes it cost more, as it does the layers.
import { createHash } from 'crypto';
import { deflateSync } from 'zlib';

/** Runs of the work per reading; the median is the reading (one run is disturbed by a page fault storm or a migration). */
const RUNS = 3;

/** Fixed data: 8 MiB of bytes that compress about as an image's do, and 20,000 results as the journal holds them. */
function referenceData(): { bytes: Buffer; results: { id: string; prompt: string; model: string; costRub: number }[] } {
  const bytes = Buffer.alloc(8 << 20);
  let x = 2463534242;
  for (let i = 0; i < bytes.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = (x >>> 0) & (i % 7 === 0 ? 0xff : 0x1f);
  }
  const results = Array.from({ length: 20_000 }, (_, i) => ({
    id: `result-${i}`,
    prompt: `Result ${i}: a harbour at noon`,
    model: i % 2 ? 'sketch-mini' : 'aurora-1',
    costRub: i / 100,
  }));
  return { bytes, results };
}

/** The work: what the suites do most in their own processes (hashing, compressing, JSON), single-threaded. */
function referenceWork(data: ReturnType<typeof referenceData>): void {
  for (let i = 0; i < 4; i++) createHash('sha256').update(data.bytes).digest();
  deflateSync(data.bytes, { level: 6 });
  for (let i = 0; i < 3; i++) JSON.parse(JSON.stringify(data.results));
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

/** The CPU milliseconds the fixed work takes now (median of RUNS): lower is a faster machine. */
export function readSpeedGauge(): number {
  const data = referenceData();
  referenceWork(data); // warm: the code compiled, the buffers' pages touched
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const before = process.cpuUsage();
    referenceWork(data);
    runs.push(cpuMs(process.cpuUsage(before)));
  }
  return runs.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
}

/**
 * The summary's line: the gauge at the start and the end of the run, and the layers' CPU in gauges
 * (their CPU seconds over the gauge's mean), the figure that compares runs made at different speeds.
 */
export function speedGaugeLine(startMs: number, endMs: number, layersCpuSeconds: number | undefined): string {
  const mean = (startMs + endMs) / 2;
  const inGauges = layersCpuSeconds === undefined || mean <= 0 ? '' : `; the layers' CPU is ${Math.round((layersCpuSeconds * 1000) / mean)} gauges`;
  return `speed gauge (CPU of a fixed piece of work; lower is a faster machine): ${startMs.toFixed(0)} ms at the start, ${endMs.toFixed(0)} ms at the end${inGauges}`;
}
