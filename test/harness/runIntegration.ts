// CLI: runs a mocha entry (default out/test/integration/index.js) inside a real VS Code.
//   node out/test/harness/runIntegration.js [--tests <entry module>] [--workspace <folder>]
//        [--grep <pattern>] [--timeout <ms per test>] [--overall-timeout <ms>] [--verbose]
// Exit code: the suite's, as reported by window.codeAutomationExit (never code-server's log).
import * as fs from 'fs';
import * as path from 'path';
import { launchWorkbench, type Workbench } from './launch';
import { closeAllWorkbenches, deadline } from './processes';
import { parseArgs, resolveEntry, testEntryEnv } from './cli';
import { ensureRussianLanguagePack } from './languagePack';
import { LM_PROVIDER_FIXTURE, RESULTS_DIR } from './paths';

function saveFailureArtifacts(wb: Workbench | undefined, reason: string): void {
  if (!wb) return;
  const dir = path.join(RESULTS_DIR, `integration-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'relayed.log'), wb.logLines.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'code-server.log'), wb.serverLog());
  fs.writeFileSync(path.join(dir, 'reason.txt'), reason + '\n');
  for (const { relativePath, contents } of wb.vscodeLogs) {
    const file = path.join(dir, 'vscode-logs', relativePath);
    if (!file.startsWith(dir + path.sep)) continue;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, contents);
  }
  process.stderr.write(`[harness] logs saved in ${path.relative(process.cwd(), dir) || dir}\n`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), 'runIntegration.js');
  const entry = resolveEntry(args.tests);
  const started = Date.now();
  const env = testEntryEnv(args);

  let wb: Workbench | undefined;
  let code: number;
  try {
    const run = (async () => {
      // The language model provider fixture (test/fixtures/lm-provider) is installed in every run.
      const extensions = [LM_PROVIDER_FIXTURE, ...(args.locale ? [ensureRussianLanguagePack(args.vscode)] : [])];
      const locale = args.locale ? { locale: args.locale } : {};
      wb = await launchWorkbench({
        extensions,
        extensionTestsPath: entry,
        workspace: args.workspace,
        env,
        verbose: args.verbose || undefined,
        vscode: args.vscode,
        workspaceTrust: args.workspaceTrust,
        ...locale,
      });
      process.stdout.write(
        `[harness] VS Code ${wb.serverUrl} (code-server ${wb.vscode.codeServer}, ${wb.vscode.name}), workspace ${wb.workspace}, emulator ${wb.emulator?.url}\n`,
      );
      return wb.exitCode;
    })();
    code = await Promise.race([run, deadline(args.overallTimeoutMs, 'The integration run')]);
    if (code !== 0) saveFailureArtifacts(wb, `suite exit code ${code}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`[harness] ERROR: ${message}\n`);
    saveFailureArtifacts(wb, message);
    code = 1;
  } finally {
    await wb?.close();
    await closeAllWorkbenches(); // one that was still starting when the deadline hit
  }
  process.stdout.write(
    `[harness] integration tests (code-server ${args.vscode.codeServer}) ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return code;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`[harness] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
