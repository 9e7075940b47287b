// Command line shared by runIntegration (code-server) and runElectron (@vscode/test-electron).
import * as fs from 'fs';
import * as path from 'path';
import { VERSION_SENSITIVE_ONLY } from '../integration/onOldestOnly';
import { DEFAULT_INTEGRATION_ENTRY, selectedVscodeTarget, type VscodeTarget, vscodeTarget } from './paths';

export interface Args {
  tests: string;
  workspace?: string;
  grep?: string;
  timeout?: string;
  overallTimeoutMs: number;
  verbose: boolean;
  /** --vscode oldest|current (default: env GATEWAY_IMAGES_TEST_VSCODE, else oldest). */
  vscode: VscodeTarget;
  /** --locale ru: display language, with the harness's language pack installed. */
  locale?: string;
  /** --workspace-trust: Workspace Trust on, the folder opens untrusted. */
  workspaceTrust: boolean;
  /** --version-sensitive-only: without the suites that run on the oldest VS Code only (test/integration/onOldestOnly.ts). */
  versionSensitiveOnly: boolean;
}

const USAGE =
  'usage: node out/test/harness/runIntegration.js [--tests <entry module>] [--workspace <folder>] ' +
  '[--grep <pattern>] [--timeout <ms>] [--overall-timeout <ms>] [--vscode oldest|current] [--locale ru] [--workspace-trust] [--version-sensitive-only] [--verbose]';

export function parseArgs(argv: string[], script: string): Args {
  const usage = USAGE.replace('runIntegration.js', script);
  const args: Args = {
    tests: DEFAULT_INTEGRATION_ENTRY,
    overallTimeoutMs: Number(process.env.GATEWAY_IMAGES_TEST_OVERALL_TIMEOUT) || 10 * 60_000,
    verbose: false,
    vscode: selectedVscodeTarget(),
    workspaceTrust: false,
    versionSensitiveOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value\n${usage}`);
      return v;
    };
    switch (flag) {
      case '--tests':
        args.tests = path.resolve(value());
        break;
      case '--workspace':
        args.workspace = path.resolve(value());
        break;
      case '--grep':
        args.grep = value();
        break;
      case '--timeout': {
        const v = value();
        if (!/^\d+$/.test(v)) throw new Error(`--timeout must be milliseconds, got ${v}`);
        args.timeout = v;
        break;
      }
      case '--overall-timeout': {
        const v = Number(value());
        if (!Number.isFinite(v) || v <= 0) throw new Error('--overall-timeout must be positive milliseconds');
        args.overallTimeoutMs = v;
        break;
      }
      case '--vscode':
        args.vscode = vscodeTarget(value());
        break;
      case '--locale': {
        const v = value();
        if (v !== 'ru') throw new Error(`--locale: only ru has a language pack here, got ${v}`);
        args.locale = v;
        break;
      }
      case '--workspace-trust':
        args.workspaceTrust = true;
        break;
      case '--version-sensitive-only':
        args.versionSensitiveOnly = true;
        break;
      case '--verbose':
        args.verbose = true;
        break;
      case '-h':
      case '--help':
        process.stdout.write(usage + '\n');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${arg}\n${usage}`);
    }
  }
  return args;
}

export function resolveEntry(tests: string): string {
  for (const candidate of [tests, `${tests}.js`, path.join(tests, 'index.js')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate.replace(/\.js$/, '');
  }
  throw new Error(`Test entry module not found: ${tests} (compile the tests with \`npm run compile-tests\`)`);
}

/** What the mocha entry (test/integration/index.ts) reads from its environment. */
export function testEntryEnv(args: Args): Record<string, string> {
  const env: Record<string, string> = {};
  if (args.grep !== undefined) env.GATEWAY_IMAGES_TEST_GREP = args.grep;
  if (args.timeout !== undefined) env.GATEWAY_IMAGES_TEST_TIMEOUT = args.timeout;
  if (args.locale !== undefined) env.GATEWAY_IMAGES_TEST_LOCALE = args.locale;
  if (args.workspaceTrust) env.GATEWAY_IMAGES_TEST_TRUST = 'untrusted';
  if (args.versionSensitiveOnly) env.GATEWAY_IMAGES_TEST_SUBSET = VERSION_SENSITIVE_ONLY;
  return env;
}
