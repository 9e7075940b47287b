// "Save as Project Style…" (commands/styles/saveStarterStyle.ts) is dist/starterStyles.js, loaded on first use.
// Its API is written out here, not taken from the module (`typeof import`): the chunk imports the
// commands that load it, and a type taken from it would close an import circle.
import type { Services } from '../../services';

/** What dist/starterStyles.js offers (commands/styles/saveStarterStyle.ts). */
export interface StarterStylesCode {
  /** Copies a built-in style into the project's styles file; its name, or undefined when not saved. */
  saveStarterStyle(services: Services, args?: unknown): Promise<string | undefined>;
}

let chunk: StarterStylesCode | undefined;
/** Loads dist/starterStyles.js on first use; esbuild leaves this require alone. */
export function starterStylesCode(): StarterStylesCode {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./starterStyles.js') as StarterStylesCode;
  return chunk;
}
