// Helpers of the slow suites in the real VS Code (`npm run test:crash`): restarting the window after
// its extension host died, the money invariants against the emulator's record.
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import * as path from 'node:path';
import { formatRubles } from '../../src/core/money/cost';
import { isWholeImage } from '../../src/core/files/wholeImage';
import { type OpenedWorkbench, readStatusBar, waitFor } from '../e2e/workbench';

/** The extension's global storage in the run's user data (the server's, in code-server). */
export function globalStorage(opened: OpenedWorkbench): string {
  return path.join(opened.workbench.userDataDir, 'User', 'globalStorage', 'gateway-images.gateway-images');
}

export async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
  } catch {
    return [];
  }
}

/**
 * A person reloads the window after its extension host was killed: a new extension host starts on
 * the same user data and workspace; resolves with its pid (e2e's reloadWindow runs the command and
 * waits for the status bar item instead).
 */
export async function reloadAfterKill(opened: OpenedWorkbench, previousPid: number): Promise<number> {
  await opened.page.reload({ waitUntil: 'domcontentloaded' });
  await opened.page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
  return opened.waitForNewExtensionHost(previousPid, 90_000);
}

/** Waits until the status bar shows the emulator's balance; returns both. */
export async function statusBarMatchesEmulator(opened: OpenedWorkbench): Promise<{ statusBar: string; emulator: string }> {
  let shown = '';
  const expected = () => formatRubles(opened.emulator.state.balanceRub, 'en');
  await waitFor(
    async () => {
      shown = (await readStatusBar(opened.page, 'gateway-images.status'))[0]?.text ?? '';
      // The status bar puts a space after ₽; Intl does not.
      return shown.replace(/\s/g, '').includes(expected().replace(/\s/g, ''));
    },
    20_000,
    () => `the status bar (${shown}) to show the emulator's balance ${expected()}`,
  );
  return { statusBar: shown, emulator: expected() };
}

export interface Figures {
  paid: number;
  charged: number;
  delivered: number;
  inWorkspace: number;
  inRecovery: number;
  missing: string[];
  partialUnderFinalName: string[];
  resends: number;
}

/** The money invariants against the emulator's own record (as the chaos soak checks them), for the requests from `since` on. */
export async function moneyFigures(opened: OpenedWorkbench, out: string, since = 0): Promise<Figures> {
  const paid = opened.emulator.state.requests.slice(since).filter((r) => r.paid);
  const recovery = (await filesUnder(path.join(globalStorage(opened), 'recovery'))).filter((f) => !f.endsWith('.json'));
  const workspace = await filesUnder(out);
  const where = new Map<string, string>();
  for (const file of [...workspace, ...recovery])
    where.set(
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
      file,
    );
  const figures: Figures = { paid: paid.length, charged: 0, delivered: 0, inWorkspace: 0, inRecovery: 0, missing: [], partialUnderFinalName: [], resends: 0 };
  figures.charged = paid.filter((r) => r.chargedRub > 0).length;
  for (const request of paid) {
    for (const image of request.images ?? []) {
      if (!image.delivered) continue;
      figures.delivered++;
      const file = where.get(image.sha256);
      if (!file) figures.missing.push(`${request.id} image ${image.index + 1}`);
      else if (file.startsWith(out)) figures.inWorkspace++;
      else figures.inRecovery++;
    }
  }
  for (const file of workspace) if (path.basename(file).startsWith('.') || !(await isWholeImage(file))) figures.partialUnderFinalName.push(file);
  const prints = paid.map((r) => r.fingerprint);
  figures.resends = prints.length - new Set(prints).size;
  return figures;
}

export function describeFigures(f: Figures): string {
  return (
    `emulator ${f.paid} paid, ${f.charged} charged, ${f.delivered} images delivered whole; kept byte-equal ${f.inWorkspace + f.inRecovery} ` +
    `(workspace ${f.inWorkspace}, recovery ${f.inRecovery}), missing ${f.missing.length}; partial under a final name ${f.partialUnderFinalName.length}; resends ${f.resends}`
  );
}
