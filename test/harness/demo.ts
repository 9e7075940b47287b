// `npm run demo`: the gateway emulator plus a real VS Code (code-server, as installed by the test
// harness) with the extension installed from a freshly packaged .vsix and configured to the
// emulator with a demo key. Prints the URL to open; Ctrl+C stops everything and cleans up.
import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startEmulator } from '../emulator';
import { CODE_SERVER_FLAGS, freePort } from './launch';
import { CODE_SERVER_ENTRY, FIXTURE_WORKSPACE, readManifest, REPO_ROOT } from './paths';
import { ensureSetup } from './setup';

function log(message: string): void {
  process.stdout.write(`[demo] ${message}\n`);
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

async function packageExtension(outDir: string): Promise<string> {
  const manifest = readManifest();
  const vsix = path.join(outDir, `${manifest.name}.vsix`);
  execFileSync(process.execPath, [require.resolve('@vscode/vsce/vsce'), 'package', '--no-dependencies', '--out', vsix], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return vsix;
}

async function main(): Promise<void> {
  const port = Number(process.argv[process.argv.indexOf('--port') + 1]) || (await freePort());
  await ensureSetup();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-images-demo-'));
  const dirs = {
    home: path.join(root, 'home'),
    userData: path.join(root, 'user-data'),
    extensions: path.join(root, 'extensions'),
    workspace: path.join(root, 'workspace'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.cpSync(FIXTURE_WORKSPACE, dirs.workspace, { recursive: true });

  let server: ChildProcess | undefined;
  const emulator = await startEmulator({ port: 0, quiet: false });
  const cleanup = async () => {
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await emulator.close().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      log('stopping…');
      void cleanup().finally(() => process.exit(0));
    });
  }

  try {
    log('packaging the extension…');
    const vsix = await packageExtension(root);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: dirs.home, XDG_CONFIG_HOME: path.join(dirs.home, '.config'), EXTENSIONS_GALLERY: '{}' };
    execFileSync(process.execPath, [CODE_SERVER_ENTRY, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData, '--install-extension', vsix], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const settings = { 'gatewayImages.baseUrl': emulator.url, 'workbench.startupEditor': 'none', 'telemetry.telemetryLevel': 'off' };
    writeJson(path.join(dirs.userData, 'User', 'settings.json'), settings);
    writeJson(path.join(dirs.userData, 'Machine', 'settings.json'), { 'gatewayImages.baseUrl': emulator.url });

    // The extension moves this key into SecretStorage on first start (loopback base URL only).
    env.GATEWAY_IMAGES_DEMO_KEY = emulator.keys.budget;
    server = spawn(
      process.execPath,
      [CODE_SERVER_ENTRY, '--bind-addr', `127.0.0.1:${port}`, ...CODE_SERVER_FLAGS, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions],
      { env, detached: true, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    server.on('exit', (code) => {
      log(`code-server exited (${code})`);
      void cleanup().finally(() => process.exit(code ?? 1));
    });
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`;
    log(`gateway emulator: ${emulator.url} (demo key with a budget: ${emulator.keys.budget})`);
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
