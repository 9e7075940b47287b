// The results journal inside VS Code against the emulator: a 520-line prompt file run twice pays
// for 520 lines in all (the old 500-entry history paid 20 again), the old workspace-state history
// is migrated, and a torn last line of the journal is skipped and reported.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { api, paidRequests, prepareSuite, workspaceRoot } from './support';

/** A result of a journal line: its summary, a tab, its details. */
function result(line: string): Record<string, unknown> {
  const [summary, details] = line.split('\t');
  return { ...(JSON.parse(summary!) as { put: Record<string, unknown> }).put, ...(JSON.parse(details!) as Record<string, unknown>) };
}

describe('Results journal', function () {
  this.timeout(240_000);
  let dir: string;

  before(async () => {
    await prepareSuite();
    dir = path.join(workspaceRoot(), 'results-test');
    fs.mkdirSync(dir, { recursive: true });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function testing() {
    const hooks = (await api()).testing;
    assert.ok(hooks, 'the extension runs in test mode');
    return hooks;
  }

  it('a 520-line prompt file run twice sends 520 paid requests in all', async () => {
    const file = path.join(dir, 'many.jsonl');
    // The cheapest model (sketch-mini, 0.8–1.2 ₽) at the smallest size: the run is about HTTP and disk.
    const lines = Array.from({ length: 520 }, (_, i) => JSON.stringify({ prompt: `tile ${i + 1}`, model: 'sketch-mini', size: '64x64' }));
    fs.writeFileSync(file, lines.join('\n'));
    const outputDirectory = path.join(dir, 'many-out');
    const gateway = await api();
    const before = (await paidRequests()).length;
    const started = Date.now();
    const first = await gateway.generateFromFile({ file, concurrency: 6, outputDirectory });
    const firstMs = Date.now() - started;
    assert.strictEqual(first.done, 520);
    assert.strictEqual((await paidRequests()).length - before, 520);
    const second = await gateway.generateFromFile({ file, concurrency: 6, outputDirectory });
    assert.strictEqual(second.skipped, 520, 'every line is found in the journal');
    assert.strictEqual(second.done, 0);
    assert.strictEqual((await paidRequests()).length - before, 520, 'the second run pays for nothing');
    console.log(`      520 lines: first run ${firstMs} ms, whole test ${Date.now() - started} ms`);
  });

  it('migrates the old workspace-state history once: its results are found again, nothing is paid twice', async () => {
    const file = path.join(dir, 'old.txt');
    fs.writeFileSync(file, 'an old cat');
    const outputDirectory = path.join(dir, 'old-out');
    const gateway = await api();
    const first = await gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    assert.strictEqual(first.done, 1);
    const hooks = await testing();
    // What the 500-entry history held: the same result (a new id), and one whose file is gone.
    const journal = fs.readFileSync(hooks.resultsJournal, 'utf8').trim().split('\n');
    const recorded = result(journal.at(-1)!);
    fs.writeFileSync(hooks.resultsJournal, journal.slice(0, -1).join('\n') + (journal.length > 1 ? '\n' : ''));
    const legacy = [
      { ...recorded, id: 'legacy-1' },
      { ...recorded, id: 'legacy-2', files: [path.join(outputDirectory, 'gone.png')], batch: undefined },
    ];
    const report = await hooks.reopenResults(legacy);
    assert.strictEqual(report.migrated, 2);
    const migrated = fs
      .readFileSync(hooks.resultsJournal, 'utf8')
      .trim()
      .split('\n')
      .map((line) => result(line).id);
    assert.deepStrictEqual(migrated.slice(0, 2), ['legacy-2', 'legacy-1'], 'older results first, at the start of the journal');
    const before = (await paidRequests()).length;
    const again = await gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    assert.strictEqual(again.skipped, 1, 'the migrated result is found');
    assert.strictEqual((await paidRequests()).length - before, 0);
    assert.strictEqual((await hooks.reopenResults()).migrated, 0, 'the old array was cleared: migrated once');
  });

  it('a torn last line of the journal is skipped and reported; the results before it stay', async () => {
    const file = path.join(dir, 'torn.txt');
    fs.writeFileSync(file, 'a torn dog');
    const outputDirectory = path.join(dir, 'torn-out');
    const gateway = await api();
    await gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    const hooks = await testing();
    const torn = '{"put":{"id":"cut short","createdAt":"2026-';
    fs.appendFileSync(hooks.resultsJournal, torn);
    const report = await hooks.reopenResults();
    assert.strictEqual(report.tornBytes, Buffer.byteLength(torn));
    assert.ok(fs.readFileSync(hooks.resultsJournal, 'utf8').endsWith('\n'), 'the torn bytes are cut off');
    const before = (await paidRequests()).length;
    const again = await gateway.generateFromFile({ file, model: 'sketch-mini', outputDirectory });
    assert.strictEqual(again.skipped, 1);
    assert.strictEqual((await paidRequests()).length - before, 0);
    assert.strictEqual((await hooks.reopenResults()).tornBytes, 0, 'the next append was whole');
  });
});
