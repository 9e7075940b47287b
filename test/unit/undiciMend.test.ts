// The mend of undici for nodejs/undici#5360 (patches/undici@7.30.2.patch): applied to the code as it
// is loaded (scripts/undiciMend.cjs), never to node_modules; the unit layer and the processes it
// forks run the mended code, as the bundle does. What the mend changes in undici's behaviour is
// tested by connectionClose.test.ts (it fails without the mend); here, where and when it applies.
import * as assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { undiciMendOutcomes } from './support/undiciChild';

const ROOT = path.resolve(__dirname, '../../..');

interface UndiciMend {
  PATCHED_VERSION: string;
  isUndiciClientH1(file: string): boolean;
  mendUndiciSource(file: string, source: string): { code: string; outcome: string };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script shared with esbuild.mjs, outside the TypeScript program
const mend = require(path.join(ROOT, 'scripts', 'undiciMend.cjs')) as UndiciMend;

const CLIENT_H1 = require.resolve('undici/lib/dispatcher/client-h1.js');
/** undici's file as installed: node_modules is never written, so it is the published code. */
const published = readFileSync(CLIENT_H1, 'utf8');
const FINISH_ASSERT = '    assert(!this.paused)\n\n    const { llhttp } = this\n';

describe('undici mend (nodejs/undici#5360): applied as undici loads, never in node_modules', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gi-undici-mend-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** An undici of `version` whose client-h1.js is `source`, in a node_modules of its own. */
  function undiciAt(version: string, source: string): string {
    const file = path.join(dir, 'node_modules', 'undici', 'lib', 'dispatcher', 'client-h1.js');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(path.join(dir, 'node_modules', 'undici', 'package.json'), JSON.stringify({ name: 'undici', version }));
    writeFileSync(file, source);
    return file;
  }

  it('the installed undici is the pinned one, as published: the install did not mend it in place', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(pkg.dependencies.undici, mend.PATCHED_VERSION, 'undici is pinned exactly to the version the patch was made for');
    assert.equal(pkg.scripts.postinstall, undefined, 'nothing rewrites node_modules at install');
    assert.ok(published.includes(FINISH_ASSERT), 'node_modules/undici is the published 7.30.2: Parser.finish() asserts');
    assert.ok(mend.isUndiciClientH1(CLIENT_H1));
    assert.ok(mend.isUndiciClientH1('/p/node_modules/.pnpm/undici@7.30.2/node_modules/undici/lib/dispatcher/client-h1.js'), "pnpm's layout");
    assert.ok(!mend.isUndiciClientH1(require.resolve('undici/lib/dispatcher/client-h2.js')));
  });

  it('undici 7.30.2 as published: the patch applies; a paused parser drains at the end instead of asserting', () => {
    const { code, outcome } = mend.mendUndiciSource(CLIENT_H1, published);
    assert.equal(outcome, 'mended');
    assert.ok(!code.includes(FINISH_ASSERT), 'Parser.finish() no longer asserts that the parser is not paused');
    assert.match(code, /function onHttpSocketEnd \(\) \{\n {2}const parser = this\[kParser\]\n {2}parser\.drainAtEnd\(\)\n/);
    assert.equal((code.match(/drainAtEnd \(\) \{/g) ?? []).length, 1);
  });

  it('a file that carries the patch already is left as it is', () => {
    const { code: once } = mend.mendUndiciSource(CLIENT_H1, published);
    assert.deepEqual(mend.mendUndiciSource(CLIENT_H1, once), { code: once, outcome: 'already mended' });
  });

  it('undici 7.30.2 changed in place (not the published code): fails, and says to reinstall', () => {
    const file = undiciAt('7.30.2', published.replace('function onHttpSocketEnd () {', 'function onHttpSocketEnd (/* edited */) {'));
    assert.throws(() => mend.mendUndiciSource(file, readFileSync(file, 'utf8')), /is not undici 7\.30\.2 as published.*reinstall it \(npm ci\)/);
  });

  it('another undici that still asserts in Parser.finish() and that the patch does not fit: fails, naming its version and the issue', () => {
    const file = undiciAt('7.31.0', published.replace('function onHttpSocketEnd () {', 'function onSocketEnd () {'));
    assert.throws(
      () => mend.mendUndiciSource(file, readFileSync(file, 'utf8')),
      /undici 7\.31\.0 still asserts in Parser\.finish\(\).*nodejs\/undici#5360.*pin undici 7\.30\.2 again/,
    );
  });

  it('an undici with its own fix of Parser.finish() (as undici 8): left as it is', () => {
    const fixed = published.replace(FINISH_ASSERT, '    if (this.paused) this.resume()\n\n    const { llhttp } = this\n');
    const file = undiciAt('8.13.1', fixed);
    assert.deepEqual(mend.mendUndiciSource(file, fixed), { code: fixed, outcome: 'has its own fix' });
  });

  it('the unit layer runs the mended undici, in its own process and in the processes it forks (as the bundle does)', async () => {
    assert.deepEqual(undiciMendOutcomes(), [[CLIENT_H1, 'mended']], 'this process: preload scripts/undiciMendRegister.cjs (.mocharc.unit.json)');
    const child = fork(path.join(__dirname, 'support', 'undiciChild.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const report = await new Promise<{ outcomes: [string, string][] }>((resolve, reject) => {
      child.once('message', (m) => resolve(m as { outcomes: [string, string][] }));
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) without a report`)));
    });
    assert.deepEqual(report.outcomes, [[CLIENT_H1, 'mended']], 'a forked process');
  });
});
