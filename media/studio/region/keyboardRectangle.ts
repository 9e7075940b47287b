// A rectangle drawn with the keyboard alone, on the focused canvas: the arrows move a cursor (1 %
// of the image's side, 10 % with Shift), Enter or Space starts a rectangle there, the arrows then
// move its other corner, Enter or Space adds it (subtracts it with the eraser), Escape cancels.
// Each step says what happened in a sentence for the live region. Pure (no DOM): the translation
// function is passed in.
import type { MaskMode, ShapeOperation } from './maskOperations';
import { shapeFromCorners } from './maskOperations';

/** A position in whole percent of the image's width and height (0–100). */
export interface PercentPoint {
  x: number;
  y: number;
}

export interface KeyboardRectangleState {
  cursor: PercentPoint;
  /** The corner where the rectangle started, while one is being drawn. */
  anchor?: PercentPoint;
}

export type Translate = (key: string, ...args: (string | number)[]) => string;

export interface KeyStep {
  state: KeyboardRectangleState;
  /** The key was the rectangle's: the page prevents its default and stops it there. */
  handled: boolean;
  /** What to say in the live region. */
  sentence?: string;
  /** The rectangle to add or subtract, once finished. */
  operation?: ShapeOperation;
}

export const KEYBOARD_START: KeyboardRectangleState = { cursor: { x: 50, y: 50 } };

const MOVES: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

const clampPercent = (value: number) => Math.min(100, Math.max(0, value));

/** A percent point in image pixels. */
export function percentToPixels(point: PercentPoint, width: number, height: number): { x: number; y: number } {
  return { x: Math.round((point.x / 100) * width), y: Math.round((point.y / 100) * height) };
}

/** One key on the focused canvas. `mode` is subtract while the eraser is the tool. */
export function keyboardRectangleKey(
  state: KeyboardRectangleState,
  key: { key: string; shiftKey: boolean },
  image: { width: number; height: number },
  mode: MaskMode,
  t: Translate,
): KeyStep {
  const move = MOVES[key.key];
  if (move) {
    const step = key.shiftKey ? 10 : 1;
    const cursor = { x: clampPercent(state.cursor.x + move[0] * step), y: clampPercent(state.cursor.y + move[1] * step) };
    const next = { ...state, cursor };
    return { state: next, handled: true, sentence: state.anchor ? rectangleSentence(state.anchor, cursor, t) : t('regionCursorAt', cursor.x, cursor.y) };
  }
  if (key.key === 'Enter' || key.key === ' ') {
    if (!state.anchor) {
      return { state: { ...state, anchor: { ...state.cursor } }, handled: true, sentence: t('regionRectangleStarted', state.cursor.x, state.cursor.y) };
    }
    const operation = shapeFromCorners(
      'rectangle',
      mode,
      percentToPixels(state.anchor, image.width, image.height),
      percentToPixels(state.cursor, image.width, image.height),
      image.width,
      image.height,
    );
    // A rectangle without width or height: it stays open, and says why.
    if (!operation) return { state, handled: true, sentence: t('regionRectangleEmpty') };
    return {
      state: { cursor: state.cursor },
      handled: true,
      operation,
      sentence: mode === 'add' ? t('regionRectangleAdded') : t('regionRectangleSubtracted'),
    };
  }
  if (key.key === 'Escape' && state.anchor) {
    return { state: { cursor: state.cursor }, handled: true, sentence: t('regionRectangleCancelled') };
  }
  return { state, handled: false };
}

/** "Rectangle 10 % to 40 % wide, 20 % to 35 % high". */
export function rectangleSentence(anchor: PercentPoint, cursor: PercentPoint, t: Translate): string {
  return t('regionRectangleSpan', Math.min(anchor.x, cursor.x), Math.max(anchor.x, cursor.x), Math.min(anchor.y, cursor.y), Math.max(anchor.y, cursor.y));
}
