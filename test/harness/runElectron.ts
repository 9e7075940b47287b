// CLI: runs the same mocha entry in desktop VS Code through @vscode/test-electron.
//   node out/test/harness/runElectron.js [--tests <entry>] [--workspace <folder>] [--grep <p>] [--timeout <ms>]
// test-electron DOWNLOADS VS Code (into .vscode-test/) from Microsoft: this needs internet and,
// on a Linux machine without a display, xvfb-run. It cannot run on the offline CI machine; the
// code-server runner (runIntegration.ts) covers that. Version: GATEWAY_IMAGES_VSCODE_VERSION
// (default 1.100.3, the engines.vscode floor and the version code-server 4.100.3 embeds).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runTests } from '@vscode/test-electron';
import { parseArgs, resolveEntry, testEntryEnv } from './cli';
import { type EmulatorHandle, emulatorEnv, startSuiteEmulator } from './emulator';
import { checkExtensionBuilt } from './workbenchConfig';
import { FIXTURE_WORKSPACE, REPO_ROOT } from './paths';

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), 'runElectron.js');
  const extensionTestsPath = resolveEntry(args.tests);
  checkExtensionBuilt();

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-images-electron-'));
  let emulator: EmulatorHandle | undefined;
  const cleanup = () => fs.rmSync(root, { recursive: true, force: true });
  process.once('exit', cleanup);
  try {
    const workspace = args.workspace ?? path.join(root, 'workspace');
    if (!args.workspace) fs.cpSync(FIXTURE_WORKSPACE, workspace, { recursive: true });
    const userDataDir = path.join(root, 'user-data');
    const extensionsDir = path.join(root, 'extensions');

    emulator = await startSuiteEmulator();
    // Desktop VS Code is a local window: machine-scoped settings apply from User settings.
    fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(userDataDir, 'User', 'settings.json'),
      JSON.stringify(
        {
          'gatewayImages.baseUrl': emulator.url,
          'workbench.startupEditor': 'none',
          'telemetry.telemetryLevel': 'off',
          'update.mode': 'none',
          'extensions.autoCheckUpdates': false,
          'extensions.autoUpdate': false,
        },
        null,
        2,
      ),
    );

    return await runTests({
      version: process.env.GATEWAY_IMAGES_VSCODE_VERSION || '1.100.3',
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath,
      extensionTestsEnv: { ...emulatorEnv(emulator), ...testEntryEnv(args) },
      launchArgs: [workspace, '--disable-extensions', `--user-data-dir=${userDataDir}`, `--extensions-dir=${extensionsDir}`],
    });
  } finally {
    await Promise.resolve(emulator?.close()).catch(() => undefined);
    cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    // runTests rejects with TestRunFailedError (code) when the suite fails.
    const code = typeof (err as { code?: unknown })?.code === 'number' ? (err as { code: number }).code : 1;
    process.stderr.write(`[harness] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(code === 0 ? 1 : code);
  },
);
