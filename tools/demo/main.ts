// `npm run demo`: the gateway emulator plus a real VS Code (code-server, as installed by the test
// harness) with the extension installed from a freshly packaged .vsix and configured to the
// emulator; the demo's key setter (key-setter/) enters a demo key through the Set API Key command. Prints the URL to open; Ctrl+C stops everything and cleans up:
// code-server's whole process group is gone, the emulator's port is closed and the temporary
// folder removed before the process exits. test/e2e/demo.e2e.test.ts checks exactly that.
import { type ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startEmulator } from '../emulator';
import { freePort, killGroup, waitForCodeServer } from '../../test/harness/processes';
import { CODE_SERVER_FLAGS, NO_PORT_SCAN } from '../../test/harness/workbenchConfig';
import { packageVsix } from '../../test/harness/packageVsix';
import { CODE_SERVER_ENTRY, FIXTURE_WORKSPACE, readManifest, REPO_ROOT } from '../../test/harness/paths';
import { ensureSetup } from '../../test/harness/setup';

/** tools/demo/key-setter, from out/tools/demo (compiled) or tools/demo (sources). */
const KEY_SETTER_DIR = path.join(REPO_ROOT, 'tools', 'demo', 'key-setter');

function log(message: string): void {
  process.stdout.write(`[demo] ${message}\n`);
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

/** The environment of code-server: this one, without an enclosing VS Code's or npm's variables. */
function serverEnv(home: string, tmp: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE' || k.startsWith('npm_')) continue;
    env[k] = v;
  }
  // Everything code-server writes (config, sockets, caches) stays inside the demo's folder.
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    TMPDIR: tmp,
    EXTENSIONS_GALLERY: '{}',
  };
}

/**
 * The demo's own little extension (key-setter/, plain JavaScript, never shipped): it sets the demo
 * key through Gateway Images' Set API Key command. Packaged with vsce, as the product is.
 */
async function packageKeySetter(out: string): Promise<string> {
  const { createVSIX } = await import('@vscode/vsce');
  await createVSIX({ cwd: KEY_SETTER_DIR, packagePath: out, allowMissingRepository: true, skipLicense: true, dependencies: false });
  return out;
}

async function main(): Promise<void> {
  const port = Number(process.argv[process.argv.indexOf('--port') + 1]) || (await freePort());
  await ensureSetup();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-images-demo-'));
  const dirs = {
    home: path.join(root, 'home'),
    tmp: path.join(root, 'tmp'),
    userData: path.join(root, 'user-data'),
    extensions: path.join(root, 'extensions'),
    workspace: path.join(root, 'workspace'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.cpSync(FIXTURE_WORKSPACE, dirs.workspace, { recursive: true });

  let server: ChildProcess | undefined;
  const emulator = await startEmulator({ port: 0, quiet: false });
  let stopping: Promise<void> | undefined;
  /** Once: code-server's group (SIGTERM, then SIGKILL) until it is empty, the emulator, the folder. */
  const cleanup = () =>
    (stopping ??= (async () => {
      if (server) await killGroup(server);
      await emulator.close().catch(() => undefined);
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
    })());
  // Ctrl+C in a terminal signals the whole foreground group: this process gets SIGINT from the
  // terminal and again from npm, which forwards it. Handled on every signal (never `once`: a second
  // one would kill the process mid-cleanup and leave code-server running); the clean-up runs once.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      log('stopping…');
      void cleanup().finally(() => {
        log('stopped: code-server and the emulator are gone, the temporary folder is removed.');
        process.exit(0);
      });
    });
  }

  try {
    log('packaging the extension (scripts/package-vsix.mjs, as npm run package)…');
    const vsix = packageVsix({ out: path.join(root, `${readManifest().name}.vsix`), restoreDevBundle: true });
    const keySetter = await packageKeySetter(path.join(root, 'demo-key-setter.vsix'));
    const env = serverEnv(dirs.home, dirs.tmp);
    // Both in one run of code-server's command line (each run costs a start of code-server).
    execFileSync(
      process.execPath,
      [
        CODE_SERVER_ENTRY,
        '--extensions-dir',
        dirs.extensions,
        '--user-data-dir',
        dirs.userData,
        ...[vsix, keySetter].flatMap((file) => ['--install-extension', file]),
      ],
      { env, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const settings = {
      'gatewayImages.baseUrl': emulator.url,
      'workbench.startupEditor': 'none',
      'telemetry.telemetryLevel': 'off',
      ...NO_PORT_SCAN, // the demo may idle for hours
    };
    writeJson(path.join(dirs.userData, 'User', 'settings.json'), settings);
    writeJson(path.join(dirs.userData, 'Machine', 'settings.json'), { 'gatewayImages.baseUrl': emulator.url });

    // For the demo's key setter (key-setter/), which passes it to the Set API Key command once.
    env.GATEWAY_IMAGES_DEMO_KEY = emulator.keys.budget;
    server = spawn(
      process.execPath,
      [CODE_SERVER_ENTRY, '--bind-addr', `127.0.0.1:${port}`, ...CODE_SERVER_FLAGS, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions],
      { cwd: root, env, detached: true, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    server.on('exit', (code, signal) => {
      if (stopping) return;
      log(`code-server exited (${signal ?? code}); stopping.`);
      void cleanup().finally(() => process.exit(code ?? 1));
    });
    let serverExited: string | undefined;
    server.on('exit', (code, signal) => (serverExited = `code-server exited (${signal ?? code})`));
    // Print the URL only once it answers: a browser opened at once must not meet a refused connection.
    await waitForCodeServer(
      `http://127.0.0.1:${port}`,
      120_000,
      () => serverExited,
      () => '(its output went to this terminal)',
    );
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`;
    log(`gateway emulator: ${emulator.url} (demo key with a budget: ${emulator.keys.budget})`);
    log(`temporary folder: ${root} (workspace: ${dirs.workspace})`);
    log(`code-server: pid ${server.pid}, port ${port}`);
    log(`open VS Code in your browser: ${url}`);
    log('Run "Gateway Images: Generate Image" from the palette, right-click images/sample.png, or open the Image Studio.');
    log('Press Ctrl+C to stop.');
  } catch (error) {
    await cleanup();
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[demo] failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
