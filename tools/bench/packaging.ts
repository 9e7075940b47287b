// The production bundles and their sizes, the .vsix, and activate() in the real VS Code (the test
// harness's code-server), with the baseline of the same extension host that its target is a ratio to.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { aptInstallCommand, missingAptPackages } from '../../test/harness/aptPackages';
import { packageVsix } from '../../test/harness/packageVsix';
import { selectedVscodeTarget } from '../../test/harness/paths';
import { isCodeServerInstalled } from '../../test/harness/setup';
import { type BenchTarget, median } from './scenario';

export const ROOT = path.resolve(__dirname, '..', '..', '..');

export const TARGET_BUNDLE_BYTES = 150 * 1000;

/** activate() / loading the same bundle once more in the same extension host (medians). */
export const TARGET_ACTIVATION_RATIO = 1.5;

export interface BundleInfo {
  ok: boolean;
  error?: string;
  files: Record<string, number>;
  activationBytes: number;
}

export function productionBundle(): BundleInfo {
  const build = spawnSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0)
    return { ok: false, error: (build.stderr || build.stdout || `exit ${build.status}`).trim().slice(0, 500), files: {}, activationBytes: 0 };
  const files: Record<string, number> = {};
  for (const name of readdirSync(path.join(ROOT, 'dist'))) {
    if (name.endsWith('.js')) files[name] = statSync(path.join(ROOT, 'dist', name)).size;
  }
  return { ok: true, files, activationBytes: (files['extension.js'] ?? 0) + (files['errors.js'] ?? 0) };
}

export function restoreDevBundle(): void {
  spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, encoding: 'utf8' });
}

export function packageVsixRow(tmp: string): { ok: boolean; bytes?: number; error?: string } {
  const out = path.join(tmp, 'gateway-images.vsix');
  try {
    packageVsix({ out, timeoutMs: 120_000 });
  } catch (error) {
    return {
      ok: false,
      error: String(error instanceof Error ? error.message : error)
        .split('\n')
        .slice(-3)
        .join(' | '),
    };
  }
  return existsSync(out) ? { ok: true, bytes: statSync(out).size } : { ok: false, error: 'no .vsix was written' };
}

export interface Activation {
  /** Medians of the runs, in ms: activate(), and loading the bundle once more (the baseline). */
  ms?: number;
  loadMs?: number;
  samples?: { ms: number; loadMs: number }[];
  note: string;
  /** Not asked for (--no-activation, --quick, --only): not measured, and not counted as a failure. */
  skipped?: true;
}

/**
 * What activate() needs, made ready before the rows run: the test harness's code-server (VS Code
 * `oldest`, or GATEWAY_IMAGES_TEST_VSCODE's), installed into .cache/ by its own set-up when missing,
 * as `npm run setup:vscode -- --vscode <name>` does. Nothing outside the repository is touched: when
 * Debian packages are missing too, it only prints the command that installs them. Says at the start
 * what it does; returns a note when activate() cannot be measured (the row then reads "not measured").
 */
export function prepareActivation(log: (line: string) => void): { note: string } | undefined {
  const t = selectedVscodeTarget();
  if (isCodeServerInstalled(t)) return undefined;
  const setup = `npm run setup:vscode -- --vscode ${t.name}`;
  const what = `activate() is measured in the test harness's VS Code (code-server ${t.codeServer}, ${t.name}), which is not installed`;
  let missing: string[];
  try {
    missing = missingAptPackages();
  } catch (error) {
    log(`bench: ${what}, and ${error instanceof Error ? error.message : String(error)} The activate() row will read "not measured".`);
    return { note: `not measured: ${setup} needs Debian or Ubuntu` };
  }
  if (missing.length) {
    const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
    const command = `${aptInstallCommand(missing, sudo)} && ${setup}`;
    const packages = `${missing.length === 1 ? 'is the Debian package' : 'are the Debian packages'} ${missing.join(', ')}`;
    log(`bench: ${what}, nor ${packages}. Run this once, then the bench again:\n  ${command}`);
    log('bench: the bench goes on without it; the activate() row will read "not measured" (add --no-activation to skip it).');
    return { note: `not measured: run ${command}` };
  }
  log(`bench: ${what}: installing it into .cache/ first, as \`${setup}\` does (once, 1 to 2 minutes; --no-activation skips activate())…`);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'out', 'test', 'harness', 'setup.js'), '--vscode', t.name], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (r.status === 0 && isCodeServerInstalled(t)) return undefined;
  log(`bench: the set-up failed (exit ${r.status ?? r.signal}); the activate() row will read "not measured". Run \`${setup}\` to see why.`);
  return { note: `not measured: the set-up failed; run ${setup}` };
}

/** activate() in the real VS Code, `times` times (each a fresh code-server and extension host); the medians. */
export function measureActivation(times: number): Activation {
  const samples: { ms: number; loadMs: number }[] = [];
  const medians = () => ({ ms: median(samples.map((s) => s.ms)), loadMs: median(samples.map((s) => s.loadMs)), samples });
  for (let i = 0; i < times; i++) {
    const one = measureActivationOnce();
    if (!('ms' in one)) return samples.length ? { ...medians(), note: `${samples.length} run(s); then ${one.note}` } : one;
    samples.push(one);
  }
  return { ...medians(), note: `code-server via test/harness, median of ${samples.length}` };
}

function measureActivationOnce(): { ms: number; loadMs: number } | { note: string } {
  const runner = path.join(ROOT, 'out', 'test', 'harness', 'runIntegration.js');
  const entry = path.join(ROOT, 'out', 'tools', 'bench', 'activation', 'index.js');
  if (!existsSync(runner)) return { note: 'not measured: the harness is missing (out/test/harness/runIntegration.js)' };
  const vscode = selectedVscodeTarget().name;
  const r = spawnSync(process.execPath, [runner, '--tests', entry, '--vscode', vscode, '--overall-timeout', '150000'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 170_000,
  });
  const output = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
  const ms = /ACTIVATION_MS=([0-9.]+)/.exec(output);
  const load = /BUNDLE_LOAD_MS=([0-9.]+)/.exec(output);
  if (ms && load && r.status === 0) return { ms: Number(ms[1]), loadMs: Number(load[1]) };
  const last = output.trim().split('\n').filter(Boolean).slice(-2).join(' | ');
  return { note: `not measured: the harness's run failed (exit ${r.status ?? r.signal}: ${last.slice(0, 200)})` };
}

/** The lines and targets of the bundle, the .vsix and activate(). */
export function packagingReport(
  bundle: BundleInfo | undefined,
  vsix: ReturnType<typeof packageVsixRow> | undefined,
  activation: Activation,
  production: boolean,
): { lines: string[]; targets: BenchTarget[] } {
  const lines: string[] = [];
  const targets: BenchTarget[] = [];
  if (bundle) {
    if (bundle.ok) {
      lines.push(
        `Bundles (node esbuild.mjs --production): ${Object.entries(bundle.files)
          .map(([f, b]) => `${f} ${(b / 1000).toFixed(1)} KB`)
          .join(', ')}`,
      );
      lines.push(`  loaded at activation: extension.js + errors.js = ${bundle.activationBytes} bytes (${(bundle.activationBytes / 1000).toFixed(1)} KB)`);
      targets.push({
        name: 'activation bundle (extension.js + errors.js)',
        value: `${(bundle.activationBytes / 1000).toFixed(1)} KB`,
        target: `≤ ${TARGET_BUNDLE_BYTES / 1000} KB`,
        pass: bundle.activationBytes <= TARGET_BUNDLE_BYTES,
      });
    } else {
      lines.push(`Bundles: the production build failed: ${bundle.error}`);
      targets.push({ name: 'activation bundle', value: 'build failed', target: `≤ ${TARGET_BUNDLE_BYTES / 1000} KB`, pass: false });
    }
    lines.push(
      vsix?.ok
        ? `.vsix (scripts/package-vsix.mjs, as npm run package): ${vsix.bytes} bytes (${((vsix.bytes ?? 0) / 1000).toFixed(1)} KB)`
        : `.vsix: not packaged (${vsix?.error ?? 'build failed'})`,
    );
  }
  const name = 'activate() / loading the bundle once more';
  if (activation.ms !== undefined && activation.loadMs !== undefined) {
    const ratio = activation.ms / activation.loadMs;
    lines.push(
      `activate(): ${activation.ms.toFixed(1)} ms (activationMs from the extension's API; ${activation.note}: ${activation.samples?.map((s) => s.ms.toFixed(1)).join(', ')} ms; ${production ? 'production' : 'current'} bundle)`,
      `  baseline: loading extension.js once more in the same extension host (compiled anew and its top level run), median of 5 per run: ${activation.loadMs.toFixed(1)} ms (${activation.samples?.map((s) => s.loadMs.toFixed(1)).join(', ')} ms)`,
    );
    targets.push({
      name,
      value: `${ratio.toFixed(2)} (${activation.ms.toFixed(1)} / ${activation.loadMs.toFixed(1)} ms)`,
      target: `≤ ${TARGET_ACTIVATION_RATIO}`,
      pass: ratio <= TARGET_ACTIVATION_RATIO,
      time: true,
    });
  } else if (activation.skipped) {
    lines.push(`activate(): not measured (${activation.note})`);
    targets.push({ name, value: `not measured (${activation.note})`, target: `≤ ${TARGET_ACTIVATION_RATIO}`, pass: undefined });
  } else {
    // Asked for and not measured: not a pass. It counts as a failed target (see run.ts's exit code).
    lines.push(`activate(): ${activation.note}`);
    targets.push({ name, value: activation.note, target: `≤ ${TARGET_ACTIVATION_RATIO}`, pass: false });
  }
  return { lines, targets };
}
