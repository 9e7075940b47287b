// The language model's part (commands/images/writePrompt.ts) is dist/writePrompt.js, loaded on first use
// by Generate Image for Selection and the studio, so that activation does not read it.
import type * as WritePromptModule from './writePrompt';

let chunk: typeof WritePromptModule | undefined;
/** Loads dist/writePrompt.js on first use; esbuild leaves this require alone. */
export function writePromptCode(): typeof WritePromptModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./writePrompt.js') as typeof WritePromptModule;
  return chunk;
}
