// The region's mask as a list of operations in the image's pixel coordinates, with undo and redo.
// Pure (no DOM): the canvas is drawn by replaying the list (maskCanvas.ts), so undo keeps no
// snapshots of a canvas that may be 4096×4096 (64 MB each).

export interface Point {
  x: number;
  y: number;
}

/** Paint adds to the region; the eraser (or a shape drawn with Alt, or the eraser chosen) subtracts. */
export type MaskMode = 'add' | 'subtract';

export type MaskOperation =
  | { kind: 'stroke'; mode: MaskMode; size: number; points: Point[] }
  | { kind: 'rectangle' | 'ellipse'; mode: MaskMode; x: number; y: number; width: number; height: number }
  | { kind: 'invert' }
  | { kind: 'clear' };

export type ShapeOperation = Extract<MaskOperation, { kind: 'rectangle' | 'ellipse' }>;

/**
 * What is known of the mask without reading its pixels: empty (nothing painted since the last
 * clear, or only erased), full (inverted from empty), or some region. An eraser stroke over the
 * whole of a painted region still counts as some: the page then reads the pixels (maskCanvas.ts).
 */
export type MaskCoverage = 'empty' | 'full' | 'some';

export function coverageAfter(coverage: MaskCoverage, operation: MaskOperation): MaskCoverage {
  switch (operation.kind) {
    case 'clear':
      return 'empty';
    case 'invert':
      return coverage === 'empty' ? 'full' : coverage === 'full' ? 'empty' : 'some';
    default:
      if (operation.mode === 'add') return coverage === 'full' ? 'full' : 'some';
      return coverage === 'empty' ? 'empty' : 'some';
  }
}

/** A shape from two corners (in any order), clipped to the image; undefined when nothing of it is inside. */
export function shapeFromCorners(kind: ShapeOperation['kind'], mode: MaskMode, a: Point, b: Point, width: number, height: number): ShapeOperation | undefined {
  const left = Math.max(0, Math.min(a.x, b.x));
  const top = Math.max(0, Math.min(a.y, b.y));
  const right = Math.min(width, Math.max(a.x, b.x));
  const bottom = Math.min(height, Math.max(a.y, b.y));
  // An ellipse keeps its own box (its clipped part is drawn by the canvas); a rectangle is clipped.
  if (kind === 'ellipse') {
    const box = { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y) };
    if (box.width < 1 || box.height < 1 || right <= left || bottom <= top) return undefined;
    return { kind, mode, ...box };
  }
  if (right - left < 1 || bottom - top < 1) return undefined;
  return { kind, mode, x: left, y: top, width: right - left, height: bottom - top };
}

/** The undo history of one mask: a new operation drops what was undone. */
export class MaskHistory {
  private readonly done: MaskOperation[] = [];
  private readonly undone: MaskOperation[] = [];

  constructor(
    readonly width: number,
    readonly height: number,
  ) {}

  push(operation: MaskOperation): void {
    this.done.push(operation);
    this.undone.length = 0;
  }

  /** The operation undone, if any (the canvas is then drawn again from replay()). */
  undo(): MaskOperation | undefined {
    const operation = this.done.pop();
    if (operation) this.undone.push(operation);
    return operation;
  }

  redo(): MaskOperation | undefined {
    const operation = this.undone.pop();
    if (operation) this.done.push(operation);
    return operation;
  }

  get canUndo(): boolean {
    return this.done.length > 0;
  }

  get canRedo(): boolean {
    return this.undone.length > 0;
  }

  /** What draws the mask as it is now on a cleared canvas: the operations after the last clear. */
  replay(): readonly MaskOperation[] {
    let start = 0;
    for (let i = this.done.length - 1; i >= 0; i--) {
      if (this.done[i]!.kind === 'clear') {
        start = i + 1;
        break;
      }
    }
    return this.done.slice(start);
  }

  get coverage(): MaskCoverage {
    return this.replay().reduce<MaskCoverage>(coverageAfter, 'empty');
  }

  /** Nothing is painted: Edit Region needs a region (unless the whole image is sent). */
  get isEmpty(): boolean {
    return this.coverage === 'empty';
  }

  /** All operations, oldest first (kept when an image of the same size becomes the next original). */
  get operations(): readonly MaskOperation[] {
    return this.done;
  }
}

/** The brush's size in image pixels: about a twentieth of the shorter side, and its slider's range. */
export function brushSizes(width: number, height: number): { min: number; max: number; initial: number } {
  const shorter = Math.max(1, Math.min(width, height));
  const max = Math.max(16, Math.round(Math.max(width, height) / 4));
  return { min: 1, max, initial: Math.min(max, Math.max(4, Math.round(shorter / 20))) };
}

/** `[` and `]`: a fifth smaller or a quarter larger, at least one pixel, within the range. */
export function stepBrushSize(size: number, direction: -1 | 1, range: { min: number; max: number }): number {
  const next = direction > 0 ? Math.max(size + 1, Math.round(size * 1.25)) : Math.min(size - 1, Math.round(size * 0.8));
  return Math.min(range.max, Math.max(range.min, next));
}
