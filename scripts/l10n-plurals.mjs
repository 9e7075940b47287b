#!/usr/bin/env node
// `npm run l10n`'s extraction: l10n/bundle.l10n.json from every `l10n.t('…')` and `vscode.l10n.t('…')`
// call in src/, found by @vscode/l10n-dev (getL10nJson, what `vscode-l10n-dev export` runs), and what
// l10n-dev does not do:
//   1. Counted messages, `trPlural(count, { one, other }, …)` and `pluralTable({ one, other })` of
//      src/core/common/plural.ts, are not l10n.t calls, so l10n-dev cannot see them. Their keys are added
//      here: `one`, `other`, and `other` marked ` [few]` and ` [many]` (see pluralKey()).
//   2. The keys are sorted and the file ends with a newline: the bundle then does not depend on the
//      order in which the files are listed, and diffs stay small.
//   3. l10n-dev skips, without a word, an l10n.t call whose message is not a string literal (it can
//      never be translated). Such calls are reported and fail, except a forwarding call marked
//      `// l10n-forward` on its line or the line above.
//   4. l10n-dev's answer is kept by the hash of the sources (and its version) in the temporary folder:
//      its tree-sitter queries take 10 s of CPU and more, and the unit tests ask twice for the same tree
//      (the bundle check and `npm run l10n` in a copy). Other sources, another hash.
//
//   node scripts/l10n-plurals.mjs          write l10n/bundle.l10n.json
//   node scripts/l10n-plurals.mjs --json   print {messages, problems} of the extraction; write nothing
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = path.join(ROOT, 'l10n', 'bundle.l10n.json');

/** Functions of src/core/common/plural.ts and the index of their { one, other } argument. */
const PLURAL_FUNCTIONS = { trPlural: 1, pluralTable: 0 };

function sourceFiles(dir = path.join(ROOT, 'src')) {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f))
    .sort();
}

const isLiteral = (node) => node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node));
const isL10nT = (node) =>
  ts.isPropertyAccessExpression(node) &&
  node.name.text === 't' &&
  ((ts.isIdentifier(node.expression) && node.expression.text === 'l10n') ||
    (ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'l10n'));

/** The plural keys and the problems of one source file. */
export function scan(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n');
  const keys = [];
  const problems = [];
  const where = (node) => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
    return `${path.relative(ROOT, fileName).split(path.sep).join('/')}:${line + 1}:${character + 1}`;
  };
  const visit = (node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text in PLURAL_FUNCTIONS) {
      const forms = node.arguments[PLURAL_FUNCTIONS[node.expression.text]];
      const texts = {};
      if (forms && ts.isObjectLiteralExpression(forms)) {
        for (const p of forms.properties)
          if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && isLiteral(p.initializer)) texts[p.name.text] = p.initializer.text;
      }
      if (forms && ts.isObjectLiteralExpression(forms) && forms.properties.length === 2 && texts.one !== undefined && texts.other !== undefined) {
        keys.push(texts.one, texts.other, `${texts.other} [few]`, `${texts.other} [many]`);
      } else problems.push(`${where(node)}: plural forms must be { one: '…', other: '…' } with string literals`);
    }
    if (ts.isCallExpression(node) && isL10nT(node.expression) && !isLiteral(node.arguments[0])) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      if (!/l10n-forward/.test(`${lines[line - 1] ?? ''}\n${lines[line] ?? ''}`)) {
        problems.push(`${where(node)}: the message is not a string literal, so l10n-dev export skips it: ${node.arguments[0]?.getText(source) ?? '(none)'}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { keys, problems };
}

export function scanAll() {
  const keys = new Set();
  const problems = [];
  for (const file of sourceFiles()) {
    const result = scan(file, readFileSync(file, 'utf8'));
    for (const k of result.keys) keys.add(k);
    problems.push(...result.problems);
  }
  return { keys: [...keys], problems };
}

/** The bundle with the plural keys added and the keys sorted. */
export function complete(bundle, pluralKeys) {
  const all = { ...bundle };
  for (const k of pluralKeys) all[k] ??= k;
  return Object.fromEntries(
    Object.keys(all)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((k) => [k, all[k]]),
  );
}

/** l10n-dev's messages of the sources (getL10nJson), from the cache when these very sources were read before. */
export async function exportedMessages(files = sourceFiles()) {
  const sources = files.map((f) => ({ name: path.relative(ROOT, f).split(path.sep).join('/'), extension: path.extname(f), contents: readFileSync(f, 'utf8') }));
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@vscode', 'l10n-dev', 'package.json'), 'utf8'));
  const hash = createHash('sha256').update(`l10n-dev ${version}\0`);
  for (const source of sources) hash.update(`${source.name}\0${source.contents}\0`);
  const dir = path.join(tmpdir(), `gateway-images-l10n-${userInfo().uid}`);
  const cached = path.join(dir, `${hash.digest('hex')}.json`);
  try {
    return JSON.parse(readFileSync(cached, 'utf8'));
  } catch {
    // Not there (or torn): extract.
  }
  const { getL10nJson } = await import('@vscode/l10n-dev');
  const exported = await getL10nJson(sources.map(({ extension, contents }) => ({ extension, contents })));
  mkdirSync(dir, { recursive: true });
  const partial = `${cached}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(exported));
  renameSync(partial, cached);
  return exported;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const { keys, problems } = scanAll();
  const bundle = complete(await exportedMessages(), keys);
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ messages: Object.keys(bundle), problems }, null, 2)}\n`);
  } else {
    writeFileSync(BUNDLE, `${JSON.stringify(bundle, null, 2)}\n`);
    console.log(`l10n/bundle.l10n.json: ${Object.keys(bundle).length} messages (${keys.length} of them plural keys)`);
    for (const p of problems) console.error(`error: ${p}`);
    if (problems.length) process.exitCode = 1;
  }
}
