// The studio page is untrusted: every path or URI it names goes through src/studio/model/files.ts, which
// must confine it to the workspace folders (after resolving symlinks). Inside VS Code, because the
// roots are the real workspace folders.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { checkReference, insideRoots, pathOfDroppedUri, savePastedImage } from '../../src/studio/model/files';
import { workspaceRoot } from './support';

/** A valid 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

describe('Studio file confinement (studio/model/files.ts)', function () {
  this.timeout(30_000);
  let inside: string;
  let outside: string;
  const config = () => vscode.workspace.getConfiguration('gatewayImages');

  before(() => {
    inside = fs.mkdtempSync(path.join(workspaceRoot(), 'confinement-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'confinement-outside-'));
    fs.writeFileSync(path.join(inside, 'ok.png'), PNG);
    fs.writeFileSync(path.join(inside, 'text.png'), 'not an image at all');
    fs.writeFileSync(path.join(outside, 'secret.png'), PNG);
    fs.symlinkSync(path.join(outside, 'secret.png'), path.join(inside, 'link-out.png'));
    fs.symlinkSync(outside, path.join(inside, 'dir-out'));
  });

  after(async () => {
    await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(inside, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('accepts an absolute path inside a workspace folder, as its real path', async () => {
    assert.strictEqual(await insideRoots(path.join(inside, 'ok.png')), fs.realpathSync(path.join(inside, 'ok.png')));
  });

  it('refuses relative paths, paths outside, ../ escapes and files that do not exist', async () => {
    assert.strictEqual(await insideRoots('ok.png'), undefined, 'relative');
    assert.strictEqual(await insideRoots(path.join(outside, 'secret.png')), undefined, 'outside');
    // Not normalised: starts inside, climbs out.
    const escape = `${inside}/../${path.relative(path.dirname(inside), path.join(outside, 'secret.png'))}`;
    assert.ok(escape.startsWith(workspaceRoot()) && escape.includes('/../'), escape);
    assert.strictEqual(await insideRoots(escape), undefined, '../ escape');
    assert.strictEqual(await insideRoots(path.join(inside, 'missing.png')), undefined, 'missing');
  });

  it('refuses a symlink inside the workspace that points outside (file or folder)', async () => {
    assert.strictEqual(await insideRoots(path.join(inside, 'link-out.png')), undefined);
    assert.strictEqual(await insideRoots(path.join(inside, 'dir-out', 'secret.png')), undefined);
    const check = await checkReference(path.join(inside, 'link-out.png'));
    assert.strictEqual(check.ok, false);
  });

  it('checkReference: an image by its bytes, not by its name', async () => {
    const good = await checkReference(path.join(inside, 'ok.png'));
    assert.deepStrictEqual(good, { ok: true, path: fs.realpathSync(path.join(inside, 'ok.png')) });
    const text = await checkReference(path.join(inside, 'text.png'));
    assert.ok(!text.ok && /not a PNG, JPEG or WebP/.test(text.reason), JSON.stringify(text));
    const far = await checkReference(path.join(outside, 'secret.png'));
    assert.ok(!far.ok && /not a file inside the workspace/.test(far.reason), JSON.stringify(far));
  });

  it('pathOfDroppedUri: file: and vscode-remote: URIs and absolute paths; nothing else', () => {
    const file = path.join(inside, 'ok.png');
    assert.strictEqual(pathOfDroppedUri(vscode.Uri.file(file).toString()), file);
    assert.strictEqual(pathOfDroppedUri(`vscode-remote://127.0.0.1:1234${vscode.Uri.file(file).path}`), file);
    assert.strictEqual(pathOfDroppedUri(`  ${file}\n`), file);
    for (const other of ['https://example.org/a.png', 'data:image/png;base64,AAAA', '# a comment', '', 'relative/a.png', 'untitled:Untitled-1']) {
      assert.strictEqual(pathOfDroppedUri(other), undefined, other);
    }
  });

  it('savePastedImage: only real images of the named type, always saved inside the workspace', async () => {
    await assert.rejects(savePastedImage(Buffer.from('GIF89a....'), 'image/png'), /not a PNG, JPEG or WebP/);
    await assert.rejects(savePastedImage(PNG, 'image/jpeg'), /not a PNG, JPEG or WebP/, 'bytes and type disagree');
    await assert.rejects(savePastedImage(PNG, 'image/gif'), /not a PNG, JPEG or WebP/);

    const saved = await savePastedImage(PNG, 'image/png');
    assert.ok(saved.startsWith(workspaceRoot() + path.sep), saved);
    assert.strictEqual(path.basename(path.dirname(saved)), 'pasted');
    assert.ok(fs.readFileSync(saved).equals(PNG));
    fs.rmSync(saved);

    // A user-chosen output folder outside the workspace: pasted references still stay inside.
    await config().update('outputDirectory', outside, vscode.ConfigurationTarget.Global);
    const kept = await savePastedImage(PNG, 'image/png');
    assert.ok(kept.startsWith(workspaceRoot() + path.sep), kept);
    assert.deepStrictEqual(fs.readdirSync(outside).sort(), ['secret.png']);
    fs.rmSync(kept);
  });

  it('savePastedImage: an output folder that a link leads outside is not written through', async () => {
    const link = path.join(workspaceRoot(), 'paste-link');
    fs.symlinkSync(outside, link, 'dir');
    try {
      await config().update('outputDirectory', 'paste-link', vscode.ConfigurationTarget.Global);
      const saved = await savePastedImage(PNG, 'image/png');
      assert.ok(saved.startsWith(path.join(workspaceRoot(), 'generated-images') + path.sep), saved);
      assert.deepStrictEqual(fs.readdirSync(outside).sort(), ['secret.png'], 'the pasted image went through the link');
      fs.rmSync(saved);
    } finally {
      await config().update('outputDirectory', undefined, vscode.ConfigurationTarget.Global);
      fs.rmSync(link, { force: true });
    }
  });
});
