#!/usr/bin/env node
// Collects every runtime message of the extension into l10n/bundle.l10n.json (English source:
// each key is the message itself), the file VS Code's l10n uses as the key list.
//
// A message is the first argument (a string literal, or literals joined with +) of:
//   vscode.l10n.t(…), l10n.t(…), a local alias `const t = vscode.l10n.t` called as t(…),
//   and tr(…) imported from core/i18n (the pure modules' translator).
// Counted messages, trPlural(count, { one, other }, …) and pluralTable({ one, other }) from
// core/plural, give one key per plural form: `one`, `other`, and `other` marked [few] and [many].
// Calls whose first argument is not a literal cannot be translated; they are listed as problems,
// except a forwarding translator marked with a `// l10n-forward` comment.
//
//   node scripts/l10n-extract.mjs            write l10n/bundle.l10n.json
//   node scripts/l10n-extract.mjs --check    exit 1 when the committed bundle is out of date
//   node scripts/l10n-extract.mjs --json     print {messages, problems} and write nothing
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = path.join(ROOT, 'l10n', 'bundle.l10n.json');

/** Source files of the extension host (the webview gets its strings from the host). */
function sourceFiles(dir = path.join(ROOT, 'src')) {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f))
    .sort();
}

const isL10nT = (node) =>
  ts.isPropertyAccessExpression(node) &&
  node.name.text === 't' &&
  ((ts.isIdentifier(node.expression) && node.expression.text === 'l10n') ||
    (ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'l10n'));

/** The text of a literal, or of literals joined with `+`; undefined for anything else. */
function literalText(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return literalText(node.expression);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = literalText(node.left);
    const right = literalText(node.right);
    return left === undefined || right === undefined ? undefined : left + right;
  }
  return undefined;
}

/** Functions of src/core/plural.ts and the index of their { one, other } argument. */
const PLURAL_FUNCTIONS = { trPlural: 1, pluralTable: 0 };

/** The bundle keys of a { one: '…', other: '…' } literal (as pluralKey() in src/core/plural.ts). */
function pluralKeys(node) {
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  const forms = {};
  for (const prop of node.properties) {
    if (!ts.isPropertyAssignment(prop) || !ts.isIdentifier(prop.name)) return undefined;
    const text = literalText(prop.initializer);
    if (text === undefined) return undefined;
    forms[prop.name.text] = text;
  }
  if (typeof forms.one !== 'string' || typeof forms.other !== 'string' || Object.keys(forms).length !== 2) return undefined;
  return [forms.one, forms.other, `${forms.other} [few]`, `${forms.other} [many]`];
}

export function extractFromSource(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const names = new Set(); // local names bound to a translating function
  const plurals = new Map(); // local name -> index of the { one, other } argument
  const visitDeclarations = (node) => {
    // const t = vscode.l10n.t;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isL10nT(node.initializer)) names.add(node.name.text);
    // import { tr } from '../core/i18n'   /   import { tr as x } from './i18n'
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && /(^|\/)i18n$/.test(node.moduleSpecifier.text)) {
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) if ((el.propertyName ?? el.name).text === 'tr') names.add(el.name.text);
      }
    }
    // import { trPlural, pluralTable } from '../core/plural'
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && /(^|\/)plural$/.test(node.moduleSpecifier.text)) {
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) {
          const imported = (el.propertyName ?? el.name).text;
          if (imported in PLURAL_FUNCTIONS) plurals.set(el.name.text, PLURAL_FUNCTIONS[imported]);
        }
      }
    }
    // the definition module itself
    if (ts.isFunctionDeclaration(node) && node.name?.text === 'tr' && /i18n\.ts$/.test(fileName)) names.add('tr');
    ts.forEachChild(node, visitDeclarations);
  };
  visitDeclarations(source);

  const messages = [];
  const problems = [];
  const visitCalls = (node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && plurals.has(node.expression.text)) {
      const forms = node.arguments[plurals.get(node.expression.text)];
      const keys = forms && pluralKeys(forms);
      if (keys) messages.push(...keys);
      else {
        const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
        problems.push(`${path.relative(ROOT, fileName).split(path.sep).join('/')}:${line + 1}:${character + 1}: plural forms must be { one: '…', other: '…' } with string literals`);
      }
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const translating = isL10nT(callee) || (ts.isIdentifier(callee) && names.has(callee.text));
      if (translating) {
        const where = () => {
          const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
          return `${path.relative(ROOT, fileName).split(path.sep).join('/')}:${line + 1}:${character + 1}`;
        };
        const first = node.arguments[0];
        const text = first && literalText(first);
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        const lines = source.text.split('\n');
        // `// l10n-forward` on the line or the line above: a translator that passes messages through.
        const forwarding = /l10n-forward/.test(lines[line] ?? '') || /l10n-forward/.test(lines[line - 1] ?? '');
        if (text !== undefined) messages.push(text);
        else if (forwarding) {
          // not a message of its own
        }
        else if (first && ts.isObjectLiteralExpression(first)) problems.push(`${where()}: l10n.t({…}) with a comment is not supported by this extractor`);
        else problems.push(`${where()}: the message is not a string literal: ${first ? first.getText(source) : '(none)'}`);
      }
    }
    ts.forEachChild(node, visitCalls);
  };
  visitCalls(source);
  return { messages, problems };
}

export function extractAll() {
  const messages = new Set();
  const problems = [];
  for (const file of sourceFiles()) {
    const result = extractFromSource(file, readFileSync(file, 'utf8'));
    for (const m of result.messages) messages.add(m);
    problems.push(...result.problems);
  }
  const sorted = [...messages].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { bundle: Object.fromEntries(sorted.map((m) => [m, m])), problems };
}

export function serialize(bundle) {
  return `${JSON.stringify(bundle, null, 2)}\n`;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const { bundle, problems } = extractAll();
  const args = process.argv.slice(2);
  if (args.includes('--json')) {
    process.stdout.write(JSON.stringify({ messages: Object.keys(bundle), problems }, null, 2) + '\n');
  } else if (args.includes('--check')) {
    const current = existsSync(BUNDLE) ? readFileSync(BUNDLE, 'utf8') : '';
    if (current !== serialize(bundle)) {
      console.error('l10n/bundle.l10n.json is out of date: run node scripts/l10n-extract.mjs');
      process.exitCode = 1;
    }
  } else {
    mkdirSync(path.dirname(BUNDLE), { recursive: true });
    const before = existsSync(BUNDLE) ? JSON.parse(readFileSync(BUNDLE, 'utf8')) : {};
    writeFileSync(BUNDLE, serialize(bundle));
    const added = Object.keys(bundle).filter((k) => !(k in before));
    const removed = Object.keys(before).filter((k) => !(k in bundle));
    console.log(`l10n/bundle.l10n.json: ${Object.keys(bundle).length} messages (+${added.length}, -${removed.length})`);
    for (const k of added) console.log(`  + ${k}`);
    for (const k of removed) console.log(`  - ${k}`);
  }
  for (const p of problems) console.error(`warning: ${p}`);
  if (problems.length && args.includes('--strict')) process.exitCode = 1;
}
