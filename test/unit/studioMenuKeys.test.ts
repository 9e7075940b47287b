// The keyboard of a gallery card's More actions menu (media/studio/menuKeys.ts), bundled by esbuild
// as the page runs it: arrows move and wrap, Home and End jump, Enter and Space carry out, Escape
// closes with the focus back on the button, Tab closes and lets the focus move on.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { buildSync } from 'esbuild';

type Outcome = { kind: 'focus'; index: number } | { kind: 'activate' } | { kind: 'close'; returnFocus: boolean } | undefined;

interface MenuKeys {
  menuKey: (key: string, index: number, count: number) => Outcome;
  openingIndex: (key: string, count: number) => number;
}

const ENTRY = path.join(__dirname, '..', '..', '..', 'media', 'studio', 'menuKeys.ts');

function load(): MenuKeys {
  const bundle = buildSync({ entryPoints: [ENTRY], bundle: true, format: 'cjs', platform: 'browser', write: false, logLevel: 'silent' }).outputFiles[0]?.text;
  if (!bundle) throw new Error(`esbuild wrote no bundle of ${ENTRY}`);
  const module = { exports: {} as MenuKeys };
  vm.runInNewContext(bundle, { module, exports: module.exports });
  return module.exports;
}

describe('Studio gallery: the More actions menu keyboard', () => {
  const { menuKey, openingIndex } = load();
  // Compared as plain JSON: the objects come from another realm (vm).
  const key = (k: string, index: number, count: number) => JSON.parse(JSON.stringify(menuKey(k, index, count) ?? null)) as Outcome | null;

  it('ArrowDown and ArrowUp move to the next and previous item and wrap at the ends', () => {
    assert.deepEqual(key('ArrowDown', 0, 4), { kind: 'focus', index: 1 });
    assert.deepEqual(key('ArrowDown', 3, 4), { kind: 'focus', index: 0 });
    assert.deepEqual(key('ArrowUp', 2, 4), { kind: 'focus', index: 1 });
    assert.deepEqual(key('ArrowUp', 0, 4), { kind: 'focus', index: 3 });
  });

  it('Home and End (and PageUp, PageDown) go to the first and last item', () => {
    assert.deepEqual(key('Home', 2, 4), { kind: 'focus', index: 0 });
    assert.deepEqual(key('PageUp', 2, 4), { kind: 'focus', index: 0 });
    assert.deepEqual(key('End', 1, 4), { kind: 'focus', index: 3 });
    assert.deepEqual(key('PageDown', 1, 4), { kind: 'focus', index: 3 });
  });

  it('Enter and Space carry out the focused item', () => {
    assert.deepEqual(key('Enter', 1, 4), { kind: 'activate' });
    assert.deepEqual(key(' ', 1, 4), { kind: 'activate' });
  });

  it('Escape closes and gives the focus back to the button; Tab closes and lets the focus move on', () => {
    assert.deepEqual(key('Escape', 1, 4), { kind: 'close', returnFocus: true });
    assert.deepEqual(key('Tab', 1, 4), { kind: 'close', returnFocus: false });
  });

  it('other keys are left alone', () => {
    for (const other of ['a', 'ArrowLeft', 'ArrowRight', 'Shift', 'F10']) assert.equal(key(other, 1, 4), null, other);
  });

  it('with the focus on no item (the menu itself), ArrowDown goes to the first and ArrowUp to the last', () => {
    assert.deepEqual(key('ArrowDown', -1, 4), { kind: 'focus', index: 0 });
    assert.deepEqual(key('ArrowUp', -1, 4), { kind: 'focus', index: 3 });
  });

  it('an empty menu only closes', () => {
    assert.equal(key('ArrowDown', 0, 0), null);
    assert.equal(key('Enter', 0, 0), null);
    assert.deepEqual(key('Escape', 0, 0), { kind: 'close', returnFocus: true });
  });

  it('opens on the first item, or on the last for ArrowUp', () => {
    assert.equal(openingIndex('ArrowDown', 4), 0);
    assert.equal(openingIndex('Enter', 4), 0);
    assert.equal(openingIndex('ArrowUp', 4), 3);
  });
});
