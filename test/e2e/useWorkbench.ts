// The hooks every e2e suite needs, in one call: the window opens before the suite's first test (a
// window of its own, or the one the sharing suites share), closes after its last, and a test that
// fails leaves a screenshot and the logs under test-results/e2e/ (captureOnFailure).
import * as assert from 'assert';
import { manyResultsWorkbench } from './manyResultsWorkbench';
import { sharedWorkbench } from './sharedWorkbench';
import { captureOnFailure, openWorkbench, type OpenedWorkbench, type OpenWorkbenchOptions } from './workbench';

/**
 * `'shared'`: the window of sharedWorkbench(); `'many-results'`: the window of manyResultsWorkbench(),
 * with 5,000 results (the close of either does nothing). Options: a window of the
 * suite's own; as a function, they are made in the before hook, after the suite's earlier before
 * hooks (a workspace written first, a language pack installed).
 */
export type WorkbenchSource = 'shared' | 'many-results' | OpenWorkbenchOptions | (() => OpenWorkbenchOptions);

export interface WorkbenchHooks {
  /** The before hook's deadline (mocha's this.timeout), where opening and onOpened need more than the default. */
  timeoutMs?: number;
  /** Runs in the same before hook once the window is open: a listener on the page, a fixture's answer set. */
  onOpened?: (opened: OpenedWorkbench) => void | Promise<void>;
}

/**
 * Registers before/after/afterEach on the current describe and returns the opened window, for the
 * suite's tests and hooks (it fails when asked before the before hook has opened it).
 */
export function useWorkbench(source: WorkbenchSource, hooks: WorkbenchHooks = {}): () => OpenedWorkbench {
  let opened: OpenedWorkbench | undefined;

  before(async function () {
    if (hooks.timeoutMs !== undefined) this.timeout(hooks.timeoutMs);
    opened =
      source === 'shared'
        ? await sharedWorkbench()
        : source === 'many-results'
          ? await manyResultsWorkbench()
          : await openWorkbench(typeof source === 'function' ? source() : source);
    await hooks.onOpened?.(opened);
  });
  after(async () => {
    await opened?.close();
  });
  afterEach(async function () {
    await captureOnFailure(this, opened);
  });

  return () => opened ?? assert.fail("the workbench is not open: useWorkbench's before hook opens it");
}
