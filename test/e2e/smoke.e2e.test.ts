// Smoke: the real workbench loads the extension and the palette lists all its commands; the test
// window itself runs no port scan of every process.
import * as assert from 'assert';
import { setTimeout as sleep } from 'timers/promises';
import { readManifest } from '../harness/paths';
import { NO_PORT_SCAN } from '../harness/workbenchConfig';
import { childrenOf } from './processes';
import { dismissQuickInput, openCommandPalette, readQuickItems, screenshot, typeInQuickInput, visibleQuickItems } from './workbench';
import { useWorkbench } from './useWorkbench';

/** VS Code's search for ports to forward (remote.autoForwardPortsSource "process"): every process's sockets, then ps. */
const PORT_SCAN = /ls -l \/proc\/\[0-9\]\*\/fd|ps -F -A -l/;

/**
 * The port scans that the extension host `pid` starts within `ms` (its children, looked at every
 * 20 ms); ends at the first. A scan already running is not counted: a new extension host scans
 * once as it starts, whatever the setting.
 */
async function portScansWithin(pid: number, ms: number): Promise<string[]> {
  const before = new Set(childrenOf(pid).map((child) => child.pid));
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const scans = childrenOf(pid).filter((child) => !before.has(child.pid) && PORT_SCAN.test(child.command));
    if (scans.length) return scans.map((child) => child.command);
    await sleep(20);
  }
  return [];
}

describe('Smoke (e2e)', () => {
  const opened = useWorkbench('shared');

  it('lists every command of the extension in the command palette', async () => {
    const page = opened().page;
    const category = 'Gateway Images';
    const contributes = readManifest().contributes ?? {};
    const title = (c: { category?: string; title: string }) => `${c.category ?? category}: ${c.title}`;
    // menus.commandPalette decides visibility: `when: "false"` hides a command; other clauses
    // depend on context (editor, selection) and are not checked here.
    const paletteWhen = new Map((contributes.menus?.commandPalette ?? []).map((m) => [m.command, m.when ?? 'true']));
    const commands = contributes.commands ?? [];
    const expected = commands.filter((c) => !paletteWhen.has(c.command)).map(title);
    const hidden = commands.filter((c) => paletteWhen.get(c.command) === 'false').map(title);
    assert.ok(expected.length > 0, 'package.json contributes no commands for the palette');

    await openCommandPalette(page);
    await typeInQuickInput(page, `>${category}`);
    // The palette fills in asynchronously: wait for the first of our rows.
    const until = Date.now() + 15_000;
    while (!(await visibleQuickItems(page)).some((r) => r.label.startsWith(`${category}:`))) {
      if (Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 150));
    }
    const labels = (await readQuickItems(page)).map((r) => r.label);
    await screenshot(page, 'smoke-command-palette');

    const missing = expected.filter((title) => !labels.includes(title));
    assert.deepStrictEqual(missing, [], `not in the palette: ${missing.join(', ')}\npalette shows: ${labels.join(' | ')}`);
    const shownAnyway = hidden.filter((t) => labels.includes(t));
    assert.deepStrictEqual(shownAnyway, [], 'commands hidden by menus.commandPalette are shown');
    await dismissQuickInput(page);
  });

  // An idle window used 2.2 s of CPU per 30 s with the scan (every 2 s, or 20 times what a scan took), 1.0 s without.
  it('the test window scans no process for ports (the harness turns it off); a test can turn it back on', async () => {
    const wb = opened();
    const host = await wb.extensionHostPid();
    assert.deepStrictEqual(await portScansWithin(host, 8000), [], 'the extension host scanned the processes for ports');
    await wb.settings({ 'remote.autoForwardPortsSource': 'process' });
    try {
      const scans = await portScansWithin(host, 30_000);
      assert.ok(scans.length > 0, 'with remote.autoForwardPortsSource "process" no scan started in 30 s: the check above proves nothing');
    } finally {
      await wb.settings(NO_PORT_SCAN);
    }
  });
});
