// A process that writes the results journal as a window does (the real HistoryStore on a shared
// file): it adds results and updates each one several times, so that its compactions run while other
// processes append. Started with fork() by test/unit/journalWriters.test.ts; it reports each result's
// id and last state over IPC, and the parent checks that a fresh reader finds every one of them.
// It can stop at a pause point of the journal (journalFile.ts): it tells the parent, which stops it
// for real (SIGSTOP) past the lease's stale time, lets another writer act, and resumes it (SIGCONT).
import { fork } from 'node:child_process';
import { HistoryStore } from '../../../src/jobs/results/history';
import type { JournalPausePoint } from '../../../src/jobs/results/journalFile';
import * as resultsCode from '../../../src/jobs/results/resultsBundle';

export interface WriterTask {
  file: string;
  name: string;
  results: number;
  /** Updates of each result after it was added (each one a line). */
  updates: number;
  /** The cost each result is added with (its updates then set 1, 2, …). */
  cost?: number;
  /** Opens the journal again (a window's reload) every this many results. */
  reopenEvery?: number;
  /** The journal of an agent-started MCP server, taken in when the store is first read (as a window's gallery does). */
  agentJournal?: string;
  /** Waits until the parent says go (after every writer is ready), so that all first reads come at once. */
  waitForGo?: boolean;
  /** The journal's lease goes stale after this long (tests shorten it). */
  staleMs?: number;
  /** The first time the journal reaches this point, the writer tells the parent and waits to be resumed. */
  pauseAt?: JournalPausePoint;
}

export interface WriterReport {
  name: string;
  /** id → the cost of its last state. */
  last: Record<string, number>;
  tornReports: number;
  /** What the store warned of (the log's lines). */
  warnings: string[];
}

/** A writer stopped at its pause point: the parent stops it for real, and resumes it. */
export interface PausedWriter {
  at: JournalPausePoint;
  /** SIGSTOP: its timers stop too, so its lease goes stale. */
  stop(): void;
  /** SIGCONT, then lets it go on from the pause point. */
  resume(): void;
}

type ToParent = { ready: true } | { paused: JournalPausePoint } | { ok: true; report: WriterReport } | { ok: false; error: string };

if (require.main === module) {
  process.once('message', (task: WriterTask) => {
    void write(task).then(
      (report) => send({ ok: true, report }, () => process.exit(0)),
      (error: unknown) => send({ ok: false, error: String(error instanceof Error ? error.stack : error) }, () => process.exit(1)),
    );
  });
}

function send(message: ToParent, then?: () => void): void {
  process.send!(message, undefined, undefined, then);
}

async function write(task: WriterTask): Promise<WriterReport> {
  let tornReports = 0;
  const warnings: string[] = [];
  let pauses = task.pauseAt ? 1 : 0;
  const pause = async (at: JournalPausePoint) => {
    if (at !== task.pauseAt || !pauses) return;
    pauses--;
    const resumed = new Promise((resolve) => process.once('message', resolve));
    send({ paused: at });
    await resumed;
  };
  const open = () =>
    new HistoryStore(task.file, {
      load: () => resultsCode,
      onOpened: (r) => (tornReports += r.tornBytes ? 1 : 0),
      warn: (message) => {
        warnings.push(message);
        tornReports += /unfinished last line/.test(message) ? 1 : 0;
      },
      ...(task.agentJournal ? { agentJournal: task.agentJournal } : {}),
      journal: { pause, ...(task.staleMs ? { staleMs: task.staleMs } : {}) },
    });
  let store = open();
  if (task.waitForGo) {
    const go = new Promise((resolve) => process.once('message', resolve));
    send({ ready: true });
    await go;
  }
  if (task.agentJournal) await store.index();
  const last: Record<string, number> = {};
  for (let i = 0; i < task.results; i++) {
    if (task.reopenEvery && i % task.reopenEvery === 0) {
      await store.close();
      store = open();
    }
    const entry = await store.add({
      request: { model: 'sketch-mini', prompt: `${task.name} ${i}` },
      model: 'sketch-mini',
      files: [`/w/${task.name}-${i}.png`],
      costRub: task.cost ?? 0,
    });
    for (let u = 1; u <= task.updates; u++) await store.update(entry.id, { costRub: u });
    last[entry.id] = task.updates || (task.cost ?? 0);
  }
  await store.close();
  return { name: task.name, last, tornReports, warnings };
}

/** Runs one writer process to its end; `onPaused` gets it when it stops at its pause point. */
export function runWriter(task: WriterTask, on: { ready?: (go: () => void) => void; paused?: (writer: PausedWriter) => void } = {}): Promise<WriterReport> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (message: ToParent) => {
      if ('ready' in message) on.ready?.(() => child.send('go'));
      else if ('paused' in message)
        on.paused?.({
          at: message.paused,
          stop: () => child.kill('SIGSTOP'),
          resume: () => {
            child.kill('SIGCONT');
            child.send('resume');
          },
        });
      else if (message.ok) resolve(message.report);
      else reject(new Error(message.error));
    });
    child.once('exit', (code, signal) => code !== 0 && reject(new Error(`writer ${task.name} exited with ${code ?? signal}`)));
    child.send(task);
  });
}
