// The README's first command, as a new user runs it: `npm run demo` as a child process (with the
// environment of a shell, not the test's), its printed URL opened in Debian's Chromium, the demo
// key's balance in the status bar, one image generated from the palette by typing, the file in the
// explorer; then Ctrl+C (SIGINT to npm) and everything the demo started must be gone: every
// process, both ports, the temporary folder.
import * as assert from 'assert';
import { type ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { Browser, Page } from 'playwright-core';
import { E2E_CHROMIUM_ARGS, UNCOMPRESSED } from '../harness/workbenchConfig';
import { CHROMIUM } from '../harness/paths';
import { copyRepo } from '../support/repoCopy';
import { portIsFree, type ProcessInfo, processTree, survivors } from './processes';
import { pickQuickItem, readStatusBar, runCommand, screenshot, waitForNotification } from './workbench';
import { setTimeout as sleep } from 'timers/promises';

/** A new user's shell: no test, npm, mocha or enclosing VS Code variables. */
function userEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(GATEWAY_IMAGES_|npm_|VSCODE_|MOCHA|ELECTRON_RUN_AS_NODE$|INIT_CWD$|NODE_ENV$)/.test(k)) continue;
    env[k] = v;
  }
  return env;
}

interface DemoPrinted {
  url: string;
  emulatorUrl: string;
  folder: string;
  workspace: string;
  codeServerPort: number;
}

/** Parses the lines the demo prints; undefined until all of them have come. */
function parsePrinted(output: string): DemoPrinted | undefined {
  const url = /open VS Code in your browser: (\S+)/.exec(output)?.[1];
  const emulatorUrl = /gateway emulator: (\S+)/.exec(output)?.[1];
  const folder = /temporary folder: (\S+) \(workspace: (\S+)\)/.exec(output);
  if (!url || !emulatorUrl || !folder) return undefined;
  return { url, emulatorUrl, folder: folder[1]!, workspace: folder[2]!, codeServerPort: Number(new URL(url).port) };
}

async function waitForStatus(page: Page, test: (text: string) => boolean, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = (await readStatusBar(page, 'gateway-images.status').catch(() => []))[0]?.text ?? '';
    if (test(text)) return text;
    if (Date.now() > until) throw new Error(`the status bar shows ${JSON.stringify(text)}`);
    await sleep(250);
  }
}

interface ActiveDocument {
  document: { activeElement: { tagName: string; className: string; getAttribute(name: string): string | null } | null };
}

describe('npm run demo, as the README says (e2e)', function () {
  this.timeout(360_000);
  let npm: ChildProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let output = '';
  let printed: DemoPrinted | undefined;
  let repo: string | undefined;
  const seen = new Map<number, ProcessInfo>();
  const timings: Record<string, number> = {};
  const started = Date.now();

  /** Everything the npm process has started so far (kept: children reparent when parents die). */
  const remember = () => {
    if (npm?.pid) for (const p of processTree(npm.pid)) seen.set(p.pid, p);
  };

  afterEach(async function () {
    // What the workbench showed, and where the keyboard focus was, when a step failed.
    if (this.currentTest?.state !== 'failed' || !page) return;
    await screenshot(page, 'demo-failed').catch(() => undefined);
    const focused = await page
      .evaluate(() => {
        const active = (globalThis as unknown as ActiveDocument).document.activeElement;
        return active ? `${active.tagName}.${active.className} ${active.getAttribute('aria-label') ?? ''}` : 'nothing';
      })
      .catch(() => '(unknown)');
    console.log(`      the demo's workbench at the failure: test-results/e2e/demo-failed.png; the focus was on ${focused}`);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    // Only on failure is anything left: kill it so later suites have the machine.
    const left = survivors([...seen.values()]);
    for (const p of left) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (printed && fs.existsSync(printed.folder)) fs.rmSync(printed.folder, { recursive: true, force: true });
    if (repo) fs.rmSync(repo, { recursive: true, force: true });
    console.log(
      `      demo check timings (s): ${Object.entries(timings)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', ')}`,
    );
  });

  /** `npm run demo` starts and prints the URL. */
  async function startsAndPrintsUrl(): Promise<void> {
    const env = userEnvironment();
    // In a copy of the repository: the demo builds and packages there, not under the other layers' feet.
    repo = copyRepo(undefined, { withCache: true });
    npm = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'demo'], { cwd: repo, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => npm!.once('exit', () => resolve()));
    const until = Date.now() + 240_000;
    while (!(printed = parsePrinted(output))) {
      const gone = await Promise.race([exited.then(() => true), sleep(250).then(() => false)]);
      assert.ok(!gone, `npm run demo exited before printing the URL:\n${output.slice(-3000)}`);
      assert.ok(Date.now() < until, `npm run demo printed no URL within 240 s:\n${output.slice(-3000)}`);
    }
    remember();
    timings['start to URL'] = (Date.now() - started) / 1000;
    assert.match(printed.url, /^http:\/\/127\.0\.0\.1:\d+\/\?folder=/);
    assert.ok(fs.existsSync(printed.workspace), 'the printed workspace does not exist');
    assert.ok(!/\[demo\] failed| ERROR /.test(output), `the demo reported an error:\n${output}`);
  }

  /** Its URL opens in Chromium; the status bar shows the demo key's balance and budget. */
  async function opensInChromium(): Promise<void> {
    assert.ok(printed, 'the demo did not start');
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: E2E_CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, extraHTTPHeaders: UNCOMPRESSED });
    const t0 = Date.now();
    await page.goto(printed.url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
    // The demo key (a monthly budget of 1000 ₽ with a little usage) on the emulator's 5000 ₽ account.
    const text = await waitForStatus(page, (t) => /₽ 5.?000[.,]00 · budget 975[.,]09/.test(t), 90_000);
    timings['URL to balance'] = (Date.now() - t0) / 1000;
    assert.match(text, /budget/);
    remember();
  }

  /** One image is generated from the palette; the file shows in the explorer. */
  async function generatesFromPalette(): Promise<void> {
    assert.ok(page && printed, 'the workbench is not open');
    const t0 = Date.now();
    await runCommand(page, 'Gateway Images: Generate Image');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'aurora-1' }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.type('aurora-1', { delay: 30 });
    await pickQuickItem(page, 'aurora-1', 30_000);
    await page.locator('.quick-input-widget .quick-input-box input[placeholder*="A lighthouse on a cliff"]').waitFor({ state: 'visible', timeout: 15_000 });
    await page.keyboard.type('A lighthouse at dawn', { delay: 20 });
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Send (reserve' }).first().waitFor({ timeout: 15_000 });
    await pickQuickItem(page, /Send \(reserve/);
    await waitForNotification({ page }, /Saved 1 image/, 60_000);
    const dir = path.join(printed.workspace, 'generated-images');
    const files = fs.readdirSync(dir).filter((n) => n.endsWith('.png'));
    assert.equal(files.length, 1, `files: ${files.join(', ')}`);
    // The image opened in its preview (openAfterGenerate, as a user has it), a webview that takes the
    // keyboard focus once it has loaded: a palette opened before that closes as the focus moves (seen
    // on a loaded machine). So the palette waits for the preview to have loaded and taken the focus.
    await page.locator('.tabs-container .tab.active', { hasText: files[0]! }).waitFor({ state: 'visible', timeout: 30_000 });
    await page.locator('iframe.webview.ready').first().waitFor({ state: 'visible', timeout: 30_000 });
    await page.waitForFunction(
      () => (globalThis as unknown as { document: { activeElement: { tagName: string } | null } }).document.activeElement?.tagName === 'IFRAME',
      undefined,
      {
        timeout: 30_000,
      },
    );
    await runCommand(page, 'View: Show Explorer');
    const tree = page.locator('.explorer-folders-view');
    const file = tree.getByText(files[0]!, { exact: true });
    if (!(await file.isVisible().catch(() => false))) await tree.getByText('generated-images', { exact: true }).click();
    await file.waitFor({ state: 'visible', timeout: 15_000 });
    timings['generate'] = (Date.now() - t0) / 1000;
    await screenshot(page, 'demo-generated');
    remember();
  }

  /** Ctrl+C (SIGINT to npm) stops every process it started, frees both ports and removes its folder. */
  async function stopsOnCtrlC(): Promise<void> {
    assert.ok(npm?.pid && printed, 'the demo did not start');
    remember();
    const known = [...seen.values()];
    assert.ok(
      known.some((p) => p.command.includes(path.join('tools', 'demo', 'main.js'))),
      `the demo's node process was not seen: ${known.map((p) => p.command).join('\n')}`,
    );
    assert.ok(
      known.some((p) => p.command.includes('code-server')),
      'no code-server process was seen',
    );
    const emulatorPort = Number(new URL(printed.emulatorUrl).port);
    assert.equal(await portIsFree(emulatorPort), false, 'the emulator was not listening');
    assert.equal(await portIsFree(printed.codeServerPort), false, 'code-server was not listening');

    const t0 = Date.now();
    const exit = new Promise<number | null>((resolve) => {
      if (npm!.exitCode !== null) resolve(npm!.exitCode);
      else npm!.once('exit', (code) => resolve(code));
    });
    process.kill(npm.pid, 'SIGINT');
    const code = await Promise.race([exit, sleep(30_000).then(() => 'timeout' as const)]);
    assert.notEqual(code, 'timeout', `npm run demo did not exit within 30 s of SIGINT:\n${output.slice(-2000)}`);
    timings['SIGINT to exit'] = (Date.now() - t0) / 1000;
    assert.match(output, /\[demo\] stopped/);

    assert.deepEqual(
      survivors(known).map((p) => `${p.pid} ${p.command}`),
      [],
      `processes the demo started are still running (of ${known.length} seen)`,
    );
    assert.ok(await portIsFree(emulatorPort), `the emulator's port ${emulatorPort} is still open`);
    assert.ok(await portIsFree(printed.codeServerPort), `code-server's port ${printed.codeServerPort} is still open`);
    assert.ok(!fs.existsSync(printed.folder), `${printed.folder} was not removed`);
    timings['total'] = (Date.now() - started) / 1000;
    console.log(
      `      ${known.length} processes seen (npm, the demo's node, code-server's group), ports ${emulatorPort} and ${printed.codeServerPort}, ${printed.folder}: all gone`,
    );
  }

  // One journey, as a newcomer makes it: each step needs the one before (the demo started by the
  // first is the one stopped by the last), so it is one test, not four that lean on each other.
  it('npm run demo prints its URL, the workbench shows the demo key, an image is generated from the palette, and Ctrl+C stops everything', async () => {
    await startsAndPrintsUrl();
    await opensInChromium();
    await generatesFromPalette();
    await stopsOnCtrlC();
  });
});
