// The region editor's pure model (media/studio/region/): the mask's operations with undo and redo,
// what is known of its coverage, zoom and coordinates, the keyboard rectangle and its sentences,
// and the mask's base64. Bundled by esbuild for the browser and run as the page runs it.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { type KeyboardState, load, type Operation, type Translate } from '../support/regionPageModel';

/** The English texts of media/studio's keys (src/studio/model/strings.ts), filled in as host.ts t() does. */
const ENGLISH: Record<string, string> = {
  regionCursorAt: 'Cursor at {0} %, {1} %',
  regionRectangleStarted: 'Rectangle started at {0} %, {1} %. Move its other corner with the arrows; Enter adds it, Escape cancels.',
  regionRectangleSpan: 'Rectangle {0} % to {1} % wide, {2} % to {3} % high',
  regionRectangleAdded: 'Rectangle added',
  regionRectangleSubtracted: 'Rectangle subtracted',
  regionRectangleCancelled: 'Rectangle cancelled',
  regionRectangleEmpty: 'The rectangle has no width or height yet: move its other corner with the arrows.',
};
const t: Translate = (key, ...args) => (ENGLISH[key] ?? key).replace(/\{(\d+)\}/g, (_, i: string) => String(args[Number(i)]));

const stroke = (mode: 'add' | 'subtract' = 'add'): Operation => ({ kind: 'stroke', mode, size: 10, points: [{ x: 5, y: 5 }] });

describe('studio region editor: the pure model (media/studio/region)', function () {
  this.timeout(30_000);

  describe('mask history', () => {
    it('undo and redo walk the operations; a new operation drops what was undone', () => {
      const { MaskHistory } = load();
      const history = new MaskHistory(100, 50);
      assert.equal(history.canUndo, false);
      assert.equal(history.canRedo, false);
      const a = stroke();
      const b: Operation = { kind: 'rectangle', mode: 'add', x: 1, y: 1, width: 5, height: 5 };
      history.push(a);
      history.push(b);
      assert.equal(history.undo(), b);
      assert.equal(history.canRedo, true);
      assert.deepEqual(history.replay(), [a]);
      assert.equal(history.redo(), b);
      assert.deepEqual(history.replay(), [a, b]);
      history.undo();
      history.push({ kind: 'invert' });
      assert.equal(history.canRedo, false, 'a new operation clears redo');
      assert.equal(history.redo(), undefined);
      assert.deepEqual(
        history.replay().map((o) => o.kind),
        ['stroke', 'invert'],
      );
      history.undo();
      history.undo();
      assert.equal(history.undo(), undefined, 'nothing left to undo');
      assert.equal(history.canUndo, false);
    });

    it('replay starts after the last clear; undoing the clear brings the painting back', () => {
      const { MaskHistory } = load();
      const history = new MaskHistory(10, 10);
      const first = stroke();
      history.push(first);
      history.push({ kind: 'clear' });
      assert.deepEqual(history.replay(), []);
      const after = stroke('subtract');
      history.push(after);
      assert.deepEqual(history.replay(), [after]);
      assert.equal(history.operations.length, 3, 'all operations are kept for undo');
      history.undo();
      history.undo();
      assert.deepEqual(history.replay(), [first]);
    });

    it('knows empty, full and some: invert of empty is full, clear is empty, erasing nothing stays empty', () => {
      const { MaskHistory } = load();
      const history = new MaskHistory(10, 10);
      assert.equal(history.isEmpty, true);
      history.push(stroke('subtract'));
      assert.equal(history.coverage, 'empty', 'the eraser on nothing leaves nothing');
      history.push({ kind: 'invert' });
      assert.equal(history.coverage, 'full');
      assert.equal(history.isEmpty, false, 'after invert the mask is not empty');
      history.push(stroke());
      assert.equal(history.coverage, 'full', 'painting on full stays full');
      history.push({ kind: 'invert' });
      assert.equal(history.coverage, 'empty');
      history.push(stroke());
      assert.equal(history.coverage, 'some');
      history.push({ kind: 'invert' });
      assert.equal(history.coverage, 'some');
      history.push({ kind: 'clear' });
      assert.equal(history.isEmpty, true);
      history.undo();
      assert.equal(history.coverage, 'some', 'undoing the clear brings the region back');
    });

    it('a shape from two corners in any order is clipped to the image, and nothing when it has no area inside', () => {
      const { shapeFromCorners } = load();
      assert.deepEqual(shapeFromCorners('rectangle', 'add', { x: 80, y: 40 }, { x: 20, y: 10 }, 100, 50), {
        kind: 'rectangle',
        mode: 'add',
        x: 20,
        y: 10,
        width: 60,
        height: 30,
      });
      assert.deepEqual(shapeFromCorners('rectangle', 'subtract', { x: -10, y: -10 }, { x: 150, y: 70 }, 100, 50), {
        kind: 'rectangle',
        mode: 'subtract',
        x: 0,
        y: 0,
        width: 100,
        height: 50,
      });
      assert.equal(shapeFromCorners('rectangle', 'add', { x: 10, y: 10 }, { x: 10, y: 40 }, 100, 50), undefined, 'no width');
      assert.equal(shapeFromCorners('rectangle', 'add', { x: 120, y: 10 }, { x: 140, y: 40 }, 100, 50), undefined, 'outside');
      // An ellipse keeps its own box: clipping it would draw a smaller ellipse.
      assert.deepEqual(shapeFromCorners('ellipse', 'add', { x: -10, y: 0 }, { x: 30, y: 20 }, 100, 50), {
        kind: 'ellipse',
        mode: 'add',
        x: -10,
        y: 0,
        width: 40,
        height: 20,
      });
    });

    it('brush sizes follow the image, and [ and ] step within the range', () => {
      const { brushSizes, stepBrushSize } = load();
      assert.deepEqual(brushSizes(2048, 1536), { min: 1, max: 512, initial: 77 });
      assert.deepEqual(brushSizes(32, 32), { min: 1, max: 16, initial: 4 });
      const range = { min: 1, max: 100 };
      assert.equal(stepBrushSize(40, 1, range), 50);
      assert.equal(stepBrushSize(40, -1, range), 32);
      assert.equal(stepBrushSize(2, 1, range), 3, 'at least one pixel');
      assert.equal(stepBrushSize(2, -1, range), 1);
      assert.equal(stepBrushSize(1, -1, range), 1);
      assert.equal(stepBrushSize(95, 1, range), 100);
    });
  });

  describe('zoom', () => {
    it('fit shows the whole image, within the zoom range', () => {
      const { fitScale, ZOOM_MIN, ZOOM_MAX } = load();
      assert.equal(fitScale(2000, 1000, 1000, 800), 0.5);
      assert.equal(fitScale(1000, 2000, 1000, 800), 0.4);
      assert.equal(fitScale(10, 10, 1000, 800), ZOOM_MAX, 'a tiny image is not blown up past the largest step');
      assert.equal(fitScale(100_000, 100_000, 100, 100), ZOOM_MIN);
      assert.equal(fitScale(100, 100, 0, 0), 1, 'a view not laid out yet');
    });

    it('steps in and out from any scale, 25 % to 800 %, and below the steps by halves', () => {
      const { zoomIn, zoomOut, zoomPercent, ZOOM_STEPS } = load();
      assert.equal(ZOOM_STEPS[0], 0.25);
      assert.equal(ZOOM_STEPS[ZOOM_STEPS.length - 1], 8);
      assert.equal(zoomIn(1), 1.5);
      assert.equal(zoomIn(0.4), 0.5, 'from a fit between steps to the next step');
      assert.equal(zoomIn(0.1), 0.25);
      assert.equal(zoomIn(8), 8);
      assert.equal(zoomOut(1), 0.67);
      assert.equal(zoomOut(0.4), 0.33);
      assert.equal(zoomOut(0.25), 0.125);
      assert.equal(zoomOut(0.03), 0.02);
      assert.equal(zoomPercent(0.666), 67);
    });

    it('maps the screen to image pixels and back, clamped to the image', () => {
      const { screenToImage, imageToScreen } = load();
      const drawn = { left: 100, top: 50, width: 500, height: 250 }; // a 2000×1000 image at 25 %
      assert.deepEqual(screenToImage({ x: 350, y: 175 }, drawn, 2000, 1000), { x: 1000, y: 500 });
      assert.deepEqual(screenToImage({ x: 0, y: 1000 }, drawn, 2000, 1000), { x: 0, y: 1000 });
      assert.deepEqual(imageToScreen({ x: 1000, y: 500 }, drawn, 2000, 1000), { x: 350, y: 175 });
    });

    it('keeps the point under the anchor when zooming', () => {
      const { scrollForZoom } = load();
      // The view's centre (200, 150) over content point (300, 250) at scale 1: at scale 2 it is at (600, 500).
      assert.deepEqual(scrollForZoom({ x: 100, y: 100 }, { x: 200, y: 150 }, 1, 2), { x: 400, y: 350 });
      assert.deepEqual(scrollForZoom({ x: 0, y: 0 }, { x: 200, y: 150 }, 2, 1), { x: 0, y: 0 }, 'never a negative scroll');
    });
  });

  describe('the keyboard rectangle', () => {
    const image = { width: 2000, height: 1000 };
    const press = (state: KeyboardState, key: string, mode: 'add' | 'subtract' = 'add', shiftKey = false) =>
      load().keyboardRectangleKey(state, { key, shiftKey }, image, mode, t);

    it('arrows move the cursor by 1 % (10 % with Shift), clamped, and say where it is', () => {
      const { KEYBOARD_START } = load();
      let step = press(KEYBOARD_START, 'ArrowLeft', 'add', true);
      assert.equal(step.handled, true);
      assert.equal(step.sentence, 'Cursor at 40 %, 50 %');
      step = press(step.state, 'ArrowUp', 'add', true);
      step = press(step.state, 'ArrowUp', 'add', true);
      step = press(step.state, 'ArrowDown');
      assert.equal(step.sentence, 'Cursor at 40 %, 31 %');
      for (let i = 0; i < 12; i++) step = press(step.state, 'ArrowRight', 'add', true);
      assert.deepEqual(step.state.cursor, { x: 100, y: 31 });
      assert.equal(KEYBOARD_START.cursor.x, 50, 'the start state is not changed');
    });

    it('Enter starts a rectangle, the arrows move its other corner, Enter adds it in image pixels', () => {
      let step = press({ cursor: { x: 10, y: 20 } }, 'Enter');
      assert.equal(step.sentence, 'Rectangle started at 10 %, 20 %. Move its other corner with the arrows; Enter adds it, Escape cancels.');
      assert.deepEqual(step.state.anchor, { x: 10, y: 20 });
      step = press(step.state, 'ArrowRight', 'add', true);
      step = press(step.state, 'ArrowRight', 'add', true);
      step = press(step.state, 'ArrowRight', 'add', true);
      step = press(step.state, 'ArrowDown', 'add', true);
      step = press(step.state, 'ArrowDown');
      assert.equal(step.sentence, 'Rectangle 10 % to 40 % wide, 20 % to 31 % high');
      step = press(step.state, ' ');
      assert.equal(step.sentence, 'Rectangle added');
      assert.deepEqual(step.operation, { kind: 'rectangle', mode: 'add', x: 200, y: 200, width: 600, height: 110 });
      assert.equal(step.state.anchor, undefined);
      assert.deepEqual(step.state.cursor, { x: 40, y: 31 }, 'the cursor stays at the last corner');
    });

    it('a corner moved up and left of the start gives the same rectangle; with the eraser it subtracts', () => {
      let step = press({ cursor: { x: 50, y: 50 } }, ' ', 'subtract');
      step = press(step.state, 'ArrowLeft', 'subtract', true);
      step = press(step.state, 'ArrowUp', 'subtract', true);
      assert.equal(step.sentence, 'Rectangle 40 % to 50 % wide, 40 % to 50 % high');
      step = press(step.state, 'Enter', 'subtract');
      assert.equal(step.sentence, 'Rectangle subtracted');
      assert.deepEqual(step.operation, { kind: 'rectangle', mode: 'subtract', x: 800, y: 400, width: 200, height: 100 });
    });

    it("Escape cancels a rectangle; without one it is not the rectangle's (the editor may close)", () => {
      let step = press({ cursor: { x: 30, y: 30 } }, 'Enter');
      step = press(step.state, 'ArrowRight');
      step = press(step.state, 'Escape');
      assert.equal(step.handled, true);
      assert.equal(step.sentence, 'Rectangle cancelled');
      assert.equal(step.operation, undefined);
      assert.equal(step.state.anchor, undefined);
      const idle = press(step.state, 'Escape');
      assert.equal(idle.handled, false);
      assert.equal(press(step.state, 'b').handled, false, 'other keys go on to the shortcuts');
    });

    it('the sentences checked here are the English texts the host sends (strings.ts)', () => {
      const source = readFileSync(path.join(__dirname, '..', '..', '..', 'src', 'studio', 'model', 'strings.ts'), 'utf8');
      for (const [key, text] of Object.entries(ENGLISH)) assert.ok(source.includes(`${key}: vscode.l10n.t('${text}')`), `${key} in strings.ts`);
    });

    it('a rectangle with no width stays open and says why', () => {
      let step = press({ cursor: { x: 30, y: 30 } }, 'Enter');
      step = press(step.state, 'ArrowDown', 'add', true);
      step = press(step.state, 'Enter');
      assert.equal(step.operation, undefined);
      assert.equal(step.sentence, 'The rectangle has no width or height yet: move its other corner with the arrows.');
      assert.deepEqual(step.state.anchor, { x: 30, y: 30 });
    });
  });

  it("base64 of a large mask in chunks equals Node's, without overflowing the stack", () => {
    const { bytesToBase64 } = load();
    const bytes = new Uint8Array(1_000_003);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
    assert.equal(bytesToBase64(bytes), Buffer.from(bytes).toString('base64'));
    assert.equal(bytesToBase64(new Uint8Array(0)), '');
  });
});
