// JPEG and WebP pixels from the WASM decoders of Squoosh (wasmDecode.ts). Small images are decoded
// in the calling thread; large ones in a worker thread of their own (imageDecodeWorkerMain.ts), ended
// right after: a WASM memory grows to hold the decode and never shrinks (~175 MB for a progressive
// 4096×4096 JPEG), and a worker's exit gives it back at once, where a dropped instance waits for V8's
// collector. Used by the agents' previews (files/imagePreview.ts) and the region edits (codecs.ts).
// No vscode import.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { imageHeaderOf } from './imageHeader';
import { decodeInThread, type WasmMediaType, type WasmPixels } from './wasmDecode';
export type { WasmMediaType, WasmPixels } from './wasmDecode';

/** Above this many pixels the decode runs in a worker. */
export const WORKER_PIXELS = 2048 * 2048;

/** The worker's script: dist/imageDecodeWorker.js next to the bundle, or its source's output beside this file (the unit tests). */
function workerScript(): string {
  const bundled = path.join(__dirname, 'imageDecodeWorker.js');
  return existsSync(bundled) ? bundled : path.join(__dirname, 'imageDecodeWorkerMain.js');
}

/**
 * The RGBA pixels of a JPEG or WebP (rejects when the decoder cannot read them). `transfer`: the
 * bytes may be handed over to the worker, their buffer detached (the caller does not use them again).
 */
export async function decodeWithWasm(mediaType: WasmMediaType, bytes: Uint8Array, options: { transfer?: boolean } = {}): Promise<WasmPixels> {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  const header = await imageHeaderOf(bytes);
  const large = !!header && header.width * header.height > WORKER_PIXELS;
  // The file's own buffer when the bytes are all of it and may be given away (the decoder copies it into
  // its memory anyway); else a copy (new Uint8Array: a Buffer's slice() would be a view of the same memory).
  const buffer = whole && (options.transfer || !large) ? bytes.buffer : new Uint8Array(bytes).buffer;
  return large ? decodeInWorker(mediaType, buffer) : decodeInThread(mediaType, buffer);
}

/** One worker per image: started, given the bytes (transferred), ended once the pixels are back. */
async function decodeInWorker(mediaType: WasmMediaType, bytes: ArrayBuffer): Promise<WasmPixels> {
  const worker = new Worker(workerScript());
  try {
    return await new Promise<WasmPixels>((resolve, reject) => {
      worker.once('message', (reply: { pixels?: WasmPixels; error?: string }) =>
        reply.pixels ? resolve(reply.pixels) : reject(new Error(reply.error ?? 'the decoder failed')),
      );
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the decode worker exited (${code})`)));
      worker.postMessage({ mediaType, bytes }, [bytes]);
    });
  } finally {
    // Awaited: its memory is given back before the caller goes on.
    await worker.terminate();
  }
}
