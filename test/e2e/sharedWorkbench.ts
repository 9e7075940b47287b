// One window for the e2e suites that need nothing of their own: opening and closing one costs about
// ten seconds of a 2-core machine (code-server, Chromium, the workbench, the extension host). The
// palette, quick-pick, compare, chat-tool, two-window, gallery-card, first-image, money-alert,
// region-editor, studio, project-style and both language-model suites share it (those that count the gallery's results
// count what they add; the styles suite removes its styles file when it ends). Not: a window without
// a folder, in Russian, with Workspace Trust, nobody has used yet (the walkthrough's steps), or whose
// results journal a test fills with thousands of results. Loaded by .mocharc.e2e.json (`require`):
// its root hook closes the window once every suite has run.
import * as path from 'path';
import { LM_PROVIDER_FIXTURE, REPO_ROOT } from '../harness/paths';
import { hasProviderApi } from './lmProvider';
import { reusedWindow } from './reusedWindow';
import { openWorkbench, type OpenedWorkbench, type OpenWorkbenchOptions } from './workbench';

/** The tool-invoker fixture (the chat tool's confirmation suite): a command that invokes our language model tool. */
export const TOOL_INVOKER = path.join(REPO_ROOT, 'test', 'fixtures', 'tool-invoker');

/**
 * What the sharing suites need, together; a test sets anything else through prepareTest (and the next
 * one undoes it). Where VS Code has the provider API, the language model fixture, with no model offered
 * until the suite that needs one offers it.
 */
const shared = reusedWindow(
  () =>
    openWorkbench({
      settings: { 'gatewayImages.openAfterGenerate': false, 'gatewayImages.confirmCostAbove': 1000, 'gatewayImagesTest.languageModelAvailable': false },
      extensions: [TOOL_INVOKER, ...(hasProviderApi() ? [LM_PROVIDER_FIXTURE] : [])],
    } satisfies OpenWorkbenchOptions),
  'shared window',
);

/**
 * The shared window, opened by the first suite that asks. Each suite starts with the emulator as it
 * starts (balance, keys' budgets, request log, faults), whichever suites ran before; what stays is
 * the workspace's files and the results journal, so a test counts what it adds. Its `close()` does
 * nothing: the window outlives the suite.
 */
export function sharedWorkbench(): Promise<OpenedWorkbench> {
  return shared.get();
}

/** Mocha's root hooks (a `require` of .mocharc.e2e.json): the shared window closes after the last suite. */
export const mochaHooks = {
  afterAll: (): Promise<void> => shared.close(),
};
