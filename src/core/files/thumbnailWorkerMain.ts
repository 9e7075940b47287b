// The thumbnail worker's code (dist/thumbnails.js): decodes a PNG and makes its thumbnail, off the
// extension host's thread (see thumbnailWorker.ts).
import { parentPort } from 'node:worker_threads';
import { pngThumbnail } from './pngThumbnail';

parentPort?.on('message', ({ id, png, side }: { id: number; png: Uint8Array; side: number }) => {
  try {
    parentPort!.postMessage({ id, thumbnail: pngThumbnail(Buffer.from(png.buffer, png.byteOffset, png.byteLength), side) ?? null });
  } catch (error) {
    parentPort!.postMessage({ id, thumbnail: null, error: String(error) });
  }
});
