// The small preview a paid tool returns with its answer: at most 128 px, never the image itself.
import { promises as fs } from 'node:fs';
import { pngThumbnail } from '../../core/pngThumbnail';

export const PREVIEW_SIDE = 128;
/** Images above this are not read back for a preview. */
const MAX_PREVIEW_SOURCE_BYTES = 32 * 1024 * 1024;

/** A PNG thumbnail (base64) of the saved image, or undefined when it cannot be made. */
export async function previewOf(file: string): Promise<string | undefined> {
  try {
    const stat = await fs.stat(file);
    if (stat.size > MAX_PREVIEW_SOURCE_BYTES) return undefined;
    return pngThumbnail(await fs.readFile(file), PREVIEW_SIDE)?.toString('base64');
  } catch {
    return undefined;
  }
}
