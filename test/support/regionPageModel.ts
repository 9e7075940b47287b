// The region editor's pure model (media/studio/region/) bundled by esbuild for the browser and
// loaded in this realm, as the page runs it: shared by the unit tests of the model and of its saved state.
import * as path from 'node:path';
import * as vm from 'node:vm';
import { buildSync } from 'esbuild';

export interface Point {
  x: number;
  y: number;
}
export type Operation =
  | { kind: 'stroke'; mode: 'add' | 'subtract'; size: number; points: Point[] }
  | { kind: 'rectangle' | 'ellipse'; mode: 'add' | 'subtract'; x: number; y: number; width: number; height: number }
  | { kind: 'invert' }
  | { kind: 'clear' };
export interface History {
  width: number;
  height: number;
  push(operation: Operation): void;
  undo(): Operation | undefined;
  redo(): Operation | undefined;
  canUndo: boolean;
  canRedo: boolean;
  replay(): Operation[];
  coverage: 'empty' | 'full' | 'some';
  isEmpty: boolean;
  operations: Operation[];
}
export interface KeyboardState {
  cursor: Point;
  anchor?: Point;
}
export interface KeyStep {
  state: KeyboardState;
  handled: boolean;
  sentence?: string;
  operation?: Operation;
}
export type Translate = (key: string, ...args: (string | number)[]) => string;
export interface Model {
  MaskHistory: new (width: number, height: number) => History;
  shapeFromCorners: (kind: 'rectangle' | 'ellipse', mode: 'add' | 'subtract', a: Point, b: Point, width: number, height: number) => Operation | undefined;
  brushSizes: (width: number, height: number) => { min: number; max: number; initial: number };
  stepBrushSize: (size: number, direction: -1 | 1, range: { min: number; max: number }) => number;
  ZOOM_STEPS: number[];
  ZOOM_MIN: number;
  ZOOM_MAX: number;
  fitScale: (iw: number, ih: number, vw: number, vh: number) => number;
  zoomIn: (scale: number) => number;
  zoomOut: (scale: number) => number;
  zoomPercent: (scale: number) => number;
  screenToImage: (client: Point, drawn: { left: number; top: number; width: number; height: number }, w: number, h: number) => Point;
  imageToScreen: (point: Point, drawn: { left: number; top: number; width: number; height: number }, w: number, h: number) => Point;
  scrollForZoom: (scroll: Point, anchor: Point, before: number, after: number) => Point;
  KEYBOARD_START: KeyboardState;
  keyboardRectangleKey(
    state: KeyboardState,
    key: { key: string; shiftKey: boolean },
    image: { width: number; height: number },
    mode: 'add' | 'subtract',
    t: Translate,
  ): KeyStep;
  bytesToBase64: (bytes: Uint8Array) => string;
  parseSavedRegion: (value: unknown, limits: { path: number; prompt: number; id: number }) => SavedRegion | undefined;
  keepable: (operations: Operation[]) => boolean;
  SAVED_OPERATIONS_MAX: number;
  SAVED_POINTS_MAX: number;
}
export interface SavedRegion {
  path: string;
  width: number;
  height: number;
  operations: Operation[];
  model: string;
  prompt: string;
  feather: number;
  format?: 'png' | 'jpeg';
  wholeImage: boolean;
}

const REGION = path.join(__dirname, '..', '..', '..', 'media', 'studio', 'region');
let model: Model | undefined;

export function load(): Model {
  if (model) return model;
  const contents = ['maskOperations', 'stageZoom', 'keyboardRectangle', 'base64', 'savedRegion'].map((file) => `export * from './${file}';`).join('\n');
  const bundle = buildSync({
    stdin: { contents, resolveDir: REGION, loader: 'ts' },
    bundle: true,
    format: 'cjs',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  }).outputFiles[0]?.text;
  if (!bundle) throw new Error(`esbuild wrote no bundle of ${REGION}`);
  const module = { exports: {} as Model };
  // In this realm (deepEqual compares prototypes), where there is no acquireVsCodeApi and no
  // document: the model must not need the page.
  (vm.runInThisContext(`(function (module, exports) {${bundle}\n})`) as (m: typeof module, e: Model) => void)(module, module.exports);
  model = module.exports;
  return model;
}
