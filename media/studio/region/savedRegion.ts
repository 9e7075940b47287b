// The region editor as the page keeps it across being hidden (VS Code discards a hidden webview) and
// window reloads: the image, the painting as its operations, and the form. Pure (no DOM): parsed
// defensively, as the saved state is read back from outside the page's own memory.
import { REGION_FEATHER_MAX, REGION_FORMATS, type RegionResultFormat } from '../../../src/studio/protocol/regionProtocol';
import type { MaskMode, MaskOperation, Point } from './maskOperations';

export interface SavedRegion {
  path: string;
  width: number;
  height: number;
  operations: MaskOperation[];
  model: string;
  prompt: string;
  feather: number;
  /** Absent in what a version before the choice kept: PNG. */
  format?: RegionResultFormat;
  wholeImage: boolean;
}

/** More than this is not kept (a long session of painting): the editor then opens unpainted. */
export const SAVED_OPERATIONS_MAX = 2_000;
export const SAVED_POINTS_MAX = 200_000;

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isSize = (value: unknown, max = 1 << 16): value is number => typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= max;
const isCoordinate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 1 << 17;
const isMode = (value: unknown): value is MaskMode => value === 'add' || value === 'subtract';
const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;

function parseOperation(value: unknown): MaskOperation | undefined {
  if (!isRecord(value)) return undefined;
  switch (value.kind) {
    case 'invert':
    case 'clear':
      return { kind: value.kind };
    case 'rectangle':
    case 'ellipse': {
      const { mode, x, y, width, height } = value;
      if (!isMode(mode) || !isCoordinate(x) || !isCoordinate(y) || !isCoordinate(width) || !isCoordinate(height)) return undefined;
      return { kind: value.kind, mode, x, y, width, height };
    }
    case 'stroke': {
      const { mode, size, points } = value;
      if (!isMode(mode) || !isSize(size, 4096) || !Array.isArray(points) || points.length === 0) return undefined;
      const parsed: Point[] = [];
      for (const point of points) {
        if (!isRecord(point) || !isCoordinate(point.x) || !isCoordinate(point.y)) return undefined;
        parsed.push({ x: point.x, y: point.y });
      }
      return { kind: 'stroke', mode, size, points: parsed };
    }
    default:
      return undefined;
  }
}

/** The saved editor, or undefined when there is none or it is malformed (the studio then opens as usual). */
export function parseSavedRegion(value: unknown, limits: { path: number; prompt: number; id: number }): SavedRegion | undefined {
  if (!isRecord(value)) return undefined;
  const { path, width, height, operations, model, prompt, feather, format, wholeImage } = value;
  if (!isText(path, limits.path) || !path || !isSize(width) || !isSize(height)) return undefined;
  if (!isText(model, limits.id) || !isText(prompt, limits.prompt) || typeof wholeImage !== 'boolean') return undefined;
  if (typeof feather !== 'number' || !Number.isInteger(feather) || feather < 0 || feather > REGION_FEATHER_MAX) return undefined;
  if (format !== undefined && !REGION_FORMATS.includes(format as RegionResultFormat)) return undefined;
  if (!Array.isArray(operations) || operations.length > SAVED_OPERATIONS_MAX) return undefined;
  const parsed: MaskOperation[] = [];
  for (const operation of operations) {
    const one = parseOperation(operation);
    if (!one) return undefined;
    parsed.push(one);
  }
  return { path, width, height, operations: parsed, model, prompt, feather, ...(format !== undefined && { format: format as RegionResultFormat }), wholeImage };
}

/** Whether the painting is small enough to keep (the page's state is written on every change). */
export function keepable(operations: readonly MaskOperation[]): boolean {
  if (operations.length > SAVED_OPERATIONS_MAX) return false;
  let points = 0;
  for (const operation of operations) if (operation.kind === 'stroke') points += operation.points.length;
  return points <= SAVED_POINTS_MAX;
}
