// Several at once, inside VS Code: a prompt file started twice at once, an unknown outcome while other
// money moves, a line charged without its images, and Recover telling the journal where it moved a
// JPEG. Every money rule must hold: no line paid twice, no message claiming more than is known.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { WaitingJob } from '../../src/core/files/recoveryFolder';
import { HistoryStore, type HistoryEntry } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { admin, api, captureUi, closeAllEditors, emulatorBalance, paidRequests, prepareSuite, rejectionOf, waitUntil, workspaceRoot } from './support';

interface BatchResultJson {
  done: number;
  skipped: number;
  failed: number;
  notSent: number;
  outcomeUnknown: number;
  report: vscode.Uri;
  lines: { line: number; status: string; files: string[]; error?: string; meanwhile?: boolean }[];
}

/** The results journal as a fresh reader sees it (the journal takes several readers and writers). */
async function journal(): Promise<HistoryEntry[]> {
  const file = (await api()).testing!.resultsJournal;
  const store = new HistoryStore(file, { load: () => resultsCode });
  const index = await store.index();
  return index.createdBetween(new Date(0), new Date(Date.now() + 60_000)).map((s) => index.find(s.id)!);
}

const setting = (name: string, value: unknown) => vscode.workspace.getConfiguration('gatewayImages').update(name, value, vscode.ConfigurationTarget.Global);

describe('Several at once: one account, one prompt file, one journal', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    await prepareSuite();
    dir = path.join(workspaceRoot(), `several-${Date.now()}`);
    fs.mkdirSync(dir, { recursive: true });
  });
  afterEach(async () => {
    await admin('DELETE', 'faults');
    await closeAllEditors();
  });
  after(async () => {
    await setting('requestTimeoutSeconds', undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const promptFile = (name: string, lines: Record<string, unknown>[]) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    return file;
  };

  it('one prompt file started twice at once: one run pays each of its 6 lines once, the other start is refused at once and names it', async () => {
    const file = promptFile(
      'twice.jsonl',
      Array.from({ length: 6 }, (_, i) => ({ prompt: `twice ${i + 1}`, model: 'aurora-1', size: '64x64' })),
    );
    await admin('POST', 'faults', { fault: 'latency', latencyMs: 700, times: -1 });
    const before = (await paidRequests()).length;
    const starts = [0, 1].map(() =>
      Promise.resolve(vscode.commands.executeCommand<BatchResultJson>('gatewayImages.generateFromFile', { file, outputDirectory: dir })),
    );
    const settled = await Promise.allSettled(starts);
    const ran = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error & { kind?: string }] : []));
    assert.strictEqual(ran.length, 1, `runs: ${ran.length}, refusals: ${refused.map((e) => e.message).join(' | ')}`);
    assert.strictEqual(ran[0]!.done, 6);
    assert.strictEqual(refused[0]?.kind, 'run-in-progress');
    assert.match(refused[0].message, /twice\.jsonl is already being run: started at .+, by a command with arguments .*Nothing was sent by this start/);
    const paid = (await paidRequests()).slice(before);
    assert.strictEqual(paid.length, 6, `6 lines, ${paid.length} paid requests`);
    console.log(`      started twice at once: 1 run, 1 refused ("${refused[0].message.slice(0, 90)}…"); 6 lines, ${paid.length} paid requests`);
  });

  it('an answer cut after the gateway charged, while a top-up moves the balance: "charged" is said, never "nothing was charged", and Recover comes before any resend', async () => {
    const ui = captureUi();
    try {
      await admin('POST', 'faults', { fault: 'drop-mid-body' });
      const before = (await paidRequests()).length;
      const failure = rejectionOf(
        vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'cut after the charge', size: '64x64' }),
      );
      // Other money moves at the same moment: the account is topped up as the answer breaks.
      await waitUntil(async () => (await paidRequests()).length > before, 10_000, 'the paid request');
      const error = await failure;
      await admin('POST', 'state', { balance: (await emulatorBalance()) + 100 });
      assert.strictEqual((error as { outcomeUnknown?: boolean }).outcomeUnknown, true);
      await waitUntil(() => ui.records.some((r) => r.kind === 'warning' && /charged/.test(r.text)), 10_000, 'the warning');
      const warning = ui.records.find((r) => r.kind === 'warning' && /charged/.test(r.text))!;
      assert.doesNotMatch(warning.text, /nothing was charged|did not go down/);
      assert.match(warning.text, /The gateway charged for this request: its answer had begun to arrive\./);
      assert.ok(!warning.items.includes('Try Again…'), `actions: ${warning.items.join(', ')}`);
      assert.strictEqual(warning.items[0], 'Recover Images', 'what was paid for comes first');
      const entry = (await journal()).find((e) => e.request.prompt === 'cut after the charge');
      assert.ok(entry?.failed, 'the paid request is in the journal as paid');
      assert.strictEqual(entry.outcomeUnknown, undefined, 'its answer had begun: charged, not unknown');
      console.log(`      cut after the charge, top-up meanwhile: "${warning.text.slice(0, 160)}…" [${warning.items.join(' | ')}]`);
    } finally {
      ui.restore();
    }
  });

  it('cut before its answer while other money moves: "may have been charged" with the balance change as information; the journal entry learns "charge-seen" after the deadline', async () => {
    await setting('requestTimeoutSeconds', 10);
    const ui = captureUi();
    try {
      // The gateway works 12 s; the extension gives up at 10 s; the gateway charges anyway.
      await admin('POST', 'faults', { fault: 'latency', latencyMs: 12_000 });
      await admin('POST', 'faults', { fault: 'charge-on-disconnect' });
      const error = await rejectionOf(
        vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'cut before the answer', size: '64x64' }),
      );
      await admin('POST', 'state', { balance: (await emulatorBalance()) + 100 });
      assert.strictEqual(error.kind, 'timeout');
      await waitUntil(() => ui.records.some((r) => r.kind === 'warning' && /may have been charged/.test(r.text)), 10_000, 'the warning');
      const warning = ui.records.find((r) => r.kind === 'warning' && /may have been charged/.test(r.text))!;
      assert.doesNotMatch(warning.text, /nothing was charged|did not go down/);
      assert.match(warning.text, /other spending on this account .* this does not tell whether it was charged/);
      assert.deepStrictEqual(warning.items, ['Show Account', 'Send Again (Pays Again)…', 'Show Log']);
      const entry = (await journal()).find((e) => e.request.prompt === 'cut before the answer');
      assert.ok(entry?.failed && entry.outcomeUnknown, 'recorded as perhaps paid');
      // One deadline (10 s) after the failure the key's figures are read again.
      await waitUntil(async () => !!(await journal()).find((e) => e.id === entry.id)?.outcomeCheck, 30_000, 'the check after the deadline');
      const checked = (await journal()).find((e) => e.id === entry.id)!.outcomeCheck!;
      assert.strictEqual(checked.verdict, 'charge-seen');
      console.log(`      cut before the answer: "${warning.text.slice(0, 140)}…"; checked after the deadline: ${JSON.stringify(checked)}`);
    } finally {
      ui.restore();
      await setting('requestTimeoutSeconds', undefined);
    }
  });

  it('a prompt-file line charged but whose answer could not be read is held by the next run, named with where its answer waits; sent only when told', async () => {
    const file = promptFile(
      'charged.jsonl',
      [1, 2, 3].map((i) => ({ prompt: `charged ${i}`, model: 'aurora-1', size: '64x64' })),
    );
    await admin('POST', 'faults', { fault: 'truncated-json' });
    const first = await vscode.commands.executeCommand<BatchResultJson>('gatewayImages.generateFromFile', { file, outputDirectory: dir, concurrency: 1 });
    assert.deepStrictEqual(
      first.lines.map((l) => l.status),
      ['outcome-unknown', 'done', 'done'],
    );
    const before = (await paidRequests()).length;
    const again = await vscode.commands.executeCommand<BatchResultJson>('gatewayImages.generateFromFile', { file, outputDirectory: dir });
    const held = again.lines.find((l) => l.line === 1)!;
    assert.strictEqual(held.status, 'failed');
    assert.match(held.error ?? '', /its last request was charged, and its images did not arrive/);
    assert.ok(
      held.files.some((f) => /-answer\.json$/.test(f) && fs.existsSync(f)),
      `where its answer waits: ${held.files.join(', ')}`,
    );
    assert.strictEqual((await paidRequests()).length, before, 'nothing sent again without being told');
    assert.match(fs.readFileSync(again.report.fsPath, 'utf8'), /\]\([^)]*-answer\.json\)/, 'the report links to where its answer waits');
    const told = await vscode.commands.executeCommand<BatchResultJson>('gatewayImages.generateFromFile', {
      file,
      outputDirectory: dir,
      resendInterrupted: true,
    });
    assert.strictEqual(told.lines.find((l) => l.line === 1)!.status, 'done');
    assert.strictEqual((await paidRequests()).length, before + 1);
  });

  it("Recover tells the journal where it moved a line's JPEG: the next run of the file finds it and pays nothing", async () => {
    const blocked = path.join(dir, 'blocked');
    fs.writeFileSync(blocked, 'a file where the folder should be');
    const file = promptFile('jpeg.jsonl', [{ prompt: 'a jpeg line', model: 'aurora-1', size: '64x64', output_format: 'jpeg' }]);
    const first = await vscode.commands.executeCommand<BatchResultJson>('gatewayImages.generateFromFile', { file, outputDirectory: blocked });
    assert.strictEqual(first.done, 1);
    // Recover Unsaved Images, answered as a person would: this job, into a folder of the workspace.
    const into = path.join(dir, 'recovered');
    fs.mkdirSync(into, { recursive: true });
    const window = vscode.window as unknown as Record<string, unknown>;
    const saved = ['showQuickPick', 'showInformationMessage', 'showOpenDialog'].map((name) => [name, window[name]] as const);
    window.showQuickPick = async (items: Thenable<unknown[]> | unknown[]) =>
      ((await items) as { job: WaitingJob }[]).find((i) => i.job.prompt === 'a jpeg line' && i.job.files.some((f) => /\.jpg$/.test(f.suggestedName)));
    window.showInformationMessage = async (message: string) => (/^Where should/.test(message) ? 'Choose Folder…' : undefined);
    window.showOpenDialog = async () => [vscode.Uri.file(into)];
    try {
      await vscode.commands.executeCommand('gatewayImages.recoverImages');
    } finally {
      saved.forEach(([name, original]) => (window[name] = original));
    }
    const moved = fs.readdirSync(into);
    assert.ok(
      moved.some((f) => f.endsWith('.jpg')),
      `moved: ${moved.join(', ')}`,
    );
    const before = (await paidRequests()).length;
    const again = await vscode.commands.executeCommand<BatchResultJson>('gatewayImages.generateFromFile', { file, outputDirectory: dir });
    assert.strictEqual(again.lines[0]!.status, 'skipped');
    assert.strictEqual((await paidRequests()).length, before, 'the JPEG line was not paid again');
  });
});
