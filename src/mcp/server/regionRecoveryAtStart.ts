// At the MCP server's start: region edits of its results journal whose process stopped between saving
// the paid answer and pasting it into the original (a server killed, a machine paused) are finished,
// as a window's start finishes them (commands/results/regionRecoveryStart.ts), without sending
// anything. Only in the days after a region edit was sent into the journal (its stamp), only recent
// results. The region code is dist/regionEdit.js, which the server loads anyway (esbuild.mjs). The
// log says what was done.
import * as path from 'node:path';
import { interruptedRegionEdits } from '../../jobs/regionPending';
import { recoverRegionEdits } from '../../jobs/regionEdit';
import type { RegionRecoveryReport } from '../../jobs/regionRecovery';
import type { HistoryStore } from '../../jobs/results/history';

export async function finishInterruptedRegionEdits(
  journal: HistoryStore,
  log: (line: string) => void,
  now = new Date(),
): Promise<RegionRecoveryReport | undefined> {
  const pending = await interruptedRegionEdits(journal, [journal.file], now);
  if (!pending?.length) return undefined;
  const report = await recoverRegionEdits(journal, pending, {});
  const names = (files: string[]) => files.map((f) => path.basename(f)).join(', ');
  for (const done of report.finished) log(`an interrupted region edit is finished (pasted into its original, nothing sent): ${names(done.files)}`);
  for (const kept of report.kept) log(`an interrupted region edit was kept as the gateway gave it (${names(kept.files)}): ${kept.reason}`);
  if (report.busy.length) log(`region edits another process is finishing: ${report.busy.join(', ')}`);
  return report;
}
