// One history entry per job, updated as each image is saved (the studio's gallery reads it).
import * as assert from 'node:assert/strict';
import { HistoryStore, JobHistoryRecord, type KeyValueStore } from '../../src/jobs/history';

function memoryStore(): KeyValueStore {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    // Asynchronous like a Memento, so writes could overtake each other if they were not queued.
    update: (key, value) => new Promise<void>((resolve) => setTimeout(() => (map.set(key, value), resolve()), 5)),
  };
}

describe('JobHistoryRecord', () => {
  const details = { request: { model: 'aurora-1', prompt: 'a fox' }, model: 'aurora-1' };

  it('adds the entry with the first saved image and appends the next ones, then the cost', async () => {
    const history = new HistoryStore(memoryStore());
    let changes = 0;
    history.onDidChange(() => changes++);
    const record = new JobHistoryRecord(history, details);
    const first = record.saved('/w/a-1.png');
    void record.saved('/w/a-2.png');
    await first;
    assert.equal(history.list().length, 1, 'the first image shows before the job ends');
    await record.finish(['/w/a-1.png', '/w/a-2.png', '/w/a-3.png'], { costRub: 12.5, model: 'aurora-1' });
    const entries = history.list();
    assert.equal(entries.length, 1, 'one entry per job');
    assert.deepEqual(entries[0]!.files, ['/w/a-1.png', '/w/a-2.png', '/w/a-3.png']);
    assert.equal(entries[0]!.costRub, 12.5);
    assert.equal(changes, 3);
  });

  it('a job that failed after saving an image keeps that image in the history', async () => {
    const history = new HistoryStore(memoryStore());
    await new JobHistoryRecord(history, details).saved('/w/b-1.png');
    assert.deepEqual(
      history.list().map((e) => e.files),
      [['/w/b-1.png']],
    );
  });

  it('nothing saved: no entry', async () => {
    const history = new HistoryStore(memoryStore());
    await new JobHistoryRecord(history, details).finish([], {});
    assert.deepEqual(history.list(), []);
  });
});
