// The layer rules of .dependency-cruiser.cjs can fail: each is run (with the repo's config and its
// dependency-cruiser) on a scratch tree that breaks it once, beside imports that the same rule
// allows. `npm run lint` runs them on the real tree.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
/** Runs dependency-cruiser on each scratch tree as `depcruise` would, all in one process (test/support/depcruiseTrees.mjs). */
const CRUISE_TREES = path.join(ROOT, 'test', 'support', 'depcruiseTrees.mjs');

/** A file of the scratch tree: its path and the modules it imports (`type:` for a type-only import). */
type TreeFile = [file: string, imports: string[]];

/** Every module the trees import, so that each import resolves. */
const MODULES = [
  'src/core/common/plural.ts',
  'src/core/gateway/types.ts',
  'src/core/gateway/errors.ts',
  'src/core/gateway/catalog.ts',
  'src/core/gateway/deadline.ts',
  'src/core/gateway/paidCall.ts',
  'src/core/gateway/imageSink.ts',
  'src/core/client/client.ts',
  'src/core/answers/generationStream.ts',
  'src/core/images/imageSniff.ts',
  'src/core/files/outputPath.ts',
  'src/core/files/recoveryFolder.ts',
  'src/core/answers/imageDownload.ts',
  'src/core/requests/validation.ts',
  'src/core/money/cost.ts',
  'src/jobs/jobRunner.ts',
  'src/commands/common/showError.ts',
  'src/commands/styles/styles.ts',
  'src/commands/images/pickers.ts',
  'src/commands/promptFiles/batchRun.ts',
  'src/commands/results/recover.ts',
  'src/commands/account/account.ts',
  'src/studio/protocol/protocol.ts',
  'src/studio/model/view.ts',
  'src/studio/gallery/galleryFeed.ts',
  'src/studio/gallery/galleryList.ts',
  'src/studio/compare/compareView.ts',
  'src/studio/panel/studioPanel.ts',
];

/** Writes a scratch tree of `files` (each exporting a value) and the modules they import into `dir`; returns the folders to cruise. */
function writeTree(dir: string, files: TreeFile[]): string[] {
  const written = new Map<string, string[]>(MODULES.map((m) => [m, []]));
  for (const [file, imports] of files) written.set(file, imports);
  for (const [file, imports] of written) {
    const lines = imports.map((spec) => {
      if (!/^(type:)?(src|media)\//.test(spec)) return `import '${spec}';`; // a package: vscode
      const typeOnly = spec.startsWith('type:');
      const target = path.relative(path.dirname(file), spec.replace(/^type:/, '')).replace(/\.ts$/, '');
      const name = `_${imports.indexOf(spec)}`;
      const from = target.startsWith('.') ? target : `./${target}`;
      return typeOnly ? `import type { value as ${name} } from '${from}';\nexport type T${name} = typeof ${name};` : `import '${from}';`;
    });
    mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(dir, file), `${lines.join('\n')}\nexport const value = 1;\n`);
  }
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'ES2022', strict: true }, include: ['src'] }));
  return ['src', 'media'].filter((folder) => [...written.keys()].some((file) => file.startsWith(`${folder}/`)));
}

/** What depcruise answered for one tree: its exit status and what it printed. */
interface Cruise {
  exitCode: number;
  output: string;
}

/** The violations in one tree's answer as "rule: from → to", sorted; its exit status must agree with them. */
function violationsOf({ exitCode, output }: Cruise): string[] {
  // A circle is printed over several lines (a → b → … → a): its first step is kept.
  const found = [...output.replace(/→\s+/g, '→ ').matchAll(/error (\S+): (\S+) → (\S+)/g)].map((m) => `${m[1]}: ${m[2]} → ${m[3]}`);
  assert.equal(exitCode === 0, found.length === 0, `depcruise exited ${exitCode}:\n${output}`);
  return found.sort();
}

describe('layer rules (.dependency-cruiser.cjs)', function () {
  this.timeout(60_000);
  /** Each test's tree, by its title: all are written, then cruised by one process, before the tests. */
  const trees = new Map<string, TreeFile[]>();
  const cruises = new Map<string, Cruise>();
  let dir: string;

  /** A test: depcruise over a tree of `files` finds exactly the `expected` violations. */
  function cruised(title: string, files: TreeFile[], expected: string[]): void {
    trees.set(title, files);
    it(title, () => assert.deepEqual(violationsOf(cruises.get(title)!), expected));
  }

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'layer-rules-'));
    const titles = [...trees.keys()];
    const toCruise = titles.map((title, i) => {
      const treeDir = path.join(dir, `tree-${i}`);
      return { dir: treeDir, folders: writeTree(treeDir, trees.get(title)!) };
    });
    const run = spawnSync(process.execPath, [CRUISE_TREES, path.join(ROOT, '.dependency-cruiser.cjs'), JSON.stringify(toCruise)], { encoding: 'utf8' });
    assert.equal(run.status, 0, `${CRUISE_TREES} exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
    const answers = JSON.parse(run.stdout) as Cruise[];
    titles.forEach((title, i) => cruises.set(title, answers[i]!));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  cruised(
    'allows what the rooms of src/core may import, as their READMEs say',
    [
      ['src/core/money/cost.ts', ['src/core/common/plural.ts', 'src/core/gateway/types.ts', 'src/core/gateway/errors.ts']],
      ['src/core/requests/validation.ts', ['src/core/gateway/catalog.ts', 'src/core/files/outputPath.ts']],
      ['src/core/answers/imageDownload.ts', ['src/core/gateway/deadline.ts', 'src/core/gateway/paidCall.ts', 'src/core/images/imageSniff.ts']],
      ['src/core/gateway/paidCall.ts', ['type:src/core/gateway/imageSink.ts']],
      ['src/core/files/recoveryFolder.ts', ['type:src/core/gateway/imageSink.ts', 'src/core/answers/generationStream.ts', 'src/core/images/imageSniff.ts']],
      [
        'src/core/client/client.ts',
        ['src/core/requests/validation.ts', 'src/core/money/cost.ts', 'src/core/files/recoveryFolder.ts', 'src/core/answers/imageDownload.ts'],
      ],
      ['src/studio/model/view.ts', ['src/jobs/jobRunner.ts', 'src/core/client/client.ts']],
    ],
    [],
  );

  cruised(
    'refuses an import against the rooms of src/core, naming the rule, the file and the import',
    [
      ['src/core/common/plural.ts', ['src/core/gateway/types.ts']],
      ['src/core/gateway/errors.ts', ['src/core/gateway/catalog.ts']],
      ['src/core/gateway/deadline.ts', ['src/core/images/imageSniff.ts']],
      ['src/core/money/cost.ts', ['src/core/requests/validation.ts']],
      ['src/core/requests/validation.ts', ['src/core/answers/generationStream.ts']],
      ['src/core/answers/generationStream.ts', ['type:src/core/client/client.ts']],
      ['src/core/images/imageSniff.ts', ['src/core/files/outputPath.ts']],
      ['src/core/gateway/paidCall.ts', ['type:src/core/answers/imageDownload.ts']],
      ['src/core/files/recoveryFolder.ts', ['type:src/core/client/client.ts']],
    ],
    [
      'core-answers-room: src/core/answers/generationStream.ts → src/core/client/client.ts',
      'core-client-on-top: src/core/answers/generationStream.ts → src/core/client/client.ts',
      'core-client-on-top: src/core/files/recoveryFolder.ts → src/core/client/client.ts',
      'core-common-is-the-bottom: src/core/common/plural.ts → src/core/gateway/types.ts',
      'core-contract-stands-alone: src/core/gateway/errors.ts → src/core/gateway/catalog.ts',
      'core-files-room: src/core/files/recoveryFolder.ts → src/core/client/client.ts',
      'core-gateway-room: src/core/gateway/deadline.ts → src/core/images/imageSniff.ts',
      'core-gateway-room: src/core/gateway/paidCall.ts → src/core/answers/imageDownload.ts',
      'core-images-room: src/core/images/imageSniff.ts → src/core/files/outputPath.ts',
      'core-money-room: src/core/money/cost.ts → src/core/requests/validation.ts',
      'core-requests-room: src/core/requests/validation.ts → src/core/answers/generationStream.ts',
    ],
  );

  cruised(
    'allows what the rooms of src/commands and src/studio may import, as their READMEs say',
    [
      ['src/commands/styles/styles.ts', ['src/commands/common/showError.ts']],
      ['src/commands/images/pickers.ts', ['src/commands/styles/styles.ts', 'src/commands/common/showError.ts']],
      ['src/commands/promptFiles/batchRun.ts', ['src/commands/images/pickers.ts', 'src/commands/styles/styles.ts']],
      ['src/commands/results/recover.ts', ['src/commands/styles/styles.ts', 'src/commands/common/showError.ts']],
      ['src/commands/account/account.ts', ['src/commands/images/pickers.ts', 'src/commands/results/recover.ts']],
      ['src/studio/model/view.ts', ['src/studio/protocol/protocol.ts', 'src/commands/common/showError.ts']],
      ['src/studio/gallery/galleryFeed.ts', ['src/studio/model/view.ts', 'src/studio/protocol/protocol.ts']],
      ['src/studio/compare/compareView.ts', ['src/studio/model/view.ts', 'src/commands/images/pickers.ts']],
      ['src/studio/panel/studioPanel.ts', ['src/studio/gallery/galleryFeed.ts', 'src/studio/compare/compareView.ts']],
      ['media/studio/form.ts', ['src/studio/protocol/protocol.ts', 'src/studio/gallery/galleryList.ts']],
    ],
    [],
  );

  cruised(
    'refuses an import against the rooms of src/commands and src/studio, and a file outside their rooms',
    [
      ['src/commands/common/showError.ts', ['src/commands/account/account.ts']],
      ['src/commands/styles/styles.ts', ['src/commands/images/pickers.ts']],
      ['src/commands/images/pickers.ts', ['src/commands/promptFiles/batchRun.ts']],
      ['src/commands/results/recover.ts', ['src/commands/images/pickers.ts']],
      ['src/commands/account/account.ts', ['src/commands/loose.ts']],
      ['src/commands/loose.ts', []],
      ['src/studio/protocol/protocol.ts', ['src/studio/model/view.ts']],
      ['src/studio/model/view.ts', ['src/studio/gallery/galleryFeed.ts']],
      ['src/studio/gallery/galleryFeed.ts', ['src/studio/compare/compareView.ts']],
      ['src/studio/compare/compareView.ts', ['src/studio/panel/studioPanel.ts']],
      ['src/studio/panel/studioPanel.ts', ['src/studio/loose.ts']],
      ['src/studio/loose.ts', []],
    ],
    [
      'commands-common-room: src/commands/common/showError.ts → src/commands/account/account.ts',
      'commands-images-room: src/commands/images/pickers.ts → src/commands/promptFiles/batchRun.ts',
      'commands-in-rooms: src/commands/account/account.ts → src/commands/loose.ts',
      'commands-results-room: src/commands/results/recover.ts → src/commands/images/pickers.ts',
      'commands-styles-room: src/commands/styles/styles.ts → src/commands/images/pickers.ts',
      'studio-compare-room: src/studio/compare/compareView.ts → src/studio/panel/studioPanel.ts',
      'studio-gallery-room: src/studio/gallery/galleryFeed.ts → src/studio/compare/compareView.ts',
      'studio-in-rooms: src/studio/panel/studioPanel.ts → src/studio/loose.ts',
      'studio-model-room: src/studio/model/view.ts → src/studio/gallery/galleryFeed.ts',
      'studio-protocol-room: src/studio/protocol/protocol.ts → src/studio/model/view.ts',
    ],
  );

  cruised(
    'refuses a circle, vscode or a floor above in core, the studio in features, and src beyond the protocol in media',
    [
      ['src/core/money/cost.ts', ['src/jobs/jobRunner.ts']],
      ['src/core/gateway/types.ts', ['vscode']],
      ['src/jobs/jobRunner.ts', ['src/core/money/cost.ts']],
      ['src/commands/images/generate.ts', ['src/studio/model/view.ts']],
      ['media/studio/form.ts', ['src/jobs/jobRunner.ts']],
    ],
    [
      'core-is-pure: src/core/gateway/types.ts → vscode',
      'core-is-pure: src/core/money/cost.ts → src/jobs/jobRunner.ts',
      'features-not-studio: src/commands/images/generate.ts → src/studio/model/view.ts',
      'media-only-protocol: media/studio/form.ts → src/jobs/jobRunner.ts',
      'no-circular: src/core/money/cost.ts → src/jobs/jobRunner.ts',
    ],
  );
});
