// Starts the gateway emulator (tools/emulator/, another part of the project) for a test run.
// Loaded with a guarded require so the harness compiles and fails clearly while it is missing.
import * as fs from 'fs';
import * as path from 'path';
// Types only (erased at run time); the module itself is required lazily below.
import type { DEMO_KEYS, RunningEmulator, startEmulator } from '../../tools/emulator/server';

/** The running emulator as tools/emulator/server.ts describes it ({url, port, keys, state, close()}). */
export type EmulatorHandle = RunningEmulator;

interface EmulatorModule {
  startEmulator: typeof startEmulator;
  DEMO_KEYS: typeof DEMO_KEYS;
}

/** out/test/harness -> out/tools/emulator/server.js (compiled from tools/emulator/server.ts). */
export const EMULATOR_MODULE = path.join(__dirname, '..', '..', 'tools', 'emulator', 'server');

function loadEmulatorModule(): EmulatorModule {
  const file = `${EMULATOR_MODULE}.js`;
  if (!fs.existsSync(file)) {
    const source = path.join(__dirname, '..', '..', '..', 'tools', 'emulator', 'server.ts');
    throw new Error(
      `The gateway emulator is not available: ${file} does not exist.\n` +
        (fs.existsSync(source)
          ? `Compile the tests first: npm run compile-tests`
          : `tools/emulator/server.ts (startEmulator, DEMO_KEYS) has not been written yet.`),
    );
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily so the harness runs (and says why) while the emulator is missing.
  const mod = require(EMULATOR_MODULE) as Partial<EmulatorModule>;
  if (typeof mod.startEmulator !== 'function') {
    throw new Error(`${file} does not export startEmulator({port, quiet}).`);
  }
  return mod as EmulatorModule;
}

/** Starts the emulator on a free loopback port. */
export async function startSuiteEmulator(): Promise<EmulatorHandle> {
  const mod = loadEmulatorModule();
  const handle = await mod.startEmulator({ port: 0, quiet: true });
  if (!handle || typeof handle.url !== 'string' || typeof handle.close !== 'function') {
    throw new Error('startEmulator() did not resolve {url, port, keys, close()}.');
  }
  return handle;
}

/** Environment for the extension host (and through it, the tests). */
export function emulatorEnv(emulator: EmulatorHandle): Record<string, string> {
  return {
    GATEWAY_IMAGES_TEST_EMULATOR_URL: emulator.url,
    GATEWAY_IMAGES_TEST_KEYS: JSON.stringify(emulator.keys),
  };
}
