// The child process of test/unit/layerRules.test.ts: dependency-cruiser's API run on several scratch
// trees, one after the other, each from its own folder (the rules match paths from there: ^src/…), as
// `depcruise <folders> --config <config> --output-type err` runs there. One process for them all:
// loading dependency-cruiser and TypeScript costs ~1.5 s of CPU, a cruise of ~30 files little.
//   node depcruiseTrees.mjs <config> <JSON [{ dir, folders }]>
// Prints JSON [{ exitCode, output }] in the trees' order: exitCode is the count of errors (what
// `depcruise` exits with), output the err reporter's text.
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { resolve } from 'node:path';

const [config, treesJson] = process.argv.slice(2);
const options = await extractDepcruiseOptions(resolve(config));

const results = [];
for (const { dir, folders } of JSON.parse(treesJson)) {
  process.chdir(dir);
  // The tsconfig the config names, read from the tree's folder, as the bin reads it.
  const tsConfigFile = options.tsConfig?.fileName;
  const transpileOptions = tsConfigFile ? { tsConfig: extractTSConfig(resolve(tsConfigFile)) } : {};
  const { output, exitCode } = await cruise(folders, { ...options, outputType: 'err' }, {}, transpileOptions);
  results.push({ exitCode, output: String(output) });
}
process.stdout.write(JSON.stringify(results));
