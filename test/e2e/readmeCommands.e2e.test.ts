// The README's commands that build the project before they run, exactly as typed there:
// `npm run emulator -- --port N` (start, answer, stop on Ctrl+C) and `npm run bench -- --quick`
// (the bench's own quick mode: small sizes, one run, every row and its PASS/FAIL printed).
// In a temporary copy of the repository (test/support/repoCopy.ts): what they build (out/, dist/,
// a .vsix) never touches the working tree that the other test layers load meanwhile.
import * as assert from 'assert';
import { type ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { freePort } from '../harness/processes';
import { copyRepo } from '../support/repoCopy';
import { portIsFree } from './processes';
import { setTimeout as sleep } from 'timers/promises';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      })
      .on('error', reject);
  });
}

describe('README commands that build first (e2e)', function () {
  this.timeout(240_000);
  let repo: string;
  before(() => {
    repo = copyRepo(undefined, { withCache: true });
  });
  after(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('npm run emulator -- --port N: listens on N, answers the account endpoint, stops on Ctrl+C', async () => {
    const port = await freePort();
    let output = '';
    const emulator: ChildProcess = spawn(NPM, ['run', 'emulator', '--', '--port', String(port)], {
      cwd: repo,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    emulator.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    emulator.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    try {
      const until = Date.now() + 180_000;
      // The banner comes in several writes: wait for its demo keys, which follow the listening line.
      const demoKey = () => (output.includes(`listening on http://127.0.0.1:${port}`) ? /^\s+(gw-\S+)/m.exec(output)?.[1] : undefined);
      while (!demoKey()) {
        assert.equal(emulator.exitCode, null, `npm run emulator exited:\n${output}`);
        assert.ok(Date.now() < until, `npm run emulator did not listen on ${port}, or printed no demo key:\n${output}`);
        await sleep(200);
      }
      const key = demoKey()!;
      const me = await getJson(`http://127.0.0.1:${port}/v1/gateway/me`, { authorization: `Bearer ${key}` });
      assert.equal(me.status, 200, JSON.stringify(me.body));
      const exited = new Promise((resolve) => emulator.once('exit', resolve));
      process.kill(-emulator.pid!, 'SIGINT'); // Ctrl+C: the terminal signals the foreground group
      await Promise.race([exited, sleep(15_000)]);
      assert.ok(emulator.exitCode !== null || emulator.signalCode !== null, 'npm run emulator did not stop on SIGINT');
      assert.ok(await portIsFree(port), `port ${port} is still open`);
    } finally {
      if (emulator.exitCode === null && emulator.signalCode === null) {
        try {
          process.kill(-emulator.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  });

  it('npm run bench -- --quick: prints every row, the .vsix, and PASS/FAIL per target, in its quick mode (one run per row)', () => {
    const started = Date.now();
    const r = spawnSync(NPM, ['run', 'bench', '--', '--quick'], { cwd: repo, encoding: 'utf8', timeout: 220_000 });
    const output = `${r.stdout}\n${r.stderr}`;
    // Exit 0: every target the quick mode judges passes (correctness, memory, sizes). Its time targets
    // are printed in brackets and not judged, so a loaded machine cannot turn this red; the full bench
    // exits 1 when one of them fails.
    assert.equal(r.status, 0, output.slice(-3000));
    for (const row of [
      'limit (drain',
      'naive (json()',
      'extension (ImageJobService.run',
      'generateWithReferences',
      'edit (multipart',
      'Bundles (node esbuild.mjs --production)',
      'Catalog from a warm cache',
    ]) {
      assert.ok(output.includes(row), `no row ${JSON.stringify(row)}:\n${output.slice(-3000)}`);
    }
    assert.match(output, /\.vsix \(scripts\/package-vsix\.mjs, as npm run package\): \d+ bytes/, 'the .vsix was not packaged');
    assert.match(output, /^Targets$/m);
    // Correctness is a target in any mode; the timings of tiny sizes are printed, not judged.
    assert.match(output, /PASS\s+\[4 x 1 MiB\] extension images correct/);
    assert.match(output, /^\s+\((pass|fail)\)\s+\[4 x 1 MiB\] extension wall \/ limit/m, 'a time target of --quick was judged');
    assert.match(output, /time target\(s\) in brackets, not judged \(--quick\)/);
    // What "quick" means, not how long it took (a clock bound fails on a busy machine): one run per row.
    assert.match(output, /, 1 run\(s\) per row$/m, 'the bench did not run in its quick mode');
    const benchSeconds = Number(/total bench time (\d+) s/.exec(output)?.[1]);
    console.log(`      bench --quick: ${benchSeconds} s of bench, ${((Date.now() - started) / 1000).toFixed(0)} s with the build`);
  });
});
