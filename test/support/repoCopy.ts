// A temporary copy of the repository for tests that run the README's commands as typed: a command
// that builds (out/, dist/, a .vsix) builds there, never in the working tree that the other test
// layers are loading at the same time. node_modules (and, when asked, .cache with the test VS Code)
// are linked, not copied. No vscode import.
import { cpSync, existsSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '../../..');

/** Never copied: installs, caches, history and results (what a clone does not have, or is linked). */
const NOT_COPIED = new Set(['node_modules', '.cache', '.git', 'test-results', '.vscode-test']);

/**
 * Copies `entries` of the repository (default: all of it but NOT_COPIED, built output included, so
 * an incremental build there is as quick as here) into a new temporary folder and links
 * node_modules, and `.cache` when `withCache` (code-server as the test setup installed it).
 */
export function copyRepo(entries?: readonly string[], options: { withCache?: boolean } = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-images-repo-'));
  for (const item of entries ?? readdirSync(REPO).filter((name) => !NOT_COPIED.has(name))) {
    if (existsSync(path.join(REPO, item))) cpSync(path.join(REPO, item), path.join(dir, item), { recursive: true });
  }
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  if (options.withCache && existsSync(path.join(REPO, '.cache'))) symlinkSync(path.join(REPO, '.cache'), path.join(dir, '.cache'), 'dir');
  return dir;
}
