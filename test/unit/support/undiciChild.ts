// What the undici mend's require hook (scripts/undiciMendRegister.cjs) did in a process that runs the
// product's HTTP client from out/. Forked by test/unit/undiciMend.test.ts, as the crash tests fork
// their children: it loads the client and reports over IPC.
import * as path from 'node:path';
import '../../../src/core/client/client';

/** file → outcome ('mended', …) of each undici file the hook passed through; empty when no hook was preloaded. */
export function undiciMendOutcomes(): [string, string][] {
  const suffix = `${path.sep}scripts${path.sep}undiciMendRegister.cjs`;
  const hook = Object.values(require.cache).find((m) => m?.filename.endsWith(suffix));
  return hook ? [...(hook.exports as { outcomes: Map<string, string> }).outcomes] : [];
}

if (require.main === module) {
  process.send!({ outcomes: undiciMendOutcomes() }, () => process.exit(0));
}
