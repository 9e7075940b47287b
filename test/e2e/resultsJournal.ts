// A long history of results for the studio's gallery and Find Image Results…: one result generated
// from the studio, thousands appended beside it in the workspace's results journal, as long use
// (or another window) leaves it.
import * as fs from 'fs';
import * as path from 'path';
import { type HistoryEntry, journalLine } from '../../src/jobs/results/resultsIndex';
import { generateCard, openStudio } from './studioPage';
import { type OpenedWorkbench, waitFor } from './workbench';

/** The results journal of the window's workspace, once it holds the generated result with its cost. */
export function generatedResult(opened: OpenedWorkbench): Promise<{ journal: string; result: HistoryEntry }> {
  const storage = path.join(opened.workbench.userDataDir, 'User', 'workspaceStorage');
  return waitFor(
    () => {
      for (const folder of fs.existsSync(storage) ? fs.readdirSync(storage) : []) {
        const journal = path.join(storage, folder, 'gateway-images.gateway-images', 'results.jsonl');
        const last = fs.existsSync(journal) ? fs.readFileSync(journal, 'utf8').trimEnd().split('\n').pop() : undefined;
        if (!last?.includes('"costRub"')) continue;
        const tab = last.indexOf('\t');
        const summary = (JSON.parse(last.slice(0, tab)) as { put: HistoryEntry }).put;
        return { journal, result: { ...summary, ...(JSON.parse(last.slice(tab + 1)) as Partial<HistoryEntry>) } };
      }
      return undefined;
    },
    20_000,
    'the results journal to hold the generated result and its cost',
  );
}

/** What differs in appended result i: its id and prompt, and its model when not the oldest's. */
export interface AppendedResult {
  id: string;
  prompt: string;
  model?: string;
}

/** Appends results 1…count-1, newer than `oldest`, each with its own hard link to its image. */
export function appendResults(journal: string, oldest: HistoryEntry, count: number, describe: (i: number) => AppendedResult): void {
  const image = oldest.files[0]!;
  const lines: string[] = [];
  for (let i = 1; i < count; i++) {
    const file = path.join(path.dirname(image), `result-${i}.png`);
    fs.linkSync(image, file);
    const createdAt = new Date(Date.parse(oldest.createdAt) + i).toISOString();
    const { id, prompt, model } = describe(i);
    const models = model === undefined ? {} : { model };
    lines.push(journalLine({ ...oldest, id, createdAt, files: [file], ...models, request: { ...oldest.request, ...models, prompt } }));
  }
  fs.appendFileSync(journal, lines.join('\n') + '\n');
}

/**
 * `count` results in the workspace's journal: the oldest generated from the studio with
 * `oldestPrompt`, the rest appended beside it (appendResults). The window's extension reads them as
 * it reads another window's appends (it watches the journal and checks it before each read), so no
 * reload is needed here; a suite that wants the journal read cold reloads the window itself.
 */
export async function seedResults(opened: OpenedWorkbench, oldestPrompt: string, count: number, describe: (i: number) => AppendedResult): Promise<void> {
  await generateCard(await openStudio(opened.page), oldestPrompt);
  const { journal, result } = await generatedResult(opened);
  await opened.command('workbench.action.closeAllEditors');
  appendResults(journal, result, count, describe);
}
