// A window that several e2e suites use in turn (sharedWorkbench.ts, manyResultsWorkbench.ts): opened
// by the first suite that asks, handed to each suite with the emulator as it starts, and closed by a
// root hook once every suite has run. A failed opening is tried again by the next suite.
import { type OpenedWorkbench, waitFor } from './workbench';

export interface ReusedWindow {
  /** The window, opened on first use; its `close()` does nothing: the window outlives the suite. */
  get(): Promise<OpenedWorkbench>;
  /** Closes the window, if it was opened (the root hook's afterAll). */
  close(): Promise<void>;
}

export function reusedWindow(open: () => Promise<OpenedWorkbench>, name: string): ReusedWindow {
  let opening: Promise<OpenedWorkbench> | undefined;
  return {
    async get() {
      opening ??= open();
      let opened: OpenedWorkbench;
      try {
        opened = await opening;
      } catch (error) {
        opening = undefined; // the next suite tries again
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
        `the ${name} to answer`,
      );
      opened.emulator.state.reset();
      return { ...opened, close: async () => undefined };
    },
    async close() {
      const pending = opening;
      opening = undefined;
      await (await pending?.catch(() => undefined))?.close();
    },
  };
}
