// The README's commands that build the project before they run, exactly as typed there:
// `npm run emulator -- --port N` (start, answer, stop on Ctrl+C) and `npm run bench -- --quick`
// (the bench's own quick mode: small sizes, one run, every row and its PASS/FAIL printed).
// In a temporary copy of the repository (test/support/repoCopy.ts): what they build (out/, dist/,
// a .vsix) never touches the working tree that the other test layers load meanwhile.
import * as assert from 'assert';
import { type ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { freePort } from '../harness/processes';
import { copyRepo } from '../support/repoCopy';
import { portIsFree } from './processes';
import { setTimeout as sleep } from 'timers/promises';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** How long the quick bench may take before the test stops waiting for it. */
const BENCH_WAIT_MS = 900_000;

/**
 * Runs a command in a process group of its own and waits for it to end. Past `waitMs` the whole group
 * is killed (npm, the bench and the bench's workers: a child left running would keep writing into the
 * copy while it is removed) and the result says so.
 */
async function runGroup(
  command: string,
  args: string[],
  cwd: string,
  waitMs: number,
): Promise<{ status: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  const child = spawn(command, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), waitMs).unref());
  const first = await Promise.race([exited, timer]);
  if (first !== 'timeout') return { status: first, stdout, stderr, timedOut: false };
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    /* gone */
  }
  return { status: await exited, stdout, stderr, timedOut: true };
}

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

  it('npm run bench -- --quick: prints every row, the .vsix, and PASS/FAIL per target, in its quick mode (one run per row)', async function () {
    // A wait, not a bound: the quick bench takes about a minute idle, and its production build and
    // packaging several times that beside a loaded CI run.
    this.timeout(BENCH_WAIT_MS + 60_000);
    const started = Date.now();
    const r = await runGroup(NPM, ['run', 'bench', '--', '--quick'], repo, BENCH_WAIT_MS);
    const output = `${r.stdout}\n${r.stderr}`;
    assert.ok(!r.timedOut, `npm run bench -- --quick did not end within ${BENCH_WAIT_MS / 1000} s:\n${output.slice(-3000)}`);
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
