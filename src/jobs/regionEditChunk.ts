// The region edit's code (regionEdit.ts with the decoders, resize and compositing of core/images) is
// dist/regionEdit.js, loaded when a region edit is first asked for, so that activation does not read it.
import type * as RegionEditModule from './regionEdit';

let chunk: typeof RegionEditModule | undefined;
/** Loads dist/regionEdit.js on first use; esbuild leaves this require alone. */
export function regionEditCode(): typeof RegionEditModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  chunk ??= require('./regionEdit.js') as typeof RegionEditModule;
  return chunk;
}
