// Which integration suites `npm test` runs on the current VS Code too: every suite but those of
// test/integration/onOldestOnly.ts, and none of those may touch a surface that differs between VS Codes.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs, testEntryEnv } from '../harness/cli';
import { ON_OLDEST_ONLY, selectTestFiles, VERSION_SENSITIVE_ONLY } from '../integration/onOldestOnly';

const ROOT = path.resolve(__dirname, '../../..');
const suiteSource = (name: string) => path.join(ROOT, 'test', 'integration', `${name}.test.ts`);

/** What VS Code changed between 1.100 and 1.139, or what depends on its build: a suite using it runs on both. */
const VERSION_SENSITIVE_APIS = [
  /vscode\.lm\b/,
  /vscode\.chat\b/,
  /createWebviewPanel|registerWebview/,
  /\.secrets\b/,
  /vscode\.l10n\b/,
  /vscode\.languages\b/,
  /isTrusted|onDidGrantWorkspaceTrust/,
  /\bmcp\b/i,
  /http\.proxy|systemCertificates/,
  /createStatusBarItem|statusBar/,
  /registerLanguageModel/,
];

describe('integration suites on the current VS Code: the version-sensitive ones', () => {
  it('each suite listed as oldest-only exists and says why', () => {
    for (const [name, why] of Object.entries(ON_OLDEST_ONLY)) {
      assert.ok(existsSync(suiteSource(name)), `test/integration/${name}.test.ts`);
      assert.ok(why.length > 10, `${name}: a reason`);
    }
  });

  it('no suite listed as oldest-only uses an API that differs between VS Codes', () => {
    for (const name of Object.keys(ON_OLDEST_ONLY)) {
      const source = readFileSync(suiteSource(name), 'utf8');
      for (const api of VERSION_SENSITIVE_APIS) assert.doesNotMatch(source, api, `${name}.test.ts uses ${api}: it runs on both VS Codes`);
    }
  });

  it('the subset leaves out exactly the listed suites; no subset loads all; another value is refused by name', () => {
    const files = [
      '/o/test/integration/results.test.js',
      '/o/test/integration/chatTool.test.js',
      '/o/test/integration/outcome.test.js',
      '/o/test/integration/studio.test.js',
    ];
    assert.deepEqual(selectTestFiles(files, undefined), files);
    assert.deepEqual(selectTestFiles(files, ''), files);
    assert.deepEqual(selectTestFiles(files, VERSION_SENSITIVE_ONLY), ['/o/test/integration/chatTool.test.js', '/o/test/integration/studio.test.js']);
    assert.throws(() => selectTestFiles(files, 'fast'), /GATEWAY_IMAGES_TEST_SUBSET: expected "version-sensitive", got "fast"/);
  });

  it('runIntegration --version-sensitive-only asks the entry for the subset; without it the entry loads all', () => {
    assert.equal(
      testEntryEnv(parseArgs(['--vscode', 'current', '--version-sensitive-only'], 'runIntegration.js')).GATEWAY_IMAGES_TEST_SUBSET,
      VERSION_SENSITIVE_ONLY,
    );
    assert.equal(testEntryEnv(parseArgs(['--vscode', 'current'], 'runIntegration.js')).GATEWAY_IMAGES_TEST_SUBSET, undefined);
  });

  it("npm test's layer on 1.139.1 runs the subset; npm run test:integration:current runs every suite", () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts['test:integration:current-subset']!, /--vscode current --version-sensitive-only/);
    assert.doesNotMatch(scripts['test:integration:current']!, /version-sensitive/);
  });
});
