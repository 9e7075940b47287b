// What an e2e test holds of its window: the page, the emulator, the workspace and the set-up
// channel. Apart from workbench.ts, which opens it, so the parts it drives can name it without an import circle.
import type { Page } from 'playwright-core';
import type { EmulatorHandle } from '../harness/emulator';
import type { Workbench } from '../harness/launch';

export interface OpenedWorkbench {
  page: Page;
  emulator: EmulatorHandle;
  /** The opened folder (a throwaway copy unless options.workspace was given). */
  workspace: string;
  /** The underlying launch (temp dir, port, logs). */
  workbench: Workbench;
  /** Runs a VS Code command in the window (through the e2e-control fixture): for setting up state only. */
  command<T = unknown>(id: string, ...args: unknown[]): Promise<T>;
  /** Writes user settings (null removes one). */
  settings(values: Record<string, unknown>): Promise<void>;
  /** The MCP server's definitions, as VS Code lists them and as it starts them (the extension's test API). */
  mcpDefinitions(): Promise<{ listed: McpDefinitionJson[]; resolved: McpDefinitionJson[] }>;
  /** The extension host's process id (the crash tests kill it). */
  extensionHostPid(): Promise<number>;
  /** Waits until an extension host other than `previous` answers (after a crash or a reload) and returns its pid. */
  waitForNewExtensionHost(previous: number, timeoutMs?: number): Promise<number>;
  /** Settings that prepareTest wrote for the current test (undone by the next prepareTest). */
  readonly testSettings: Set<string>;
  close(): Promise<void>;
}

/** An MCP server definition as the e2e-control fixture sends it (cwd as a path). */
export interface McpDefinitionJson {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  cwd?: string;
}
