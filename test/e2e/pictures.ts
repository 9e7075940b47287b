// The README's pictures: every run keeps them in test-results/e2e/; docs/ is rewritten only when
// asked (GATEWAY_IMAGES_UPDATE_DOCS=1).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, RESULTS_DIR } from '../harness/paths';
import { assembleApng } from './apng';
import { type OpenedWorkbench, runCommand, setColorTheme } from './workbench';

const updateDocs = () => process.env.GATEWAY_IMAGES_UPDATE_DOCS === '1';

/** test-results/e2e/<name>, and docs/<name> when asked to update docs; their folders made. */
export function pictureTargets(name: string): string[] {
  const targets = [path.join(RESULTS_DIR, 'e2e', name)];
  if (updateDocs()) targets.push(path.join(REPO_ROOT, 'docs', name));
  for (const target of targets) fs.mkdirSync(path.dirname(target), { recursive: true });
  return targets;
}

/** Writes the picture to each of pictureTargets(name). */
export function savePicture(name: string, data: Buffer): void {
  for (const target of pictureTargets(name)) fs.writeFileSync(target, data);
}

/** An animated PNG of the frames (1.4 s each, the last 3 s), saved as savePicture does. */
export function saveAnimation(name: string, frames: Buffer[]): void {
  savePicture(
    name,
    assembleApng(
      frames,
      frames.map((_, i) => (i === frames.length - 1 ? 3000 : 1400)),
    ),
  );
}

/**
 * One picture in the dark and one in the light theme: for each, the theme is set and the
 * notifications are cleared, then `shoot` writes the file it is given, `<base>-dark.png` or
 * `<base>-light.png` (in docs/ when asked, else in test-results/e2e/), which must not look empty.
 */
export async function shootInBothThemes(opened: OpenedWorkbench, base: string, shoot: (file: string) => Promise<void>): Promise<void> {
  const dir = updateDocs() ? path.join(REPO_ROOT, 'docs') : path.join(RESULTS_DIR, 'e2e');
  fs.mkdirSync(dir, { recursive: true });
  for (const [theme, name] of [
    ['Dark Modern', `${base}-dark.png`],
    ['Light Modern', `${base}-light.png`],
  ] as const) {
    await setColorTheme(opened, theme);
    await runCommand(opened.page, 'Notifications: Clear All Notifications');
    await shoot(path.join(dir, name));
    assert.ok(fs.statSync(path.join(dir, name)).size > 10_000, `${name} looks empty`);
  }
}
