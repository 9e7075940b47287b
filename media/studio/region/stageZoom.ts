// The stage's zoom: fit-to-view, steps in and out, and screen to image coordinates. Pure (no DOM).
import type { Point } from './maskOperations';

/** Zoom steps (1 = one image pixel per CSS pixel). Fit may fall between two of them, or below. */
export const ZOOM_STEPS: readonly number[] = [0.25, 0.33, 0.5, 0.67, 1, 1.5, 2, 3, 4, 6, 8];
export const ZOOM_MIN = 0.02;
export const ZOOM_MAX = 8;

/** The scale that shows the whole image in a view of this size (never above ZOOM_MAX, never 0). */
export function fitScale(imageWidth: number, imageHeight: number, viewWidth: number, viewHeight: number): number {
  if (imageWidth <= 0 || imageHeight <= 0 || viewWidth <= 0 || viewHeight <= 0) return 1;
  const scale = Math.min(viewWidth / imageWidth, viewHeight / imageHeight);
  return Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, scale));
}

/** The next step above `scale` (a scale just under a step goes to it, not past it). */
export function zoomIn(scale: number): number {
  return ZOOM_STEPS.find((step) => step > scale * 1.001) ?? ZOOM_MAX;
}

/** The next step below `scale`; below the smallest step, half of it down to ZOOM_MIN. */
export function zoomOut(scale: number): number {
  const lower = [...ZOOM_STEPS].reverse().find((step) => step < scale / 1.001);
  return lower ?? Math.max(ZOOM_MIN, scale / 2);
}

/** "25", "150": the zoom as a whole percentage. */
export function zoomPercent(scale: number): number {
  return Math.round(scale * 100);
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A point on the screen (client coordinates) in image pixels, given where the image is drawn; clamped to the image. */
export function screenToImage(client: Point, drawn: Box, imageWidth: number, imageHeight: number): Point {
  const x = drawn.width > 0 ? ((client.x - drawn.left) / drawn.width) * imageWidth : 0;
  const y = drawn.height > 0 ? ((client.y - drawn.top) / drawn.height) * imageHeight : 0;
  return { x: Math.min(imageWidth, Math.max(0, x)), y: Math.min(imageHeight, Math.max(0, y)) };
}

/** An image point where it is drawn (client coordinates). */
export function imageToScreen(point: Point, drawn: Box, imageWidth: number, imageHeight: number): Point {
  return {
    x: drawn.left + (imageWidth > 0 ? (point.x / imageWidth) * drawn.width : 0),
    y: drawn.top + (imageHeight > 0 ? (point.y / imageHeight) * drawn.height : 0),
  };
}

/**
 * The scroll that keeps the image point under `anchor` (a point of the view, e.g. its centre) in
 * place when the scale changes from `before` to `after`.
 */
export function scrollForZoom(scroll: Point, anchor: Point, before: number, after: number): Point {
  const ratio = before > 0 ? after / before : 1;
  return { x: Math.max(0, (scroll.x + anchor.x) * ratio - anchor.x), y: Math.max(0, (scroll.y + anchor.y) * ratio - anchor.y) };
}
