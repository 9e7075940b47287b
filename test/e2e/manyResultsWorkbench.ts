// One window with a long history, for the suites that need 5,000 results: Find Image Results… and
// the studio at scale. Opening a window and seeding its journal (a generation from the studio, 4,999
// results appended) cost about ten seconds of a 2-core machine; the second suite finds
// them done. The results are made once, by the first suite that asks (alone or after the other), and
// what each suite changes it puts back (the gallery's filter). Loaded by .mocharc.e2e.json
// (`require`): its root hook closes the window once every suite has run.
import { type AppendedResult, seedResults } from './resultsJournal';
import { reusedWindow } from './reusedWindow';
import { openWorkbench, type OpenedWorkbench, prepareTest } from './workbench';

export const MANY_RESULTS = 5000;
export const OLDEST_PROMPT = 'The oldest result: a lighthouse at dawn';
/** The one result that Find's query matches: a lighthouse in fog by prism-2 (the next one has the same words, by another model). */
export const MATCH = 1234;

/** Appended result i: harbours by two models, one lighthouse in fog by prism-2 (MATCH) and the same words by aurora-1. */
export function manyResult(i: number): AppendedResult {
  const [prompt, model] =
    i === MATCH
      ? ['A lighthouse in fog', 'prism-2']
      : i === MATCH + 1
        ? ['A lighthouse in fog', 'aurora-1']
        : [`Result ${i}: a harbour at noon`, i % 2 ? 'sketch-mini' : 'aurora-1'];
  return { id: `e2e-many-${i}`, prompt, model };
}

async function openSeeded(): Promise<OpenedWorkbench> {
  const opened = await openWorkbench({ settings: { 'gatewayImages.openAfterGenerate': false } });
  try {
    await prepareTest(opened, { key: 'unlimited' });
    await seedResults(opened, OLDEST_PROMPT, MANY_RESULTS, manyResult);
    return opened;
  } catch (error) {
    await opened.close();
    throw error;
  }
}

const manyResults = reusedWindow(openSeeded, 'window with 5,000 results');

/**
 * The window with MANY_RESULTS results, opened and seeded by the first suite that asks. Each suite
 * starts with the emulator as it starts; its `close()` does nothing: the window outlives the suite.
 */
export function manyResultsWorkbench(): Promise<OpenedWorkbench> {
  return manyResults.get();
}

/** Mocha's root hooks (a `require` of .mocharc.e2e.json): the window closes after the last suite. */
export const mochaHooks = {
  afterAll: (): Promise<void> => manyResults.close(),
};
