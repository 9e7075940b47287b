// One window for the e2e suites that need nothing of their own: opening and closing one costs about
// ten seconds of a 2-core machine (code-server, Chromium, the workbench, the extension host). The
// palette, quick-pick, compare, chat-tool, two-window, gallery-card, first-image, money-alert,
// region-editor, studio and project-style suites share it (those that count the gallery's results
// count what they add; the styles suite removes its styles file when it ends). Not: a window without
// a folder, in Russian, with Workspace Trust, nobody has used yet (the walkthrough's steps), or whose
// results journal a test fills with thousands of results. Loaded by .mocharc.e2e.json (`require`):
// its root hook closes the window once every suite has run.
import * as path from 'path';
import { REPO_ROOT } from '../harness/paths';
import { openWorkbench, type OpenedWorkbench, type OpenWorkbenchOptions, waitFor } from './workbench';

/** The tool-invoker fixture (the chat tool's confirmation suite): a command that invokes our language model tool. */
export const TOOL_INVOKER = path.join(REPO_ROOT, 'test', 'fixtures', 'tool-invoker');

/** What the sharing suites need, together; a test sets anything else through prepareTest (and the next one undoes it). */
const SHARED: OpenWorkbenchOptions = {
  settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000 },
  extensions: [TOOL_INVOKER],
};

let shared: Promise<OpenedWorkbench> | undefined;

/**
 * The shared window, opened by the first suite that asks. Each suite starts with the emulator as it
 * starts (balance, keys' budgets, request log, faults), whichever suites ran before; what stays is
 * the workspace's files and the results journal, so a test counts what it adds. Its `close()` does
 * nothing: the window outlives the suite.
 */
export async function sharedWorkbench(): Promise<OpenedWorkbench> {
  shared ??= openWorkbench(SHARED);
  let opened: OpenedWorkbench;
  try {
    opened = await shared;
  } catch (error) {
    shared = undefined; // the next suite tries again
    throw error;
  }
  // A suite before may have reloaded the window: its new extension host answers the control fixture once it is up.
  await waitFor(
    () =>
      opened.command('workbench.action.closeQuickOpen').then(
        () => true,
        () => false,
      ),
    90_000,
    'the shared window to answer',
  );
  opened.emulator.state.reset();
  return { ...opened, close: async () => undefined };
}

/** Mocha's root hooks (a `require` of .mocharc.e2e.json): the shared window closes after the last suite. */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    const opening = shared;
    shared = undefined;
    await (await opening?.catch(() => undefined))?.close();
  },
};
