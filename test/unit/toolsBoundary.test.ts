// The emulator is the other side of the contract: it keeps its own reading of the spec. Were it to
// import the product's value lists or types, a mistake there would be mirrored and go unnoticed.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { importedModules } from './purity.test';

const ROOT = path.resolve(__dirname, '../../..');
const EMULATOR = path.join(ROOT, 'tools', 'emulator');

describe('tools/emulator keeps its own reading of the contract', () => {
  it('no file of tools/emulator imports anything from src/', () => {
    const files = readdirSync(EMULATOR, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length >= 10, `found only ${files.length} files in ${EMULATOR}`);
    const offenders = files.flatMap((f) => {
      const dir = path.dirname(path.join(EMULATOR, f));
      return importedModules(readFileSync(path.join(EMULATOR, f), 'utf8'))
        .filter((m) => m.startsWith('.') && path.resolve(dir, m).startsWith(path.join(ROOT, 'src') + path.sep))
        .map((m) => `${f}: ${m}`);
    });
    assert.deepEqual(offenders, []);
  });

  it('the product does not activate from a demo key in the environment', () => {
    const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const readers = sources.filter((f) => readFileSync(path.join(ROOT, 'src', f), 'utf8').includes('GATEWAY_IMAGES_DEMO_KEY'));
    assert.deepEqual(readers, []);
  });
});
