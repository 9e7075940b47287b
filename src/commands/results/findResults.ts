// Find Image Results… (dist/findResults.js, loaded on first use): a quick pick over the whole
// results journal. The query is one line (jobs/results/resultSearch.ts): words of the prompt, model:, style:,
// who:, from:, to:, cost:. Picking a result opens its image, as the gallery's card does. With an
// argument ({ query }) it answers without asking: what matches (for tests and other extensions).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatRubles } from '../../core/money/cost';
import { trPlural } from '../../core/common/plural';
import { originLabel } from '../../jobs/results/resultOrigin';
import { parseResultQuery } from '../../jobs/results/resultSearch';
import type { GallerySlot } from '../../jobs/results/resultsIndex';
import { type Services } from '../../services';

/** The quick pick shows this many matches (the count says how many there are in all). */
const SHOWN = 200;
const LAST_QUERY = 'gatewayImages.findResults.lastQuery';

type Item = vscode.QuickPickItem & { slot?: GallerySlot };

export interface FoundResults {
  total: number;
  /** The first matches, newest first: the file and the id of its result. */
  found: { file: string; id: string }[];
  problems: string[];
}

/** Errors reject: the command's registration (account.ts) shows them, with the code already loaded at activation. */
export async function findResults(services: Services, args?: unknown): Promise<FoundResults | undefined> {
  const index = await services.history.index();
  if (args && typeof args === 'object' && typeof (args as { query?: unknown }).query === 'string') {
    const { query, problems } = parseResultQuery((args as { query: string }).query);
    const filtered = index.filter(query);
    return { total: filtered.total, found: filtered.page(0, SHOWN).map((s) => ({ file: s.file, id: s.entry.id })), problems };
  }
  const state = services.context.workspaceState;
  const pick = vscode.window.createQuickPick<Item>();
  pick.title = vscode.l10n.t('Find Image Results');
  pick.placeholder = vscode.l10n.t('Words of the prompt; model:, style:, who:, from:YYYY-MM-DD, to:YYYY-MM-DD, cost:1..5');
  pick.value = state.get<string>(LAST_QUERY, '');
  const show = () => {
    const { query, problems } = parseResultQuery(pick.value);
    const filtered = index.filter(query);
    const items: Item[] = problems.map((problem) => ({ label: `$(warning) ${problem}`, alwaysShow: true }));
    items.push(...filtered.page(0, SHOWN).map((slot) => itemOf(slot, services.locale)));
    pick.items = items;
    pick.title = trPlural(filtered.total, { one: 'Find Image Results: {0} image', other: 'Find Image Results: {0} images' }, filtered.total);
  };
  pick.onDidChangeValue(show);
  show();
  const chosen = await new Promise<Item | undefined>((resolve) => {
    pick.onDidAccept(() => resolve(pick.selectedItems[0]));
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  await state.update(LAST_QUERY, pick.value);
  pick.dispose();
  if (chosen?.slot) await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(chosen.slot.file));
  return undefined;
}

function itemOf(slot: GallerySlot, locale: string): Item {
  const { entry, file } = slot;
  const cost = entry.costRub === undefined ? vscode.l10n.t('cost unknown') : formatRubles(entry.costRub, locale);
  const prompt = entry.request.prompt.replace(/\s+/g, ' ').trim();
  return {
    // Matching is the query's: the quick pick's own filter on the label would hide matches.
    alwaysShow: true,
    label: prompt.length > 100 ? `${prompt.slice(0, 99)}…` : prompt || path.basename(file),
    description: [entry.model, originLabel(entry.origin), entry.style?.name, cost].filter(Boolean).join(' · '),
    detail: `${new Date(entry.createdAt).toLocaleString(locale)} · ${vscode.workspace.asRelativePath(file, false)}`,
    slot,
  };
}
