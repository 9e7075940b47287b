#!/usr/bin/env node
// The one way this repository builds its .vsix: `npm run package`, `npm run demo` and
// `npm run bench` all come here. Production bundles, then `vsce package`.
//
// The manifest names no repository (none is known yet, and an invented one would send people
// nowhere): `--allow-missing-repository`, and `--no-rewrite-relative-links`, since vsce can rewrite
// the README's relative links (docs/) only against a repository. What the README shows ships inside
// the .vsix instead (see .vscodeignore).
//
//   node scripts/package-vsix.mjs [--out file.vsix] [--restore-dev-bundle]
//
// --restore-dev-bundle rebuilds the development bundles (source maps) into dist/ afterwards, for
// callers that leave the working tree as they found it (the demo, the bench).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const VSCE_ARGS = ['package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository'];

/**
 * Top-level folders vsce must not walk. It lists every file of the folder before .vscodeignore
 * applies: with the harness's code-servers in .cache that took 22 s instead of 4.
 */
const NOT_STAGED = new Set(['node_modules', '.cache', '.git', 'out', '.vscode-test', 'test-results']);

/** A copy of the repository without NOT_STAGED, where vsce packages (.vscodeignore still decides). */
function stage(root) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-images-vsix-'));
  cpSync(root, dir, { recursive: true, filter: (source) => !NOT_STAGED.has(path.relative(root, source).split(path.sep)[0]) });
  return dir;
}

function run(args, cwd, what) {
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', input: '', stdio: ['pipe', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    throw new Error(`${what} failed (exit ${result.status ?? result.signal}):\n${output}`);
  }
  return result.stdout ?? '';
}

/**
 * Builds the .vsix of the repository at `root` and returns its path.
 * @param {{ root?: string, out?: string, restoreDevBundle?: boolean }} [options]
 */
export function packageVsix(options = {}) {
  const root = options.root ?? ROOT;
  const vsce = createRequire(path.join(root, 'package.json')).resolve('@vscode/vsce/vsce');
  run(['esbuild.mjs', '--production'], root, 'the production build (node esbuild.mjs --production)');
  const staged = stage(root);
  try {
    const { name, version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    // vsce's own default name, in the repository (it would write into the staging copy).
    const out = path.resolve(options.out ?? path.join(root, `${name}-${version}.vsix`));
    const args = [vsce, ...VSCE_ARGS, '--out', out];
    run(args, staged, `vsce ${args.slice(1).join(' ')}`);
    return out;
  } finally {
    rmSync(staged, { recursive: true, force: true });
    if (options.restoreDevBundle) run(['esbuild.mjs'], root, 'the development build (node esbuild.mjs)');
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf('--out');
  const unknown = args.filter((a, i) => !['--out', '--restore-dev-bundle'].includes(a) && !(outIndex >= 0 && i === outIndex + 1));
  if (unknown.length || (outIndex >= 0 && !args[outIndex + 1])) {
    console.error(`usage: node scripts/package-vsix.mjs [--out file.vsix] [--restore-dev-bundle] (unknown: ${unknown.join(' ') || '--out needs a file'})`);
    process.exit(2);
  }
  try {
    const vsix = packageVsix({ out: outIndex >= 0 ? args[outIndex + 1] : undefined, restoreDevBundle: args.includes('--restore-dev-bundle') });
    console.log(`packaged ${path.relative(process.cwd(), vsix) || vsix}`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
