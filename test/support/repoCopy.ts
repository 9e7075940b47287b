// A temporary copy of the repository for tests that run the README's commands as typed: a command
// that builds (out/, dist/, a .vsix) builds there, never in the working tree that the other test
// layers are loading at the same time. node_modules (and, when asked, .cache with the test VS Code)
// are linked, not copied. No vscode import.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '../../..');

/** Never copied: installs, caches, history and results (what a clone does not have, or is linked). */
const NOT_COPIED = new Set(['node_modules', '.cache', '.git', 'test-results', '.vscode-test']);

/**
 * Copies `entries` of the repository (default: all of it but NOT_COPIED, built output included, so
 * the build there finds it current) into a new temporary folder and links node_modules, and
 * `.cache` when `withCache` (code-server as the test setup installed it).
 */
export function copyRepo(entries?: readonly string[], options: { withCache?: boolean } = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-images-repo-'));
  for (const item of entries ?? readdirSync(REPO).filter((name) => !NOT_COPIED.has(name))) {
    // With their times: tsc's build mode (npm run build) finds out/ newer than every source, as here.
    if (existsSync(path.join(REPO, item))) cpSync(path.join(REPO, item), path.join(dir, item), { recursive: true, preserveTimestamps: true });
  }
  linkNodeModules(dir, entries === undefined);
  if (options.withCache && existsSync(path.join(REPO, '.cache'))) symlinkSync(path.join(REPO, '.cache'), path.join(dir, '.cache'), 'dir');
  return dir;
}

/**
 * node_modules in the copy: hard links to the repository's files (`cp -al`, 0.6 s for 21,000
 * files here) when the built output was copied, else one symbolic link. With hard links every
 * path under the copy is its own, as in a clone: tsc's incremental build info (out/.tsbuildinfo,
 * copied with out/) then matches and `npm run build` there checks nothing again. Through a
 * symbolic link tsc sees its libraries and @types under the repository's real path, unlike in
 * the build info: it checked the whole program again (23 s instead of 12 s on a loaded 2-core
 * machine, for each README command). A symbolic link where hard links cannot be made (another
 * file system, no cp).
 */
function linkNodeModules(dir: string, hard: boolean): void {
  const from = path.join(REPO, 'node_modules');
  const to = path.join(dir, 'node_modules');
  if (hard && process.platform !== 'win32' && spawnSync('cp', ['-al', from, to], { stdio: 'ignore' }).status === 0) return;
  rmSync(to, { recursive: true, force: true });
  symlinkSync(from, to, 'dir');
}
