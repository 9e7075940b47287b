// A process that writes the results journal as a window does (the real HistoryStore on a shared
// file): it adds results and updates each one several times, so that its compactions run while other
// processes append. Started with fork() by test/unit/journalWriters.test.ts; it reports each result's
// id and last state over IPC, and the parent checks that a fresh reader finds every one of them.
import { fork } from 'node:child_process';
import { HistoryStore } from '../../../src/jobs/results/history';
import * as resultsCode from '../../../src/jobs/results/resultsBundle';

export interface WriterTask {
  file: string;
  name: string;
  results: number;
  /** Updates of each result after it was added (each one a line). */
  updates: number;
  /** Opens the journal again (a window's reload) every this many results. */
  reopenEvery?: number;
  /** The journal of an agent-started MCP server, taken in when the store is first read (as a window's gallery does). */
  agentJournal?: string;
  /** Waits until the parent says go (after every writer is ready), so that all first reads come at once. */
  waitForGo?: boolean;
}

export interface WriterReport {
  name: string;
  /** id → the cost of its last state. */
  last: Record<string, number>;
  tornReports: number;
}

if (require.main === module) {
  process.once('message', (task: WriterTask) => {
    void write(task).then(
      (report) => process.send!({ ok: true, report }, () => process.exit(0)),
      (error: unknown) => process.send!({ ok: false, error: String(error instanceof Error ? error.stack : error) }, () => process.exit(1)),
    );
  });
}

async function write(task: WriterTask): Promise<WriterReport> {
  let tornReports = 0;
  const open = () =>
    new HistoryStore(task.file, {
      load: () => resultsCode,
      onOpened: (r) => (tornReports += r.tornBytes ? 1 : 0),
      warn: (message) => (tornReports += /unfinished last line/.test(message) ? 1 : 0),
      ...(task.agentJournal ? { agentJournal: task.agentJournal } : {}),
    });
  let store = open();
  if (task.waitForGo) {
    const go = new Promise((resolve) => process.once('message', resolve));
    process.send!({ ready: true });
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
      costRub: 0,
    });
    for (let u = 1; u <= task.updates; u++) await store.update(entry.id, { costRub: u });
    last[entry.id] = task.updates;
  }
  await store.close();
  return { name: task.name, last, tornReports };
}

/** Runs one writer process to its end. */
export function runWriter(task: WriterTask, onReady?: (go: () => void) => void): Promise<WriterReport> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (message: { ready?: boolean; ok?: boolean; report?: WriterReport; error?: string }) => {
      if (message.ready) onReady?.(() => child.send('go'));
      else if (message.ok) resolve(message.report!);
      else reject(new Error(message.error));
    });
    child.once('exit', (code) => code !== 0 && reject(new Error(`writer ${task.name} exited with ${code}`)));
    child.send(task);
  });
}
