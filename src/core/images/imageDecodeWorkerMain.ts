// The decode worker's code (dist/imageDecodeWorker.js): one large JPEG or WebP decoded in a thread
// of its own, its pixels sent back transferred (no copy). The thread is ended right after, and its
// WASM memory (~175 MB for a progressive 4096×4096 JPEG, never shrunk) goes with it (wasmDecoders.ts).
import { parentPort } from 'node:worker_threads';
import { decodeInThread, type WasmMediaType } from './wasmDecode';

parentPort?.once('message', ({ mediaType, bytes }: { mediaType: WasmMediaType; bytes: ArrayBuffer }) => {
  decodeInThread(mediaType, bytes).then(
    (pixels) => parentPort!.postMessage({ pixels }, [pixels.data.buffer as ArrayBuffer]),
    (error: unknown) => parentPort!.postMessage({ error: String(error) }),
  );
});
