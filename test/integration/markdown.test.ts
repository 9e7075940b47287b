// Generate Image for Selection in Markdown and HTML editors, by arguments: the selection is the
// prompt and the link goes right after it, relative to the document. Inside VS Code, emulator.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { closeAllEditors, paidRequests, rejectionOf, workspaceRoot, prepareSuite } from './support';

interface SelectionResult {
  files: vscode.Uri[];
  model: string;
  inserted: string;
}

async function openWith(relative: string, content: string): Promise<vscode.TextEditor> {
  const file = path.join(workspaceRoot(), relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  const document = await vscode.workspace.openTextDocument(file);
  return vscode.window.showTextDocument(document);
}

/** Resolves a link target (percent-encoded, POSIX) against the document's folder. */
function resolveTarget(document: vscode.TextDocument, target: string): string {
  return path.resolve(path.dirname(document.uri.fsPath), ...decodeURIComponent(target).split('/'));
}

describe('Generate Image for Selection (Markdown, HTML)', function () {
  this.timeout(60_000);

  before(async () => {
    await prepareSuite();
  });

  afterEach(async () => {
    await vscode.workspace.saveAll(false);
    await closeAllEditors();
  });

  it('Markdown: inserts ![alt](path) after the selection, alt escaped, path relative with %20', async () => {
    const editor = await openWith('docs/notes.md', '# Notes\n\nA red lighthouse (at dawn) on [rocks] *wet*\n\nNext paragraph.\n');
    const line = editor.document.lineAt(2);
    editor.selection = new vscode.Selection(line.range.start, line.range.end);
    const result = await vscode.commands.executeCommand<SelectionResult>('gatewayImages.generateForSelection', {
      model: 'sketch-mini',
      seed: 5,
      outputDirectory: 'my images',
    });
    assert.strictEqual(result.files.length, 1);
    const text = editor.document.getText();
    const match = /^A red lighthouse \(at dawn\) on \[rocks\] \*wet\*\n\n!\[(.*)\]\((.*)\)\n\nNext paragraph\.$/m.exec(text);
    assert.ok(match, `unexpected document:\n${text}`);
    assert.strictEqual(match[1], 'A red lighthouse (at dawn) on \\[rocks\\] \\*wet\\*');
    assert.match(match[2]!, /^\.\.\/my%20images\/[^ ()]+\.png$/);
    const resolved = resolveTarget(editor.document, match[2]!);
    assert.strictEqual(resolved, result.files[0]!.fsPath);
    assert.ok(fs.existsSync(resolved), `${resolved} does not exist`);
    assert.strictEqual(result.inserted, `\n\n![${match[1]}](${match[2]})`);
  });

  it('HTML: inserts <img src alt> right after a selection inside a line, attribute text escaped', async () => {
    const editor = await openWith('site/index.html', '<html><body>\n<p>Кот в сапогах & "шляпа" <b></p>\n</body></html>\n');
    const line = editor.document.lineAt(1);
    const start = line.text.indexOf('Кот');
    const end = line.text.indexOf(' <b>');
    editor.selection = new vscode.Selection(1, start, 1, end);
    const result = await vscode.commands.executeCommand<SelectionResult>('gatewayImages.generateForSelection', { model: 'sketch-mini', seed: 6 });
    const after = editor.document.lineAt(1).text;
    const match = /^<p>Кот в сапогах & "шляпа" <img src="([^"]+)" alt="([^"]*)"> <b><\/p>$/.exec(after);
    assert.ok(match, `unexpected line: ${after}`);
    assert.strictEqual(match[2], 'Кот в сапогах &amp; &quot;шляпа&quot;');
    assert.match(match[1]!, /^\.\.\/generated-images\/.+\.png$/);
    const resolved = resolveTarget(editor.document, match[1]!);
    assert.strictEqual(resolved, result.files[0]!.fsPath);
    assert.ok(fs.existsSync(resolved));
  });

  it('refuses an empty selection without a prompt, and another language, before sending', async () => {
    const paidBefore = (await paidRequests()).length;
    const editor = await openWith('docs/empty.md', 'text\n');
    editor.selection = new vscode.Selection(0, 0, 0, 0);
    const empty = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generateForSelection', { model: 'sketch-mini' }));
    assert.strictEqual(empty.kind, 'validation');
    await openWith('docs/code.ts', 'const x = 1;\n');
    const wrong = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generateForSelection', { model: 'sketch-mini', prompt: 'x' }));
    assert.strictEqual(wrong.kind, 'validation');
    assert.strictEqual((await paidRequests()).length, paidBefore);
  });
});
