// Code that only tests use is dead weight that looks alive: every exported function and every public
// member of an exported class in these modules must be referenced by the product (src/), found with
// the TypeScript language service (references through interfaces count).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../..');
const CHECKED = [
  'src/core/files/imageStore.ts',
  'src/core/files/recoveryFolder.ts',
  'src/core/files/recoveryManifest.ts',
  'src/core/answers/keptAnswer.ts',
  'src/core/answers/answerSalvage.ts',
  'src/core/answers/dataUrl.ts',
  'src/core/answers/imageString.ts',
  'src/core/answers/imageDownload.ts',
];

function languageService(): ts.LanguageService {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const host: ts.LanguageServiceHost = {
    getCompilationSettings: () => config.options,
    // The product's files only: a reference from a test does not count, and searching the tests
    // for references (half the program) doubled the time.
    getScriptFileNames: () => config.fileNames.filter((file) => path.relative(ROOT, file).startsWith(`src${path.sep}`)),
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) => {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => ROOT,
    getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
    fileExists: (file) => ts.sys.fileExists(file),
    readFile: (file) => ts.sys.readFile(file),
  };
  return ts.createLanguageService(host, ts.createDocumentRegistry());
}

const isExported = (node: ts.Node) => ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const isPublic = (node: ts.ClassElement) =>
  !(ts.getCombinedModifierFlags(node) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) && !(node.name && ts.isPrivateIdentifier(node.name));

/** The names to check in one file: exported functions and constants, and public members of exported classes. */
function declaredNames(source: ts.SourceFile): { label: string; at: number }[] {
  const names: { label: string; at: number }[] = [];
  for (const statement of source.statements) {
    if (!isExported(statement)) continue;
    if (ts.isFunctionDeclaration(statement) && statement.name) names.push({ label: statement.name.text, at: statement.name.getStart(source) });
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push({ label: d.name.text, at: d.name.getStart(source) });
    }
    if (ts.isClassDeclaration(statement) && statement.name) {
      const owner = statement.name.text;
      for (const member of statement.members) {
        if (ts.isConstructorDeclaration(member) || !member.name || !isPublic(member)) continue;
        if (ts.isMethodDeclaration(member) || ts.isGetAccessor(member) || ts.isPropertyDeclaration(member)) {
          names.push({ label: `${owner}.${member.name.getText(source)}`, at: member.name.getStart(source) });
        }
      }
    }
  }
  return names;
}

describe('used by the product', function () {
  this.timeout(60_000);

  it('every exported function and public member of the staging and recovery modules is used by src/, not by tests alone', () => {
    const service = languageService();
    const program = service.getProgram()!;
    const unused: string[] = [];
    let checked = 0;
    for (const relative of CHECKED) {
      const file = path.join(ROOT, relative);
      const source = program.getSourceFile(file);
      if (!source) continue;
      for (const { label, at } of declaredNames(source)) {
        checked++;
        const references = (service.findReferences(file, at) ?? []).flatMap((symbol) => symbol.references);
        const inProduct = references.some(
          (r) => !r.isDefinition && path.relative(ROOT, r.fileName).startsWith(`src${path.sep}`) && !(r.fileName === file && r.textSpan.start === at),
        );
        if (!inProduct) unused.push(`${relative}: ${label}`);
      }
    }
    assert.ok(checked > 10, `only ${checked} names found: the scanner is broken`);
    assert.deepEqual(unused, [], 'used by tests alone (or by nothing)');
  });
});
