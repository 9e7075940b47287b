// What a test run leaves for the test chain (testAll.ts) and the flake check (stress.ts): one JSON
// line per mocha run (counts, seconds, each test's result), written by summaryReporter.ts to the
// file named by GATEWAY_IMAGES_TEST_SUMMARY, under the layer name in GATEWAY_IMAGES_TEST_LAYER.
import * as fs from 'fs';

export const SUMMARY_FILE_ENV = 'GATEWAY_IMAGES_TEST_SUMMARY';
export const LAYER_ENV = 'GATEWAY_IMAGES_TEST_LAYER';

export type TestState = 'passed' | 'failed' | 'pending';

export interface RunSummary {
  layer: string;
  passed: number;
  failed: number;
  pending: number;
  seconds: number;
  /**
   * Each test's result, how long it ran and the CPU its layer used meanwhile (cpuMs: every process of the
   * layer's control group, where the layer has one; hooks not included).
   */
  tests: { title: string; state: TestState; ms?: number; cpuMs?: number; error?: string }[];
  /** The before and after hooks that took a second or more (a window opened or closed), with the same figures. */
  hooks?: { title: string; ms: number; cpuMs?: number }[];
}

/** Every run summary in `file` (one JSON object per line; a torn last line is skipped). */
export function readSummaries(file: string): RunSummary[] {
  if (!fs.existsSync(file)) return [];
  const runs: RunSummary[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      runs.push(JSON.parse(line) as RunSummary);
    } catch {
      // A run killed while writing its line: its layer reports no summary, which counts as a failure.
    }
  }
  return runs;
}
