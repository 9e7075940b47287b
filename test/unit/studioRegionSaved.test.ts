// The region editor's state kept when VS Code discards the hidden studio or reloads the window
// (media/studio/region/savedRegion.ts): read back defensively, and not kept when too long.
import * as assert from 'node:assert/strict';
import { load, type Operation, type SavedRegion } from '../support/regionPageModel';

describe('Region editor: the state kept when VS Code discards or reloads the page', () => {
  const LIMITS = { path: 4096, prompt: 32_000, id: 200 };
  const operations: Operation[] = [
    {
      kind: 'stroke',
      mode: 'add',
      size: 24,
      points: [
        { x: 1, y: 2 },
        { x: 30.5, y: 40 },
      ],
    },
    { kind: 'rectangle', mode: 'subtract', x: 5, y: 6, width: 7, height: 8 },
    { kind: 'invert' },
    { kind: 'ellipse', mode: 'add', x: 0, y: 0, width: 10, height: 12 },
    { kind: 'clear' },
  ];
  const saved: SavedRegion = { path: '/w/photo.png', width: 640, height: 480, operations, model: 'aurora-1', prompt: 'a boat ', feather: 8, wholeImage: false };

  it('reads back what the editor saved, through JSON as the state API keeps it', () => {
    assert.deepEqual(load().parseSavedRegion(JSON.parse(JSON.stringify(saved)), LIMITS), saved);
    // The chosen format is kept; what a version before the choice kept has none (PNG).
    assert.deepEqual(load().parseSavedRegion({ ...saved, format: 'jpeg' }, LIMITS), { ...saved, format: 'jpeg' });
  });

  it('refuses anything malformed as a whole: the studio then opens as usual', () => {
    const { parseSavedRegion } = load();
    const broken: unknown[] = [
      undefined,
      'text',
      { ...saved, path: '' },
      { ...saved, width: 0 },
      { ...saved, height: 1.5 },
      { ...saved, feather: 257 },
      { ...saved, wholeImage: 'yes' },
      { ...saved, format: 'webp' },
      { ...saved, prompt: 'x'.repeat(32_001) },
      { ...saved, operations: [{ kind: 'paint' }] },
      { ...saved, operations: [{ kind: 'stroke', mode: 'add', size: 3, points: [] }] },
      { ...saved, operations: [{ kind: 'stroke', mode: 'add', size: 3, points: [{ x: 'a', y: 1 }] }] },
      { ...saved, operations: [{ kind: 'rectangle', mode: 'both', x: 0, y: 0, width: 1, height: 1 }] },
      { ...saved, operations: [{ kind: 'ellipse', mode: 'add', x: Infinity, y: 0, width: 1, height: 1 }] },
      { ...saved, operations: new Array(load().SAVED_OPERATIONS_MAX + 1).fill({ kind: 'invert' }) },
    ];
    for (const value of broken) assert.equal(parseSavedRegion(value, LIMITS), undefined, JSON.stringify(value)?.slice(0, 120));
  });

  it("a painting too long to keep is not kept (its operations or its strokes' points)", () => {
    const { keepable, SAVED_OPERATIONS_MAX, SAVED_POINTS_MAX } = load();
    assert.equal(keepable(operations), true);
    assert.equal(keepable(new Array(SAVED_OPERATIONS_MAX + 1).fill({ kind: 'invert' })), false);
    const points = Array.from({ length: SAVED_POINTS_MAX + 1 }, (_, i) => ({ x: i, y: i }));
    assert.equal(keepable([{ kind: 'stroke', mode: 'add', size: 2, points }]), false);
  });
});
