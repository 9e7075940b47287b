// The Debian packages the tests need (installed with apt-get as root; otherwise the command to run
// is printed). Debian/Ubuntu only.
import { spawnSync } from 'child_process';
import { log, run, SetupError } from './setupProcess';

/**
 * Debian packages: the browser, ripgrep for search, the build tools node-gyp needs for the few native
 * modules the tests load (paths.ts: no Kerberos, terminal or keychain headers), a proxy and openssl.
 */
export const APT_PACKAGES = [
  // Chromium's headless shell (paths.ts, CHROMIUM): the tests' browser, and the fonts it draws the
  // workbench with (a recommendation of chromium-common; the others, udev, upower, a notification
  // daemon and what they pull in, a headless browser does not use).
  'chromium-headless-shell',
  'fonts-liberation',
  'ripgrep',
  // node-gyp needs a compiler, make and python3 to rebuild the native modules.
  'build-essential',
  'python3',
  // SQLite to link 1.139's @vscode/sqlite3 against (setup.ts, npmEnv), instead of compiling its own.
  'libsqlite3-dev',
  // A real forward proxy and a CA made in the test for `npm run test:crash` (proxy and TLS in VS Code).
  'tinyproxy',
  'openssl',
];

/**
 * What the unit tests use of them (they make CAs with openssl): `--unit-packages` installs only
 * these, before the unit tests start; the rest installs beside them.
 */
export const UNIT_APT_PACKAGES = ['openssl'];

/** The command that installs `packages` (what the setup runs as root), for a person to run. */
export function aptInstallCommand(packages: readonly string[], sudo: string): string {
  return `${sudo}apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

function isInstalled(pkg: string): boolean {
  const r = spawnSync('dpkg', ['-s', pkg], { stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' });
  return r.status === 0 && /^Status: install ok installed$/m.test(r.stdout);
}

export function missingAptPackages(packages: readonly string[] = APT_PACKAGES): string[] {
  const dpkg = spawnSync('dpkg', ['--version'], { stdio: 'ignore' });
  if (dpkg.error || dpkg.status !== 0) {
    throw new SetupError('dpkg is not available: this setup supports Debian/Ubuntu only.');
  }
  return packages.filter((p) => !isInstalled(p));
}

/** Installs missing Debian packages as root (true when it installed some); otherwise prints the command and fails. */
export async function ensureAptPackages(packages: readonly string[] = APT_PACKAGES): Promise<boolean> {
  const missing = missingAptPackages(packages);
  if (missing.length === 0) return false;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    const command = `sudo apt-get update && ${aptInstallCommand(missing, 'sudo DEBIAN_FRONTEND=noninteractive ')}`;
    process.stderr.write(`[setup] Missing Debian packages: ${missing.join(' ')}\n`);
    process.stderr.write(`[setup] Run this, then run the setup again:\n${command}\n`);
    throw new SetupError(`missing Debian packages: ${missing.join(' ')}`);
  }
  log(`Installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update'], { env });
  // Only what the packages depend on: their recommendations (about 100 more packages for the browser
  // alone: systemd, avahi, Perl, printing) took most of the install's time and the tests use none.
  await run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
  const still = missingAptPackages(packages);
  if (still.length > 0) throw new SetupError(`apt-get did not install: ${still.join(' ')}`);
  return true;
}
