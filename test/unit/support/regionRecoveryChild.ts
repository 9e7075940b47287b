// A process that starts as a window does and finishes the interrupted region edits of a journal
// (src/jobs/regionRecovery.ts), told to go over IPC so that two start at once; it answers with its report.
// With `stopAtFence` it stops itself (SIGSTOP) with a composite written and not renamed, before the
// lease's fence, as a machine pauses a process there; the parent wakes it with SIGCONT. With `live`
// it is the window of the edit itself instead, finishing it (finishRegionEdit), and answers with its outcome.
//   parent: const report = await runRecoveryChild(journal, paintedDir, lockDir, go)
import { fork } from 'node:child_process';
import type { RegionRecoveryReport } from '../../../src/jobs/regionRecovery';
import type { ImageModel } from '../../../src/core/gateway/types';
import type { JobResult } from '../../../src/jobs/jobResult';
import { finishRegionEdit, planRegionEdit, type RegionOutcome, recoverRegionEdits } from '../../../src/jobs/regionEdit';
import { pendingRegionEdits } from '../../../src/jobs/regionPending';
import { HistoryStore } from '../../../src/jobs/results/history';
import { SharedJournal } from '../../../src/jobs/results/journalFile';
import { journalLine, ResultsIndex } from '../../../src/jobs/results/resultsIndex';

/** Starts the child; it reads the journal, says 'ready', and recovers when `go` resolves. */
export function runRecoveryChild(
  journal: string,
  paintedDir: string,
  lockDir: string,
  go: Promise<void>,
  options: ChildOptions = {},
): { pid: number; ready: Promise<void>; report: Promise<RegionRecoveryReport> } {
  const child = fork(__filename, [journal, paintedDir, lockDir, JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let readyResolve!: () => void;
  const ready = new Promise<void>((resolve) => (readyResolve = resolve));
  const report = new Promise<RegionRecoveryReport>((resolve, reject) => {
    // (a live edit's child resolves with its RegionOutcome: runLiveEditChild)
    child.on('message', (message: unknown) => {
      if (message === 'ready') {
        readyResolve();
        void go.then(() => child.send('go'));
      } else if ((message as { error?: string }).error) reject(new Error((message as { error: string }).error));
      else resolve(message as RegionRecoveryReport);
    });
    child.once('exit', (code) => reject(new Error(`the recovery child exited (${code})`)));
  });
  return { pid: child.pid!, ready, report };
}

interface ChildOptions {
  staleMs?: number;
  stopAtFence?: boolean;
  /** The edit's own window: its original, painted mask, model and saved answer files. */
  live?: { original: string; mask: string; model: Pick<ImageModel, 'supported_aspect_ratios'>; files: string[] };
}

/** The window of a region edit, finishing it (pasting its saved answer) under the result's lease. */
export function runLiveEditChild(
  journal: string,
  lockDir: string,
  live: NonNullable<ChildOptions['live']>,
  options: Omit<ChildOptions, 'live'> = {},
): { pid: number; report: Promise<RegionOutcome> } {
  const child = runRecoveryChild(journal, '', lockDir, Promise.resolve(), { ...options, live });
  return { pid: child.pid, report: child.report as unknown as Promise<RegionOutcome> };
}

if (require.main === module) {
  const [journal, paintedMasksDir, lockDir, optionsJson] = process.argv.slice(2) as [string, string, string, string];
  const { staleMs, stopAtFence, live } = JSON.parse(optionsJson) as ChildOptions;
  // Stops once: after waking, a second try under a new lease goes through.
  let stopped = false;
  const beforeFence = stopAtFence ? async () => void (!stopped && (stopped = true) && process.kill(process.pid, 'SIGSTOP')) : undefined;
  const store = new HistoryStore(journal, { load: () => ({ SharedJournal, ResultsIndex, journalLine }) });
  void (async () => {
    const now = Date.now();
    const recent = (await store.index()).createdBetween(new Date(now - 86_400_000), new Date(now + 60_000));
    const pending = await pendingRegionEdits(recent.filter((e) => e.region));
    process.send!('ready');
    await new Promise((resolve) => process.once('message', resolve));
    if (live) {
      const plan = await planRegionEdit({ images: [live.original], mask: live.mask, maskShown: 'the painted region', maskKeptBeside: true, model: live.model });
      const outcome = await finishRegionEdit(plan, { files: live.files } as JobResult, undefined, {
        lockDir,
        ...(staleMs && { staleMs }),
        ...(beforeFence && { beforeFence }),
      });
      await store.close();
      process.send!(outcome, () => process.exit(0));
      return;
    }
    const report = await recoverRegionEdits(store, pending, { paintedMasksDir, lockDir, ...(staleMs && { staleMs }), ...(beforeFence && { beforeFence }) });
    await store.close();
    process.send!(report, () => process.exit(0));
  })().catch((error: unknown) => process.send!({ error: String(error) }, () => process.exit(1)));
}
