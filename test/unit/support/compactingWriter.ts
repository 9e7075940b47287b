// A process that writes the results journal as a window does (the real HistoryStore), changing its
// own results until the journal is long enough to be compacted, and that stops itself (SIGSTOP)
// inside that compaction, at the point its task names: once the new file it writes appears beside
// the journal (seen by watching the folder: no seam of the journal's code), or at one of the
// journal's own pause points. Another process then takes the stale lock over and writes; the
// parent wakes this one (SIGCONT), and it reports each of its results' last state over IPC.
import { fork } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import * as path from 'node:path';
import { HistoryStore } from '../../../src/jobs/results/history';
import type { JournalPausePoint } from '../../../src/jobs/results/journalFile';
import * as resultsCode from '../../../src/jobs/results/resultsBundle';

/** Where in its compaction the writer stops: 'new file made' is a fact of the folder; the others are the journal's pause points. */
export type CompactionPause = 'new file made' | Extract<JournalPausePoint, 'compaction-written' | 'compaction-checked'>;

export interface CompactingWriterTask {
  file: string;
  /** Its results' prompts start with this. */
  name: string;
  results: number;
  /** The journal's lease stale time, ms, as every writer of the soak has it. */
  staleMs: number;
  pauseAt: CompactionPause;
}

export interface CompactingWriterReport {
  /** id → the cost of its last state. */
  last: Record<string, number>;
  updates: number;
  /** What its journal told the log (a lease lost, a compaction left undone). */
  warnings: string[];
}

type Message = { ok: true; report: CompactingWriterReport } | { ok: false; error: string };

/** Past this many changes without a compaction paused, something else compacted: the writer gives up. */
const MOST_UPDATES = 4000;

if (require.main === module) {
  process.once('message', (task: CompactingWriterTask) => {
    void write(task).then(
      (report) => process.send!({ ok: true, report } satisfies Message, () => process.exit(0)),
      (error: unknown) => process.send!({ ok: false, error: String(error instanceof Error ? error.stack : error) } satisfies Message, () => process.exit(1)),
    );
  });
}

async function write(task: CompactingWriterTask): Promise<CompactingWriterReport> {
  let paused = false;
  const stopHere = () => {
    paused = true;
    process.kill(process.pid, 'SIGSTOP');
  };
  const warnings: string[] = [];
  const store = new HistoryStore(task.file, {
    load: () => resultsCode,
    warn: (message) => warnings.push(message),
    journal: { staleMs: task.staleMs, pause: async (at) => void (!paused && at === task.pauseAt && stopHere()) },
  });
  // This process's rewrite of the journal (replaceFile.ts: `<journal>.<pid>.<random>.tmp`), seen while it is written:
  // its rename comes only after more turns of the event loop (written, synced, closed), so the stop lands before it.
  const folder = path.dirname(task.file);
  const mine = `${path.basename(task.file)}.${process.pid}.`;
  const watcher = watch(folder, (_event, name) => {
    if (paused || task.pauseAt !== 'new file made' || !name?.startsWith(mine) || !name.endsWith('.tmp')) return;
    if (existsSync(path.join(folder, name))) stopHere();
  });
  try {
    const ids: string[] = [];
    for (let i = 0; i < task.results; i++) {
      const entry = await store.add({ request: { model: 'sketch-mini', prompt: `${task.name} result ${i + 1}` }, model: 'sketch-mini', files: [], costRub: 0 });
      ids.push(entry.id);
    }
    const last: Record<string, number> = Object.fromEntries(ids.map((id) => [id, 0]));
    let updates = 0;
    // Each change is a line: past 1000 lines, more than twice the results, the change that adds one compacts.
    while (!paused) {
      if (updates >= MOST_UPDATES) throw new Error(`${updates} changes and no compaction of this writer paused (another process compacted?)`);
      const id = ids[updates % ids.length]!;
      const cost = ++updates / 100;
      await store.update(id, { costRub: cost });
      last[id] = cost;
    }
    await store.close();
    return { last, updates, warnings };
  } finally {
    watcher.close();
  }
}

export interface CompactingWriter {
  pid: number;
  report: Promise<CompactingWriterReport>;
  /** Ends the process (SIGCONT, then SIGKILL), when a test fails midway. */
  kill(): void;
}

export function startCompactingWriter(task: CompactingWriterTask): CompactingWriter {
  const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const report = new Promise<CompactingWriterReport>((resolve, reject) => {
    child.once('message', (message: Message) => (message.ok ? resolve(message.report) : reject(new Error(message.error))));
    child.once('exit', (code, signal) => reject(new Error(`the compacting writer exited (${code ?? signal}) without its report`)));
  });
  report.catch(() => undefined);
  child.send(task);
  return {
    pid: child.pid!,
    report,
    kill: () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    },
  };
}
