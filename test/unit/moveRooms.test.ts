// scripts/moveRooms.mjs on a scratch git repository: it moves files into their rooms and rewrites
// the imports and path strings that named them, leaves chunk loads (`require('./x.js')`) alone, does
// nothing when run again, and mends a file merged later that still names an old place.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

describe('scripts/moveRooms.mjs (the rooms of src/commands, src/studio and src/core)', function () {
  this.timeout(60_000);
  let repo: string;

  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  };
  const read = (file: string) => readFileSync(path.join(repo, file), 'utf8');
  const run = (...args: string[]) => spawnSync(process.execPath, [path.join(repo, 'scripts', 'moveRooms.mjs'), ...args], { cwd: repo, encoding: 'utf8' });

  beforeEach(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'move-rooms-'));
    mkdirSync(path.join(repo, 'scripts'));
    copyFileSync(path.join(ROOT, 'scripts', 'moveRooms.mjs'), path.join(repo, 'scripts', 'moveRooms.mjs'));
    write('src/commands/generate.ts', "import { pickModel } from './pickers';\nimport { GatewayClient } from '../core/gateway/client';\nexport const g = 1;\n");
    write('src/commands/pickers.ts', "// Used by commands/generate.ts.\nconst chunk = require('./styles.js');\nexport const pickModel = chunk;\n");
    write(
      'src/core/gateway/client.ts',
      "import { sniffImage } from '../files/imageSniff';\nimport type { Types } from './types';\nexport class GatewayClient {}\n",
    );
    write('src/core/gateway/types.ts', 'export type Types = 1;\n');
    write('src/core/files/imageSniff.ts', "import type { Types } from '../gateway/types';\nexport const sniffImage = 1;\n");
    write('src/studio/index.ts', "import { generate } from '../commands/generate';\nexport const s = 1;\n");
    write('src/extension.ts', "import { registerStudio } from './studio';\nimport { g } from './commands/generate';\n");
    write('test/unit/generate.test.ts', "import { g } from '../../src/commands/generate';\nconst entry = 'out/src/commands/generate.js';\n");
    write('docs/building.md', 'The palette: `src/commands/generate.ts`; the client: `src/core/gateway/client.ts`; the room src/commands/ itself.\n');
    write('CHANGELOG.md', 'Moved `src/commands/generate.ts`.\n');
    execFileSync('git', ['init', '-q'], { cwd: repo });
    execFileSync('git', ['add', '.'], { cwd: repo });
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', 'commit', '-qm', 'before the rooms'], { cwd: repo });
  });

  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('moves each file into its room and rewrites every import and path that named it', () => {
    const first = run();
    assert.equal(first.status, 0, first.stderr);
    for (const gone of [
      'src/commands/generate.ts',
      'src/commands/pickers.ts',
      'src/core/gateway/client.ts',
      'src/core/files/imageSniff.ts',
      'src/studio/index.ts',
    ]) {
      assert.ok(!existsSync(path.join(repo, gone)), `${gone} is still there`);
    }
    assert.equal(
      read('src/commands/images/generate.ts'),
      "import { pickModel } from './pickers';\nimport { GatewayClient } from '../../core/client/client';\nexport const g = 1;\n",
    );
    // A chunk load names a file of dist/, not the source beside it; a comment's short path follows the move.
    assert.equal(
      read('src/commands/images/pickers.ts'),
      "// Used by commands/images/generate.ts.\nconst chunk = require('./styles.js');\nexport const pickModel = chunk;\n",
    );
    assert.equal(
      read('src/core/client/client.ts'),
      "import { sniffImage } from '../images/imageSniff';\nimport type { Types } from '../gateway/types';\nexport class GatewayClient {}\n",
    );
    assert.equal(read('src/core/images/imageSniff.ts'), "import type { Types } from '../gateway/types';\nexport const sniffImage = 1;\n");
    assert.equal(read('src/studio/panel/index.ts'), "import { generate } from '../../commands/images/generate';\nexport const s = 1;\n");
    assert.equal(read('src/extension.ts'), "import { registerStudio } from './studio/panel';\nimport { g } from './commands/images/generate';\n");
    assert.equal(
      read('test/unit/generate.test.ts'),
      "import { g } from '../../src/commands/images/generate';\nconst entry = 'out/src/commands/images/generate.js';\n",
    );
    assert.equal(
      read('docs/building.md'),
      'The palette: `src/commands/images/generate.ts`; the client: `src/core/client/client.ts`; the room src/commands/ itself.\n',
    );
    assert.equal(read('CHANGELOG.md'), 'Moved `src/commands/generate.ts`.\n', 'history stays as it was written');
    const staged = execFileSync('git', ['status', '--short'], { cwd: repo, encoding: 'utf8' });
    assert.match(staged, /^R. src\/commands\/generate\.ts -> src\/commands\/images\/generate\.ts$/m, 'moved with git mv, so history follows');
  });

  it('does nothing when run again, and --check says so with exit 0', () => {
    assert.equal(run().status, 0);
    const snapshot = execFileSync('git', ['diff'], { cwd: repo, encoding: 'utf8' });
    const again = run();
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /rooms: nothing to do/);
    assert.equal(execFileSync('git', ['diff'], { cwd: repo, encoding: 'utf8' }), snapshot);
    const check = run('--check');
    assert.equal(check.status, 0);
    assert.match(check.stdout, /rooms: nothing to do/);
  });

  it('mends a file merged after the move that still imports the old places; --check names it first and changes nothing', () => {
    assert.equal(run().status, 0);
    write('src/commands/regionEdit.ts', "import { g } from './generate';\nimport { pickModel } from './pickers';\n");
    write('src/studio/regionView.ts', "import { g } from '../commands/generate';\n");
    const check = run('--check');
    assert.equal(check.status, 1);
    assert.match(check.stdout, /rewrite src\/commands\/regionEdit\.ts/);
    assert.equal(read('src/commands/regionEdit.ts'), "import { g } from './generate';\nimport { pickModel } from './pickers';\n");
    assert.equal(run().status, 0);
    assert.equal(read('src/commands/regionEdit.ts'), "import { g } from './images/generate';\nimport { pickModel } from './images/pickers';\n");
    assert.equal(read('src/studio/regionView.ts'), "import { g } from '../commands/images/generate';\n");
  });

  it('refuses, changing nothing, when a file exists both at its old place and in its room', () => {
    assert.equal(run().status, 0);
    write('src/commands/generate.ts', 'export const g = 2;\n');
    const clash = run();
    assert.notEqual(clash.status, 0);
    assert.match(clash.stderr, /both src\/commands\/generate\.ts and src\/commands\/images\/generate\.ts exist/);
    assert.equal(read('src/commands/generate.ts'), 'export const g = 2;\n');
  });
});
