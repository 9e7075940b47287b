// "Save as Project Style…" (commands/saveStarterStyle.ts) is dist/starterStyles.js, loaded on first use.
import type * as SaveStarterStyleModule from './saveStarterStyle';

let chunk: typeof SaveStarterStyleModule | undefined;
/** Loads dist/starterStyles.js on first use; esbuild leaves this require alone. */
export function starterStylesCode(): typeof SaveStarterStyleModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./starterStyles.js') as typeof SaveStarterStyleModule;
  return chunk;
}
