// The integration suites that `npm test` runs on the oldest VS Code only (1.100.3, the engine's
// floor), not again on the current one. Their subject is the extension's own logic reached through its
// commands, settings and files: the journal, paid calls and their outcomes, argument checks, batch
// runs, region edits. Every suite that touches a surface VS Code changed between the two (chat and
// language model tools, MCP, webviews, the Markdown renderer, tabs and editors, trust, secrets and
// state, proxies and certificates, the status bar, l10n, activation) runs on both.
// `npm run test:integration:current` still runs every suite on 1.139.1.

/** File names (without `.test.ts`) of test/integration, each with why once is enough. */
export const ON_OLDEST_ONLY: Readonly<Record<string, string>> = {
  results: 'the results journal through the batch command: files and locks, no VS Code surface',
  severalAtOnce: 'several actors on one journal and account: processes and files',
  realGateway: 'answer forms of other gateways: the HTTP client',
  unreadableAnswer: 'paid answers that cannot be read: the client and the recovery folder',
  provenance: 'the PNG record and the Regenerate and Variations commands',
  batch: 'Generate Images from File through its command',
  concurrency: 'ten generations at once into one folder',
  compare: 'Compare Models: the arguments',
  generate: 'Generate Image: the arguments',
  edit: 'Edit Image: the arguments, both transports',
  regionEdit: 'region edits by mask through the command',
  editShape: 'edits keep the source shape',
  urlAnswers: 'images given as addresses',
  outcome: 'outcome unknown: a body cut, a process killed',
};

/** The environment value that asks the mocha entry for the suites that differ between VS Codes. */
export const VERSION_SENSITIVE_ONLY = 'version-sensitive';

/** The test files to load: all of them, or without the ones listed above when `subset` asks. */
export function selectTestFiles(files: readonly string[], subset: string | undefined): string[] {
  if (subset === undefined || subset === '') return [...files];
  if (subset !== VERSION_SENSITIVE_ONLY) throw new Error(`GATEWAY_IMAGES_TEST_SUBSET: expected "${VERSION_SENSITIVE_ONLY}", got "${subset}"`);
  return files.filter((file) => !(baseName(file) in ON_OLDEST_ONLY));
}

function baseName(file: string): string {
  return (file.split(/[\\/]/).pop() ?? file).replace(/\.test\.(js|ts)$/, '');
}
