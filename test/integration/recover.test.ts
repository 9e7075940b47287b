// Recover Unsaved Images: paid images waiting in a recovery folder (with a manifest) are listed,
// and moved into the workspace or a chosen folder; the manifest goes when they have moved.
// Inside VS Code, with the quick pick, the question and the folder dialog answered by the test.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { FALLBACK_RECOVERY_DIR } from '../../src/core/files/imageStore';
import type { WaitingJob } from '../../src/core/files/recoveryFolder';
import { type RecoveryManifest, writeRecoveryManifest } from '../../src/core/files/recoveryManifest';
import { workspaceRoot } from './support';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

interface Answers {
  /** jobId of the manifest to pick; undefined dismisses the quick pick. */
  pick?: string;
  /** The button to press on "Where should…". */
  choice?: string;
  folder?: string;
}

/** Answers the command's UI; records what it showed. Restored by the returned function. */
function answer(answers: Answers): { shown: string[]; pickItems: string[]; restore: () => void } {
  const window = vscode.window as unknown as Record<string, unknown>;
  const saved = ['showQuickPick', 'showInformationMessage', 'showOpenDialog'].map((name) => [name, window[name]] as const);
  const shown: string[] = [];
  const pickItems: string[] = [];
  window.showQuickPick = async (items: Thenable<unknown[]> | unknown[]) => {
    const list = (await items) as { label: string; job: WaitingJob }[];
    pickItems.push(...list.map((i) => i.job.jobId));
    return list.find((i) => i.job.jobId === answers.pick);
  };
  window.showInformationMessage = async (message: string) => {
    shown.push(message);
    return /^Where should/.test(message) ? answers.choice : undefined;
  };
  window.showOpenDialog = async () => (answers.folder ? [vscode.Uri.file(answers.folder)] : undefined);
  return { shown, pickItems, restore: () => saved.forEach(([name, original]) => (window[name] = original)) };
}

async function waiting(jobId: string, count: number): Promise<RecoveryManifest> {
  const dir = path.join(FALLBACK_RECOVERY_DIR, jobId);
  fs.mkdirSync(dir, { recursive: true });
  const files = Array.from({ length: count }, (_, i) => {
    const file = path.join(dir, `${i}.png`);
    fs.writeFileSync(file, PNG);
    return { path: file, suggestedName: `${jobId}-${i}.png` };
  });
  const manifest: RecoveryManifest = {
    jobId,
    createdAt: new Date().toISOString(),
    prompt: 'A paid image that could not be saved',
    model: 'aurora-1',
    intendedDirectory: path.join(workspaceRoot(), 'generated-images'),
    reason: 'disk full (test)',
    files,
  };
  manifest.manifestPath = await writeRecoveryManifest(FALLBACK_RECOVERY_DIR, manifest);
  return manifest;
}

describe('Recover Unsaved Images', function () {
  this.timeout(30_000);
  const run = () => vscode.commands.executeCommand<RecoveryManifest[]>('gatewayImages.recoverImages');
  let elsewhere: string;

  before(async () => {
    elsewhere = fs.mkdtempSync(path.join(workspaceRoot(), 'recovered-elsewhere-'));
    await vscode.workspace.getConfiguration('gatewayImages').update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
  });

  after(() => {
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  it('lists what waits; dismissing the pick moves nothing', async () => {
    const manifest = await waiting(`job-dismiss-${Date.now()}`, 2);
    const ui = answer({});
    try {
      const left = await run();
      assert.ok(ui.pickItems.includes(manifest.jobId), `listed: ${ui.pickItems.join(', ')}`);
      assert.ok(left.some((m) => m.jobId === manifest.jobId));
      for (const f of manifest.files) assert.ok(fs.existsSync(f.path));
    } finally {
      ui.restore();
      fs.rmSync(manifest.manifestPath!, { force: true });
      for (const f of manifest.files) fs.rmSync(f.path, { force: true });
    }
  });

  it('Move into Workspace: the images go to the output folder under their names, the manifest goes', async () => {
    const manifest = await waiting(`job-move-${Date.now()}`, 2);
    const ui = answer({ pick: manifest.jobId, choice: 'Move into Workspace' });
    try {
      const left = await run();
      assert.ok(!left.some((m) => m.jobId === manifest.jobId), 'still listed after the move');
      const target = path.join(workspaceRoot(), 'generated-images');
      for (const f of manifest.files) {
        const moved = path.join(target, f.suggestedName);
        assert.ok(fs.existsSync(moved), `${moved} missing`);
        assert.ok(fs.readFileSync(moved).equals(PNG));
        assert.ok(!fs.existsSync(f.path), `${f.path} left behind`);
        fs.rmSync(moved);
      }
      assert.ok(!fs.existsSync(manifest.manifestPath!), 'the manifest was not removed');
      assert.ok(
        ui.shown.some((m) => /^Moved 2 images to /.test(m)),
        ui.shown.join(' | '),
      );
    } finally {
      ui.restore();
    }
  });

  it('Choose Folder…: into the chosen folder, never over an existing file', async () => {
    const manifest = await waiting(`job-elsewhere-${Date.now()}`, 1);
    fs.writeFileSync(path.join(elsewhere, manifest.files[0]!.suggestedName), 'already here');
    const ui = answer({ pick: manifest.jobId, choice: 'Choose Folder…', folder: elsewhere });
    try {
      await run();
      const names = fs.readdirSync(elsewhere).sort();
      assert.strictEqual(names.length, 2, names.join(', '));
      assert.strictEqual(fs.readFileSync(path.join(elsewhere, manifest.files[0]!.suggestedName), 'utf8'), 'already here', 'overwritten');
      assert.ok(!fs.existsSync(manifest.manifestPath!));
    } finally {
      ui.restore();
    }
  });

  it('with nothing of this test waiting, says so when nothing waits at all', async () => {
    const ui = answer({});
    try {
      const left = await run();
      // Other suites may have left recoveries in the extension's own folder: then the list shows them.
      if (left.length === 0) assert.ok(ui.shown.includes('No images are waiting in the recovery folder.'), ui.shown.join(' | '));
      else assert.ok(ui.pickItems.length === left.length);
      assert.ok(!left.some((m) => m.jobId.startsWith('job-')), 'a test recovery is still listed');
    } finally {
      ui.restore();
    }
  });
});
