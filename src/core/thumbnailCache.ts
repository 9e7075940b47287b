// Small previews of the gallery's images, made once and kept in a folder of the workspace storage:
// the studio never shows (and the webview never decodes) a full image. A PNG gets a PNG thumbnail
// (pngThumbnail.ts); JPEG, WebP, GIF and PNGs it cannot decode get a text stand-in naming the
// format and pixel size. Made one at a time, so scrolling through thousands costs one decode at
// a time. No vscode import.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readImageHeaderFile } from './imageHeader';
import { ThumbnailWorker } from './thumbnailWorker';

/** Makes a PNG thumbnail of at most `side` pixels (pngThumbnail, in a worker in the extension); undefined when it cannot. */
export type ThumbnailDecoder = (png: Buffer, side: number) => Promise<Buffer | undefined>;

/** A thumbnail file, or what to show instead (the format and size), or nothing (the image is gone). */
export type Thumbnail = { file: string } | { format: string; width?: number; height?: number } | { missing: true };

/** Twice the card's CSS size, for high-density screens. */
export const THUMBNAIL_SIDE = 256;
/** PNGs larger than this are not decoded for a thumbnail (a stand-in is shown). */
const MAX_PNG_BYTES = 64 * 1024 * 1024;

export class ThumbnailCache {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pending = new Map<string, Promise<Thumbnail>>();

  constructor(
    readonly dir: string,
    private readonly decode: ThumbnailDecoder,
    private readonly side = THUMBNAIL_SIDE,
    private readonly stopDecoder?: () => void,
  ) {}

  /** The extension's cache: PNGs are decoded by a worker thread running `script` (dist/thumbnails.js). */
  static withWorker(dir: string, script: string): ThumbnailCache {
    const worker = new ThumbnailWorker(script);
    return new ThumbnailCache(dir, worker.decode, THUMBNAIL_SIDE, () => worker.dispose());
  }

  dispose(): void {
    this.stopDecoder?.();
  }

  /** The thumbnail of `image`, made now when there is none for its current size and time. */
  get(image: string): Promise<Thumbnail> {
    const running = this.pending.get(image);
    if (running) return running;
    const next = this.make(image).finally(() => this.pending.delete(image));
    this.pending.set(image, next);
    return next;
  }

  /** Removes the thumbnails of an image (deleted from the gallery). */
  async forget(image: string): Promise<void> {
    const prefix = `${keyOf(image)}-`;
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => n.startsWith(prefix)).map((n) => fs.rm(path.join(this.dir, n), { force: true })));
  }

  private async make(image: string): Promise<Thumbnail> {
    let stat;
    try {
      stat = await fs.stat(image);
    } catch {
      return { missing: true };
    }
    // A changed image (same path, another size or time) gets a new thumbnail.
    const file = path.join(this.dir, `${keyOf(image)}-${stat.size}-${Math.trunc(stat.mtimeMs)}.png`);
    if (await exists(file)) return { file };
    // One decode at a time: bounded memory and CPU however fast the page asks.
    const made = this.queue.then(() => this.write(image, file, stat.size));
    this.queue = made.catch(() => undefined);
    return made;
  }

  private async write(image: string, file: string, size: number): Promise<Thumbnail> {
    const header = await readImageHeaderFile(image).catch(() => undefined);
    const standIn = {
      format: header ? header.mediaType.slice('image/'.length).toUpperCase() : path.extname(image).slice(1).toUpperCase(),
      width: header?.width,
      height: header?.height,
    };
    if (header?.mediaType !== 'image/png' || size > MAX_PNG_BYTES) return standIn;
    const thumbnail = await this.decode(await fs.readFile(image), this.side);
    if (!thumbnail) return standIn;
    await fs.mkdir(this.dir, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await fs.writeFile(temporary, thumbnail);
    await fs.rename(temporary, file);
    return { file };
  }
}

const keyOf = (image: string) => createHash('sha256').update(image).digest('hex').slice(0, 32);

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
