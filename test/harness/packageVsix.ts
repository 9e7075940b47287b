// The demo and the bench build their .vsix through scripts/package-vsix.mjs, the same script as
// `npm run package`: one way of packaging for all three.
import { spawnSync } from 'child_process';
import * as path from 'path';
import { REPO_ROOT } from './paths';

export const PACKAGE_SCRIPT = path.join(REPO_ROOT, 'scripts', 'package-vsix.mjs');

export interface PackageOptions {
  /** Where to write the .vsix. */
  out: string;
  /** Rebuild the development bundles into dist/ afterwards (leave the tree as it was). */
  restoreDevBundle?: boolean;
  timeoutMs?: number;
}

/** Runs scripts/package-vsix.mjs; throws with its output when it fails. */
export function packageVsix(options: PackageOptions): string {
  const args = [PACKAGE_SCRIPT, '--out', options.out];
  if (options.restoreDevBundle) args.push('--restore-dev-bundle');
  const r = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8', input: '', timeout: options.timeoutMs ?? 180_000 });
  if (r.status !== 0) throw new Error(`${(r.stderr || r.stdout || `exit ${r.status ?? r.signal}`).trim()}`);
  return options.out;
}
