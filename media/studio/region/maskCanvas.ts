// The mask's canvas: operations drawn in one opaque theme colour (the canvas is shown at half
// opacity over the image), replayed from the history after undo, and exported as the PNG the host
// expects: the image's size, the region opaque white, the rest transparent.
import { bytesToBase64 } from './base64';
import type { MaskMode, MaskOperation, Point } from './maskOperations';

/** The tint of the region: the theme's purple (visible on dark and light), or a purple of our own. */
export function maskColour(): string {
  const style = getComputedStyle(document.body);
  return style.getPropertyValue('--vscode-charts-purple').trim() || '#b180d7';
}

function context(canvas: HTMLCanvasElement): CanvasRenderingContext2D {
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2d canvas');
  return ctx;
}

function composite(ctx: CanvasRenderingContext2D, mode: MaskMode): void {
  ctx.globalCompositeOperation = mode === 'add' ? 'source-over' : 'destination-out';
}

/** A piece of a stroke: from `from` (or a dot at `to` when there is none) to `to`. */
export function drawSegment(canvas: HTMLCanvasElement, mode: MaskMode, size: number, from: Point | undefined, to: Point, colour: string): void {
  const ctx = context(canvas);
  composite(ctx, mode);
  ctx.fillStyle = colour;
  ctx.strokeStyle = colour;
  ctx.lineWidth = size;
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.beginPath();
  if (!from) {
    ctx.arc(to.x, to.y, size / 2, 0, Math.PI * 2);
    ctx.fill();
  } else {
    ctx.moveTo(from.x, from.y);
    ctx.lineTo(to.x, to.y);
    ctx.stroke();
  }
  ctx.globalCompositeOperation = 'source-over';
}

export function drawOperation(canvas: HTMLCanvasElement, operation: MaskOperation, colour: string): void {
  const ctx = context(canvas);
  switch (operation.kind) {
    case 'clear':
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      return;
    case 'invert':
      // XOR with an opaque fill turns each pixel's alpha a into 1 − a: painted goes, unpainted comes.
      ctx.globalCompositeOperation = 'xor';
      ctx.fillStyle = colour;
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.globalCompositeOperation = 'source-over';
      return;
    case 'stroke': {
      const [first, ...rest] = operation.points;
      if (!first) return;
      drawSegment(canvas, operation.mode, operation.size, undefined, first, colour);
      ctx.beginPath();
      composite(ctx, operation.mode);
      ctx.strokeStyle = colour;
      ctx.lineWidth = operation.size;
      ctx.lineCap = 'round';
      ctx.lineJoin = 'round';
      ctx.moveTo(first.x, first.y);
      for (const point of rest) ctx.lineTo(point.x, point.y);
      if (rest.length) ctx.stroke();
      ctx.globalCompositeOperation = 'source-over';
      return;
    }
    case 'rectangle':
    case 'ellipse':
      composite(ctx, operation.mode);
      ctx.fillStyle = colour;
      ctx.beginPath();
      if (operation.kind === 'rectangle') ctx.rect(operation.x, operation.y, operation.width, operation.height);
      else ctx.ellipse(operation.x + operation.width / 2, operation.y + operation.height / 2, operation.width / 2, operation.height / 2, 0, 0, Math.PI * 2);
      ctx.fill();
      ctx.globalCompositeOperation = 'source-over';
      return;
  }
}

/** Draws the mask anew: cleared, then the operations since the last clear. */
export function replay(canvas: HTMLCanvasElement, operations: readonly MaskOperation[], colour: string): void {
  context(canvas).clearRect(0, 0, canvas.width, canvas.height);
  for (const operation of operations) drawOperation(canvas, operation, colour);
}

/** Whether any pixel of the mask is painted, read in bands (a 4096×4096 read at once is 64 MB). */
export function maskHasPixels(canvas: HTMLCanvasElement): boolean {
  const ctx = context(canvas);
  const band = Math.max(1, Math.floor((1 << 20) / Math.max(1, canvas.width)));
  for (let top = 0; top < canvas.height; top += band) {
    const { data } = ctx.getImageData(0, top, canvas.width, Math.min(band, canvas.height - top));
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) return true;
  }
  return false;
}

/** The mask as a base64 PNG of the canvas's size: the region opaque white, the rest transparent. */
export async function exportMask(canvas: HTMLCanvasElement): Promise<string> {
  const out = document.createElement('canvas');
  out.width = canvas.width;
  out.height = canvas.height;
  const ctx = context(out);
  ctx.drawImage(canvas, 0, 0);
  // Keep where the mask is, in white: the tint and the half opacity are only how it is shown.
  ctx.globalCompositeOperation = 'source-in';
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, out.width, out.height);
  const blob = await new Promise<Blob | null>((resolve) => out.toBlob(resolve, 'image/png'));
  // Let the copy go at once (a canvas holds its pixels until it is collected).
  out.width = 0;
  out.height = 0;
  if (!blob) throw new Error('the mask could not be encoded');
  return bytesToBase64(new Uint8Array(await blob.arrayBuffer()));
}
