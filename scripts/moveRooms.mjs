#!/usr/bin/env node
// Moves src/commands, src/studio and two rooms of src/core into the rooms of issue 43, and rewrites
// every relative import and every path string that named a moved file. It can be run again at any
// time (after merging a branch that still has files or imports at the old places): files already
// moved stay, imports that still name an old place are rewritten, the rest is left as it is.
//   node scripts/moveRooms.mjs           move and rewrite
//   node scripts/moveRooms.mjs --check   print the moves and rewrites still to do, change nothing (exit 1 if any)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const checkOnly = process.argv.includes('--check');

/** Each room: its folder and the files that move into it from their old folder. */
const ROOMS = [
  ['src/core/gateway', 'src/core/client', ['client', 'gatewayBundle']],
  ['src/core/files', 'src/core/images', ['imageSniff', 'imageHeader']],
  ['src/commands', 'src/commands/common', ['showError', 'commandArgs', 'outputFolder', 'confirmRun', 'confirmCost']],
  ['src/commands', 'src/commands/styles', ['styles', 'editStyles', 'saveStarterStyle', 'starterStylesChunk']],
  [
    'src/commands',
    'src/commands/images',
    ['generate', 'editImage', 'compareModels', 'generateForSelection', 'jobRunner', 'pickers', 'writePrompt', 'writePromptChunk'],
  ],
  ['src/commands', 'src/commands/promptFiles', ['promptFiles', 'batchFromFile', 'batchRun', 'batchHeldLines', 'batchStyles']],
  ['src/commands', 'src/commands/results', ['recover', 'recoverCommand', 'findResults', 'resultsCsvExport', 'interruptedJobs', 'provenance']],
  ['src/commands', 'src/commands/account', ['account', 'accountPage', 'apiKey']],
  ['src/studio', 'src/studio/protocol', ['protocol', 'formProtocol', 'compareProtocol', 'styleProtocol', 'promptProtocol', 'protocolValidation']],
  ['src/studio', 'src/studio/model', ['view', 'files', 'strings', 'aspectHint', 'shownFolders']],
  ['src/studio', 'src/studio/gallery', ['galleryFeed', 'galleryActions', 'galleryList']],
  ['src/studio', 'src/studio/compare', ['compareView']],
  ['src/studio', 'src/studio/panel', ['studioPanel', 'index', 'html', 'pageHtml', 'studioStyles', 'studioPrompt']],
];

/** Old absolute path -> new absolute path, for every file of every room. */
const moves = new Map();
for (const [from, to, names] of ROOMS) {
  for (const name of names) moves.set(path.join(root, from, `${name}.ts`), path.join(root, to, `${name}.ts`));
}
const movedBack = new Map([...moves].map(([oldPath, newPath]) => [newPath, oldPath]));

const clashes = [...moves].filter(([oldPath, newPath]) => fs.existsSync(oldPath) && fs.existsSync(newPath));
if (clashes.length > 0) {
  for (const [oldPath, newPath] of clashes) console.error(`both ${rel(oldPath)} and ${rel(newPath)} exist: merge them by hand first`);
  process.exit(2);
}

const changes = [];
const movedNow = new Set();
for (const [oldPath, newPath] of moves) {
  if (!fs.existsSync(oldPath)) continue;
  changes.push(`move ${rel(oldPath)} -> ${rel(newPath)}`);
  movedNow.add(newPath);
  if (checkOnly) continue;
  fs.mkdirSync(path.dirname(newPath), { recursive: true });
  execFileSync('git', ['mv', oldPath, newPath], { cwd: root });
}

const CODE = /\.(ts|mts|cts|mjs|cjs|js)$/;
const TEXT = /\.(md|json|cjs|mjs|ts|js)$/;
const SKIP_DIRS = new Set(['node_modules', 'out', 'dist', '.cache', '.git', 'test-results', '.vscode-test']);
/** History stays as it was written. */
const SKIP_FILES = new Set(['CHANGELOG.md', 'package-lock.json', 'scripts/moveRooms.mjs']);

for (const file of walk(root)) {
  const relPath = rel(file);
  if (SKIP_FILES.has(relPath) || !TEXT.test(file)) continue;
  const before = fs.readFileSync(file, 'utf8');
  const after = rewritePathStrings(CODE.test(file) ? rewriteImports(before, file) : before);
  if (after === before) continue;
  changes.push(`rewrite ${relPath}`);
  if (!checkOnly) fs.writeFileSync(file, after);
}

for (const line of changes) console.log(line);
console.log(changes.length === 0 ? 'rooms: nothing to do' : `rooms: ${changes.length} change(s)${checkOnly ? ' would be made' : ''}`);
if (checkOnly && changes.length > 0) process.exitCode = 1;

/** `from '…'`, `import('…')` and `import '…'`; never `require('./x.js')`, which names a bundled chunk in dist/. */
function rewriteImports(text, file) {
  // A file moved in this run still has the imports it had at its old place.
  const from = movedNow.has(file) ? movedBack.get(file) : file;
  const pattern = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g;
  return text.replace(pattern, (whole, lead, quote, specifier) => {
    const target = resolveImport(path.dirname(from), specifier);
    if (!target) return whole;
    if (target.newPath === target.oldPath && from === file) return whole;
    return `${lead}${quote}${specifierFor(path.dirname(file), target.newPath, specifier)}${quote}`;
  });
}

function resolveImport(dir, specifier) {
  const base = path.resolve(dir, specifier);
  const candidates = [base, `${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts')];
  for (const candidate of candidates) {
    if (moves.has(candidate)) return { oldPath: candidate, newPath: moves.get(candidate) };
  }
  for (const candidate of candidates) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return { oldPath: candidate, newPath: candidate };
  }
  return undefined;
}

function specifierFor(fromDir, targetPath, original) {
  const target = original.endsWith('.js') ? targetPath.replace(/\.ts$/, '.js') : targetPath.replace(/\.ts$/, '');
  const namedItsFolder = path.basename(target) === 'index' && !/(^|\/)index$/.test(original);
  let specifier = path
    .relative(fromDir, namedItsFolder ? path.dirname(target) : target)
    .split(path.sep)
    .join('/');
  if (!specifier.startsWith('.')) specifier = `./${specifier}`;
  return specifier;
}

/** Paths written out (`src/commands/generate.ts`, `out/src/studio/studioPanel.js`) in code, docs and configs. */
function rewritePathStrings(text) {
  let result = text;
  for (const [oldPath, newPath] of moves) {
    const oldName = rel(oldPath).replace(/\.ts$/, '');
    const newName = rel(newPath).replace(/\.ts$/, '');
    const pattern = new RegExp(`(?<![\\w-])${escapeRegExp(oldName)}(?![\\w/-])`, 'g');
    result = result.replace(pattern, newName);
    // Shorter names in comments and READMEs (`commands/writePrompt.ts`, core's `gateway/client.ts`):
    // only with the extension, so that a room's own name is never taken for a file.
    for (const prefix of ['src/', 'src/core/']) {
      if (!oldName.startsWith(prefix)) continue;
      const shortOld = oldName.slice(prefix.length);
      const shortNew = newName.slice(prefix.length);
      result = result.replace(new RegExp(`(?<![\\w/.-])${escapeRegExp(shortOld)}(?=\\.(ts|js)\\b)`, 'g'), shortNew);
    }
  }
  return result;
}

function* walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile()) yield full;
  }
}

function rel(file) {
  return path.relative(root, file).split(path.sep).join('/');
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
