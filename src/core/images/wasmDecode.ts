// JPEG and WebP pixels from the WASM decoders of Squoosh (@jsquash/jpeg: mozjpeg, @jsquash/webp:
// libwebp) in the thread that calls, each made ready once, on first use. Their .wasm files are
// copied next to the bundles that use them (esbuild.mjs); run from the sources (the unit tests),
// they come from the packages. Used by wasmDecoders.ts (small images) and by the decode worker
// (imageDecodeWorkerMain.ts: large ones). Imports only the decoders: the worker's bundle stays small.
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import decodeJpeg, { init as initJpeg } from '@jsquash/jpeg/decode.js';
import decodeWebp, { init as initWebp } from '@jsquash/webp/decode.js';

/** Node's global WebAssembly (the project's TypeScript libs leave it out). */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object };

export type WasmMediaType = 'image/jpeg' | 'image/webp';

export interface WasmPixels {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

type Decode = (bytes: ArrayBuffer) => Promise<WasmPixels>;

interface Decoder {
  ready?: Promise<Decode>;
  init: (module: object) => Promise<unknown>;
  decode: Decode;
  wasm: string;
}

const decoders: Record<WasmMediaType, Decoder> = {
  'image/jpeg': { init: initJpeg, decode: decodeJpeg, wasm: '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm' },
  'image/webp': { init: initWebp, decode: decodeWebp, wasm: '@jsquash/webp/codec/dec/webp_dec.wasm' },
};

/**
 * The decoders' stand-in for the browser's ImageData (what emscripten defines in Node when it is
 * missing), defined here first: emscripten's class, made inside the first instance's scope, would
 * keep that instance and all its memory for the life of the thread.
 */
class ImageData {
  constructor(
    readonly data: Uint8ClampedArray,
    readonly width: number,
    readonly height: number,
  ) {}
}

async function ready(decoder: Decoder): Promise<Decode> {
  (globalThis as { ImageData?: unknown }).ImageData ??= ImageData;
  const bundled = path.join(__dirname, path.basename(decoder.wasm));
  const file = existsSync(bundled) ? bundled : require.resolve(decoder.wasm);
  await decoder.init(new WebAssembly.Module(await fs.readFile(file)));
  return decoder.decode;
}

/** The RGBA pixels of a JPEG or WebP, decoded in this thread (rejects when the decoder cannot read them). */
export async function decodeInThread(mediaType: WasmMediaType, bytes: ArrayBuffer): Promise<WasmPixels> {
  const decoder = decoders[mediaType];
  const decode = await (decoder.ready ??= ready(decoder));
  const { width, height, data } = await decode(bytes);
  return { width, height, data };
}
