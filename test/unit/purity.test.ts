// The core, the job service and the account model must run in plain Node: no 'vscode' import.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const PURE = ['src/core', 'src/jobs', 'src/account/accountModel.ts', 'src/mcp/server', 'src/mcp/main.ts'];

/** Module specifiers of import/export-from/require/import() statements (comments stripped). */
export function importedModules(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found: string[] = [];
  const patterns = [
    /\bimport\s+(?:type\s+)?(?:[\w*{}\s,$]+\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bexport\s+(?:type\s+)?[\w*{}\s,$]+\s+from\s+['"]([^'"]+)['"]/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (let m = re.exec(code); m; m = re.exec(code)) found.push(m[1]!);
  return found;
}

function sourceFiles(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (statSync(full).isFile()) return [full];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(full, f));
}

describe('purity: no vscode in the core', () => {
  it('the import scanner sees every form', () => {
    const sample = [
      "import * as vscode from 'vscode';",
      'import type { Uri } from "vscode";',
      "import 'vscode';",
      "export { window } from 'vscode';",
      "const v = require('vscode');",
      "const w = await import('vscode');",
      "import x = require('vscode');",
      "// import nope from 'vscode';",
      "/* require('vscode') */",
      "import { a } from './vscodeish';",
    ].join('\n');
    assert.deepEqual(importedModules(sample).sort(), ['./vscodeish', ...Array(7).fill('vscode')]);
  });

  it('finds the files it must check', () => {
    const files = PURE.flatMap(sourceFiles);
    assert.ok(files.some((f) => f.endsWith(path.join('core', 'client', 'client.ts'))));
    assert.ok(files.some((f) => f.endsWith(path.join('jobs', 'imageJobs.ts'))));
    assert.ok(files.some((f) => f.endsWith('accountModel.ts')));
    assert.ok(files.length >= 20, String(files.length));
  });

  it('no file under src/core, src/jobs or src/account/accountModel.ts imports vscode', () => {
    // @vscode/l10n is the exception: a plain library (no vscode API) that translates in plain Node too.
    const isVscode = (m: string) => m === 'vscode' || m.startsWith('vscode/') || (m.startsWith('@vscode/') && m !== '@vscode/l10n');
    const offenders = PURE.flatMap(sourceFiles).filter((file) => importedModules(readFileSync(file, 'utf8')).some(isVscode));
    assert.deepEqual(
      offenders.map((f) => path.relative(ROOT, f)),
      [],
      `these files import vscode:\n${offenders.join('\n')}`,
    );
  });

  it('relative imports stay inside the pure set (no reaching into commands, host or studio)', () => {
    const offenders: string[] = [];
    for (const file of PURE.flatMap(sourceFiles)) {
      for (const m of importedModules(readFileSync(file, 'utf8'))) {
        if (!m.startsWith('.')) continue;
        const target = path.relative(ROOT, path.resolve(path.dirname(file), m));
        if (/^src\/(commands|host|studio|extension|services|mcp\/register)/.test(target)) offenders.push(`${path.relative(ROOT, file)} -> ${m}`);
      }
    }
    assert.deepEqual(offenders, []);
  });
});
