// The aspect ratio that keeps an edit's shape: the model's supported ratio nearest to the source
// image's pixel ratio. Pure: no vscode import.

/** `16:9` → 16/9; undefined for anything that is not two positive numbers. */
export function parseAspectRatio(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!match) return undefined;
  const [w, h] = [Number(match[1]), Number(match[2])];
  return w > 0 && h > 0 ? w / h : undefined;
}

/**
 * The supported ratio nearest to width/height, compared on a log scale so that 2:1 and 1:2 are
 * equally far from 1:1. Ties go to the earlier entry of the list. Undefined when the model lists none.
 */
export function nearestAspectRatio(width: number, height: number, supported: readonly string[]): string | undefined {
  if (!(width > 0 && height > 0)) return undefined;
  const target = Math.log(width / height);
  let best: { ratio: string; distance: number } | undefined;
  for (const ratio of supported) {
    const value = parseAspectRatio(ratio);
    if (value === undefined) continue;
    const distance = Math.abs(Math.log(value) - target);
    if (!best || distance < best.distance - 1e-9) best = { ratio, distance };
  }
  return best?.ratio;
}

/** Whether a `size` value fixes the pixels (then `aspect_ratio` must not be sent with it). */
export function isPixelSize(size: string | undefined): boolean {
  return typeof size === 'string' && /^\d+x\d+$/.test(size);
}
