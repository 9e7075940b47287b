// The child process of test/unit/layerRules.test.ts: dependency-cruiser's CLI (the function that the
// `depcruise` bin calls with its parsed arguments) run on several scratch trees, one after the other,
// each from its own folder (the rules match paths from there: ^src/…). One process for them all:
// loading dependency-cruiser and TypeScript costs ~1.5 s of CPU, a cruise of ~30 files little.
//   node depcruiseTrees.mjs <config> <JSON [{ dir, folders }]>
// Prints JSON [{ exitCode, output }] in the trees' order: exitCode is the one `depcruise` exits with,
// output what it prints (--output-type err); each cruise clears dependency-cruiser's caches first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [config, treesJson] = process.argv.slice(2);
const { default: cli } = await import(new URL('../../node_modules/dependency-cruiser/src/cli/index.mjs', import.meta.url).href);

const results = [];
for (const { dir, folders } of JSON.parse(treesJson)) {
  process.chdir(dir);
  const outputTo = join(dir, 'depcruise-output.txt');
  let printed = '';
  const stream = { write: (text) => (printed += text) };
  // The options as the bin's argument parser gives them for `depcruise <folders> --config <config> --output-type err`.
  const exitCode = await cli(folders, { config, outputType: 'err', outputTo, metrics: false, focusDepth: 1 }, { stdout: stream, stderr: stream });
  let output = printed;
  try {
    output += readFileSync(outputTo, 'utf8');
  } catch {
    // Nothing written: an error before the report, already in `printed`.
  }
  results.push({ exitCode, output });
}
process.stdout.write(JSON.stringify(results));
