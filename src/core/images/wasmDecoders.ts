// JPEG and WebP pixels from the WASM decoders of Squoosh (@jsquash/jpeg: mozjpeg, @jsquash/webp:
// libwebp), each made ready once, on first use. Their .wasm files are copied next to the bundles
// that use them (esbuild.mjs); run from the sources (the unit tests), they come from the packages.
// Used by the agents' previews (files/imagePreview.ts) and the region edits (codecs.ts). No vscode import.
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import decodeJpeg, { init as initJpeg } from '@jsquash/jpeg/decode.js';
import decodeWebp, { init as initWebp } from '@jsquash/webp/decode.js';

/** Node's global WebAssembly (the project's TypeScript libs leave it out). */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object };

export interface WasmPixels {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

type Decode = (bytes: ArrayBuffer) => Promise<WasmPixels>;

interface Decoder {
  /** The compiled module, kept: a new instance of it is cheap (the compiling is not). */
  compiled?: Promise<object>;
  ready?: Promise<Decode>;
  init: (module: object) => Promise<unknown>;
  decode: Decode;
  wasm: string;
}

const decoders: Record<'image/jpeg' | 'image/webp', Decoder> = {
  'image/jpeg': { init: initJpeg, decode: decodeJpeg, wasm: '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm' },
  'image/webp': { init: initWebp, decode: decodeWebp, wasm: '@jsquash/webp/codec/dec/webp_dec.wasm' },
};

/**
 * Above this many pixels the instance is replaced after decoding: a WASM memory grows to hold the
 * decoded image and never shrinks (~160 MB more for a progressive 4096×4096 JPEG); a new instance
 * lets the grown one be collected.
 */
const LARGE_PIXELS = 2048 * 2048;

/**
 * The decoders' stand-in for the browser's ImageData (what emscripten defines in Node when it is
 * missing), defined here first: emscripten's class, made inside the first instance's scope, would
 * keep that instance and all its memory for the life of the host.
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
  decoder.compiled ??= (async () => {
    const bundled = path.join(__dirname, path.basename(decoder.wasm));
    const file = existsSync(bundled) ? bundled : require.resolve(decoder.wasm);
    return new WebAssembly.Module(await fs.readFile(file));
  })();
  await decoder.init(await decoder.compiled);
  return decoder.decode;
}

/** The RGBA pixels of a JPEG or WebP (rejects when the decoder cannot read them). */
export async function decodeWithWasm(mediaType: 'image/jpeg' | 'image/webp', bytes: Uint8Array): Promise<WasmPixels> {
  const decoder = decoders[mediaType];
  const decode = await (decoder.ready ??= ready(decoder));
  // The file's own buffer when the bytes are all of it (the decoder copies it into its memory anyway).
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const pixels = await decode((whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) as ArrayBuffer);
  if (pixels.width * pixels.height > LARGE_PIXELS) {
    // A fresh instance for the next image: the grown one goes once no decode uses it.
    const fresh = (decoder.ready = ready(decoder));
    fresh.catch(() => decoder.ready === fresh && (decoder.ready = undefined));
  }
  return pixels;
}
