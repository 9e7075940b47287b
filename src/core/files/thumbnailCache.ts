// Small previews of the gallery's images, made once and kept in a folder of the workspace storage:
// the studio never shows (and the webview never decodes) a full image. A PNG gets a PNG thumbnail
// (pngThumbnail.ts); JPEG, WebP, GIF and PNGs it cannot decode get a text stand-in naming the
// format and pixel size. Made one at a time, so scrolling through thousands costs one decode at
// a time. The folder is bounded (lru-cache, by bytes): beyond it the thumbnails shown longest ago
// are removed, and one of them is made again when it is shown again. No vscode import.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LRUCache } from 'lru-cache';
import { readImageHeaderFile } from '../images/imageHeader';
import { replaceFileWith } from './replaceFile';
import { ThumbnailWorker } from './thumbnailWorker';

/** Makes a PNG thumbnail of at most `side` pixels (pngThumbnail, in a worker in the extension); undefined when it cannot. */
export type ThumbnailDecoder = (png: Buffer, side: number) => Promise<Buffer | undefined>;

/** A thumbnail file, or what to show instead (the format and size), or nothing (the image is gone). */
export type Thumbnail = { file: string } | { format: string; width?: number; height?: number } | { missing: true };

/** Twice the card's CSS size, for high-density screens. */
export const THUMBNAIL_SIDE = 256;
/** PNGs larger than this are not decoded for a thumbnail (a stand-in is shown). */
const MAX_PNG_BYTES = 64 * 1024 * 1024;
/**
 * What the folder keeps: about 1,000 to 4,000 thumbnails (16 to 60 KB each for the pictures seen
 * here, 260 KB at most for a 256-pixel PNG), many screens of the gallery.
 */
export const THUMBNAIL_FOLDER_BYTES = 64 * 1024 * 1024;
/** A temporary file older than this was left by a process that died while writing it. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

export interface ThumbnailCacheOptions {
  /** The longest side of a thumbnail, in pixels. */
  side?: number;
  /** Bytes of thumbnails the folder keeps (more than one thumbnail's); beyond it, those shown longest ago go. */
  maxBytes?: number;
  /** Stops the decoder (the worker thread) on dispose. */
  stopDecoder?: () => void;
}

export class ThumbnailCache {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pending = new Map<string, Promise<Thumbnail>>();
  private readonly side: number;
  /** The folder's thumbnails by name and size, shown longest ago first; read from the folder on first use. */
  private readonly kept: LRUCache<string, number>;
  /** Names pushed out of `kept`, whose files are still to be removed. */
  private readonly evicted: string[] = [];
  private listed?: Promise<void>;

  constructor(
    readonly dir: string,
    private readonly decode: ThumbnailDecoder,
    private readonly options: ThumbnailCacheOptions = {},
  ) {
    this.side = options.side ?? THUMBNAIL_SIDE;
    this.kept = new LRUCache<string, number>({
      maxSize: options.maxBytes ?? THUMBNAIL_FOLDER_BYTES,
      sizeCalculation: (bytes) => Math.max(1, bytes),
      dispose: (_bytes, name, reason) => void (reason === 'evict' && this.evicted.push(name)),
    });
  }

  /** The extension's cache: PNGs are decoded by a worker thread running `script` (dist/thumbnails.js). */
  static withWorker(dir: string, script: string): ThumbnailCache {
    const worker = new ThumbnailWorker(script);
    return new ThumbnailCache(dir, worker.decode, { stopDecoder: () => worker.dispose() });
  }

  dispose(): void {
    this.options.stopDecoder?.();
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
    const names = (await fs.readdir(this.dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
    for (const name of names) this.kept.delete(name);
    await Promise.all(names.map((n) => fs.rm(path.join(this.dir, n), { force: true })));
  }

  private async make(image: string): Promise<Thumbnail> {
    let stat;
    try {
      stat = await fs.stat(image);
    } catch {
      return { missing: true };
    }
    await (this.listed ??= this.list());
    // A changed image (same path, another size or time) gets a new thumbnail.
    const name = `${keyOf(image)}-${stat.size}-${Math.trunc(stat.mtimeMs)}.png`;
    const file = path.join(this.dir, name);
    // The folder is the truth: another window of the workspace may have made or removed it.
    const made = await fs.stat(file).catch(() => undefined);
    if (made) {
      await this.keep(name, made.size);
      // Touched, so that the order survives a restart (the folder is read by time).
      const now = new Date();
      await fs.utimes(file, now, now).catch(() => undefined);
      return { file };
    }
    // One decode at a time: bounded memory and CPU however fast the page asks.
    const making = this.queue.then(() => this.write(image, file, stat.size));
    this.queue = making.catch(() => undefined);
    return making;
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
    await replaceFileWith(file, thumbnail, { durable: false });
    await this.keep(path.basename(file), thumbnail.length);
    return { file };
  }

  /** Notes a thumbnail as the one shown last, and removes the files that this pushes out of the folder's bound. */
  private async keep(name: string, bytes: number): Promise<void> {
    this.kept.set(name, bytes);
    await this.removeEvicted();
  }

  private async removeEvicted(): Promise<void> {
    const names = this.evicted.splice(0);
    await Promise.all(names.map((n) => fs.rm(path.join(this.dir, n), { force: true }).catch(() => undefined)));
  }

  /** What an earlier session left in the folder, oldest first (a folder made before the bound is cut down to it here). */
  private async list(): Promise<void> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const found = await Promise.all(
      names.map(async (name) => {
        const stat = await fs.stat(path.join(this.dir, name)).catch(() => undefined);
        return stat?.isFile() ? { name, bytes: stat.size, at: stat.mtimeMs } : undefined;
      }),
    );
    const stale = found.filter((f) => f?.name.endsWith('.tmp') && Date.now() - f.at > STALE_TEMPORARY_MS);
    await Promise.all(stale.map((f) => fs.rm(path.join(this.dir, f!.name), { force: true }).catch(() => undefined)));
    const thumbnails = found.filter((f) => f?.name.endsWith('.png')).sort((a, b) => a!.at - b!.at);
    for (const thumbnail of thumbnails) this.kept.set(thumbnail!.name, thumbnail!.bytes);
    await this.removeEvicted();
  }
}

const keyOf = (image: string) => createHash('sha256').update(image).digest('hex').slice(0, 32);
