// Smoke: the real workbench loads the extension and the palette lists all its commands.
import * as assert from 'assert';
import { readManifest } from '../harness/paths';
import { dismissQuickInput, openCommandPalette, readQuickItems, screenshot, typeInQuickInput, visibleQuickItems } from './workbench';
import { useWorkbench } from './useWorkbench';

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
});
