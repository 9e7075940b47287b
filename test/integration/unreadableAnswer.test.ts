// A paid answer that cannot be read, inside VS Code: the message says where the saved images and
// the kept answer are and offers "Recover Images"; pressing it runs Recover Unsaved Images, which
// reads the answer again and moves what it found into the workspace, byte-equal to what the
// emulator sent. Data URL answers are simply saved. Files a stopped job left behind are listed,
// moved or removed. An unknown model is refused locally with kind 'unknown-model'.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { FALLBACK_RECOVERY_DIR } from '../../src/core/files/imageStore';
import type { WaitingJob } from '../../src/core/files/recoveryFolder';
import { admin, emulator, emulatorImages, paidRequests, prepareSuite, rejectionOf, waitUntil, workspaceRoot } from './support';

interface Script {
  /** The job to pick in Recover's quick pick. */
  pick: (job: WaitingJob) => boolean;
  /** The button for "Where should…". */
  choice: string;
  /** The answer to the modal "Remove … for good?". */
  confirm?: string;
}

/** Answers the UI as a person would: "Recover Images" on the failure, then Recover's questions. Records what was shown. */
function scriptUi(script: Script): { shown: string[]; restore: () => void } {
  const window = vscode.window as unknown as Record<string, unknown>;
  const names = ['showQuickPick', 'showInformationMessage', 'showWarningMessage', 'showErrorMessage'];
  const saved = names.map((name) => [name, window[name]] as const);
  const shown: string[] = [];
  const notification = (text: string, ...items: unknown[]) => {
    const actions = items.filter((i): i is string => typeof i === 'string');
    shown.push(`${text} [${actions.join(' | ')}]`);
    if (actions.includes('Recover Images')) return 'Recover Images';
    if (/^Where should/.test(text)) return script.choice;
    if (/for good\?$/.test(text)) return script.confirm;
    return undefined;
  };
  window.showInformationMessage = async (text: string, ...items: unknown[]) => notification(text, ...items);
  window.showWarningMessage = async (text: string, ...items: unknown[]) => notification(text, ...items);
  window.showErrorMessage = async (text: string, ...items: unknown[]) => notification(text, ...items);
  window.showQuickPick = async (items: Thenable<unknown[]> | unknown[]) => {
    const list = (await items) as { job: WaitingJob }[];
    return list.find((item) => script.pick(item.job));
  };
  return { shown, restore: () => saved.forEach(([name, original]) => (window[name] = original)) };
}

const outputFolder = () => path.join(workspaceRoot(), 'generated-images');
/** Files in the output folder whose names hold `part`. */
const moved = (part: string) => (fs.existsSync(outputFolder()) ? fs.readdirSync(outputFolder()).filter((f) => f.includes(part)) : []);

describe('Unreadable paid answers: kept, told, recovered', function () {
  this.timeout(60_000);
  let counter = 0;

  before(async () => {
    await prepareSuite();
    const config = vscode.workspace.getConfiguration('gatewayImages');
    await config.update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
    // Saved PNGs carry their request in a chunk by default: off, so that files compare with what the emulator sent.
    await config.update('embedProvenance', false, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('gatewayImages').update('embedProvenance', undefined, vscode.ConfigurationTarget.Global);
  });

  afterEach(async () => {
    await admin('DELETE', 'faults');
    await admin('POST', 'forms', { forms: [] });
  });

  /** Runs the generate command into its own folder; the request and the images a clean answer holds. */
  async function generate(n: number, prepare: () => Promise<unknown>) {
    const id = ++counter;
    const request = { model: 'aurora-1', prompt: `Unreadable answer ${id} ${Date.now()}`, n, seed: 500 + id, size: '64x64' };
    const expected = await emulatorImages(emulator().keys.unlimited, request);
    await prepare();
    const folder = `unreadable-${id}-${Date.now()}`;
    const paidBefore = (await paidRequests()).length;
    const command = vscode.commands.executeCommand('gatewayImages.generate', { ...request, outputDirectory: folder });
    return { command, expected, folder: path.join(workspaceRoot(), folder), paidBefore };
  }

  it('a stray character in image 3 of 4: 2 images saved, the message says where and offers Recover, which saves images 3 and 4 byte-equal', async () => {
    let answer = '';
    const ui = scriptUi({ pick: (job) => job.files.some((f) => f.path === answer), choice: 'Move into Workspace' });
    try {
      const run = await generate(4, () => admin('POST', 'faults', { fault: 'stray-character', imageIndex: 2 }));
      const error = (await rejectionOf(run.command)) as Error & { kind?: string; recovered?: { answer?: string; manifestPath: string } };
      assert.strictEqual(error.kind, 'response-format', error.message);
      answer = error.recovered?.answer ?? '';
      assert.ok(answer && fs.existsSync(answer), `the answer is kept: ${error.message}`);
      const saved = fs.readdirSync(run.folder).sort();
      assert.strictEqual(saved.length, 2, saved.join(', '));
      saved.forEach((f, i) => assert.ok(fs.readFileSync(path.join(run.folder, f)).equals(run.expected[i]!), `${f} byte-equal`));
      // The notification: where everything is, and Recover Images first.
      await waitUntil(() => ui.shown.some((s) => s.includes(answer)), 10_000, 'the failure notification');
      const notice = ui.shown.find((s) => s.includes(answer))!;
      assert.ok(notice.includes(run.folder), notice);
      assert.match(notice, /\[Recover Images \| Show Account \| Show Log\]$/);
      // Recover, pressed from the notification, read images 3 and 4 again and moved them.
      const jobId = path.basename(error.recovered!.manifestPath, '.json');
      // Recover says "Moved …" once every file of the job is moved (images first, then the answer).
      await waitUntil(() => ui.shown.some((s) => /^Moved 2 images to /.test(s)), 15_000, 'images 3 and 4 moved into the workspace');
      const images = moved(jobId)
        .filter((f) => f.endsWith('.png'))
        .sort();
      images.forEach((f, i) => assert.ok(fs.readFileSync(path.join(outputFolder(), f)).equals(run.expected[i + 2]!), `${f} byte-equal to image ${i + 3}`));
      assert.ok(
        ui.shown.some((s) => /^Where should these 2 images go\?.*2 images were read again from what the gateway sent/.test(s)),
        ui.shown.join('\n'),
      );
      assert.ok(
        moved(jobId).some((f) => f.endsWith('-answer.json')),
        'the raw answer goes along (a character was skipped)',
      );
      assert.strictEqual((await paidRequests()).length - run.paidBefore, 1, 'paid once');
      console.log(`      stray character: "${notice}"`);
    } finally {
      ui.restore();
    }
  });

  for (const [name, prepare, n] of [
    ['an unknown envelope', () => admin('POST', 'forms', { forms: ['unknown-envelope'] }), 2],
    ['JSON truncated after the first image', () => admin('POST', 'faults', { fault: 'truncated-json' }), 3],
  ] as const) {
    it(`${name}: the message says where the answer is; Recover saves what it holds`, async () => {
      let answer = '';
      const ui = scriptUi({ pick: (job) => job.files.some((f) => f.path === answer), choice: 'Move into Workspace' });
      try {
        const run = await generate(n, prepare);
        const error = (await rejectionOf(run.command)) as Error & { recovered?: { answer?: string; manifestPath: string } };
        answer = error.recovered?.answer ?? '';
        assert.ok(answer && error.message.includes(answer), error.message);
        await waitUntil(() => ui.shown.some((s) => s.includes(answer) && s.includes('[Recover Images')), 10_000, 'the failure notification');
        const jobId = path.basename(error.recovered!.manifestPath, '.json');
        await waitUntil(() => ui.shown.some((s) => /^Moved \d+ images? to /.test(s)), 15_000, 'recovered images moved');
        const found = moved(jobId).filter((f) => f.endsWith('.png'));
        if (n === 2) {
          // Every image of the other envelope, whole and byte-equal; the answer is not needed any more.
          found.sort().forEach((f, i) => assert.ok(fs.readFileSync(path.join(outputFolder(), f)).equals(run.expected[i]!), f));
          assert.strictEqual(found.length, 2);
          assert.ok(!moved(jobId).some((f) => f.includes('-answer.json')));
        } else {
          // What arrived of image 2: its first bytes, byte-equal; the raw answer goes along.
          const part = fs.readFileSync(path.join(outputFolder(), found[0]!));
          assert.ok(part.length > 0 && run.expected[1]!.subarray(0, part.length).equals(part), 'the first part of image 2');
          assert.match(found[0]!, /-incomplete\.png$/);
          assert.ok(moved(jobId).some((f) => f.endsWith('-answer.json')));
        }
      } finally {
        ui.restore();
      }
    });
  }

  for (const form of ['data-url-b64', 'data-url-url']) {
    it(`${form}: the images are saved, byte-equal`, async () => {
      const run = await generate(2, () => admin('POST', 'forms', { forms: [form] }));
      const result = (await run.command) as { files: vscode.Uri[] };
      assert.strictEqual(result.files.length, 2);
      result.files.forEach((uri, i) => assert.ok(fs.readFileSync(uri.fsPath).equals(run.expected[i]!), uri.fsPath));
    });
  }

  it('files a stopped job left behind are listed with what is known; Remove… removes them, Move into Workspace moves them', async () => {
    const old = new Date(Date.now() - 60 * 60_000);
    const png = (await emulatorImages(emulator().keys.unlimited, { model: 'aurora-1', prompt: 'left behind', seed: 9, size: '64x64' }))[0]!;
    fs.mkdirSync(FALLBACK_RECOVERY_DIR, { recursive: true });
    const leave = (jobId: string) => {
      const file = path.join(FALLBACK_RECOVERY_DIR, `${jobId}-0.img`);
      fs.writeFileSync(file, png);
      fs.utimesSync(file, old, old);
      return file;
    };
    const removed = leave(`left-remove-${Date.now()}`);
    let ui = scriptUi({ pick: (job) => job.files.some((f) => f.path === removed), choice: 'Remove…', confirm: 'Remove' });
    try {
      await vscode.commands.executeCommand('gatewayImages.recoverImages');
      assert.ok(!fs.existsSync(removed), 'removed');
      assert.ok(
        ui.shown.some((s) => /^Remove 1 file of a paid request for good\?/.test(s)),
        ui.shown.join('\n'),
      );
    } finally {
      ui.restore();
    }
    const jobId = `left-move-${Date.now()}`;
    const kept = leave(jobId);
    ui = scriptUi({
      pick: (job) => job.unrecorded === true && job.files.some((f) => f.path === kept && f.mediaType === 'image/png'),
      choice: 'Move into Workspace',
    });
    try {
      await vscode.commands.executeCommand('gatewayImages.recoverImages');
      assert.ok(!fs.existsSync(kept));
      assert.deepStrictEqual(moved(jobId), [`${jobId}-1.png`]);
      assert.ok(fs.readFileSync(path.join(outputFolder(), `${jobId}-1.png`)).equals(png));
    } finally {
      ui.restore();
    }
  });

  it('an unknown model is refused locally as kind "unknown-model", nothing sent', async () => {
    const paidBefore = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-9', prompt: 'x' }));
    assert.strictEqual(error.kind, 'unknown-model', error.message);
    assert.strictEqual(error.field, 'model');
    assert.strictEqual((await paidRequests()).length, paidBefore);
  });
});
