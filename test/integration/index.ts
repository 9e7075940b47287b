// The one mocha entry for the integration suite, loaded by VS Code's extension host.
// Used by both runners: code-server (test/harness/runIntegration.ts, extensionTestsPath in the
// workbench payload) and desktop VS Code (test/harness/runElectron.ts, @vscode/test-electron).
// Environment: GATEWAY_IMAGES_TEST_GREP (mocha grep), GATEWAY_IMAGES_TEST_TIMEOUT (ms per test),
// GATEWAY_IMAGES_TEST_SUBSET=version-sensitive (without the suites of onOldestOnly.ts).
import * as fs from 'fs';
import * as path from 'path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import SummaryReporter from '../harness/summaryReporter';
import { selectTestFiles } from './onOldestOnly';

/** All *.test.js files below dir, sorted, without a glob dependency. */
export function findTestFiles(dir: string, suffix = '.test.js'): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTestFiles(full, suffix));
    else if (entry.isFile() && entry.name.endsWith(suffix)) found.push(full);
  }
  return found.sort();
}

/**
 * After each test, its notifications go: each test stands alone, and the workbench lays out every
 * toast again for each new one (toasts left by earlier tests cost the page a fifth of its CPU in a
 * 1.100.3 run). The tests read messages through the wrapped vscode.window functions, not the toasts.
 */
async function clearNotifications(): Promise<void> {
  await vscode.commands.executeCommand('notifications.clearAll').then(undefined, () => undefined);
}

export function run(): Promise<void> {
  const timeout = Number(process.env.GATEWAY_IMAGES_TEST_TIMEOUT) || 60_000;
  const grep = process.env.GATEWAY_IMAGES_TEST_GREP;
  const mocha = new Mocha({
    ui: 'bdd',
    color: true,
    timeout,
    reporter: SummaryReporter,
    rootHooks: { afterEach: clearNotifications },
    ...(grep ? { grep } : {}),
  });

  // This file is out/test/integration/index.js; the suites are compiled next to it.
  const files = selectTestFiles(findTestFiles(__dirname), process.env.GATEWAY_IMAGES_TEST_SUBSET);
  if (files.length === 0) return Promise.reject(new Error(`No *.test.js files under ${__dirname}`));
  for (const file of files) mocha.addFile(file);

  return new Promise<void>((resolve, reject) => {
    try {
      mocha.run((failures) => {
        if (failures > 0) reject(new Error(`${failures} integration test(s) failed.`));
        else resolve();
      });
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
