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

const decoders: Record<'image/jpeg' | 'image/webp', { ready?: Promise<Decode>; make: () => Promise<Decode> }> = {
  'image/jpeg': { make: () => ready(initJpeg, decodeJpeg, '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm') },
  'image/webp': { make: () => ready(initWebp, decodeWebp, '@jsquash/webp/codec/dec/webp_dec.wasm') },
};

async function ready(init: (module: object) => Promise<unknown>, decode: Decode, wasm: string): Promise<Decode> {
  const bundled = path.join(__dirname, path.basename(wasm));
  const file = existsSync(bundled) ? bundled : require.resolve(wasm);
  await init(new WebAssembly.Module(await fs.readFile(file)));
  return decode;
}

/** The RGBA pixels of a JPEG or WebP (rejects when the decoder cannot read them). */
export async function decodeWithWasm(mediaType: 'image/jpeg' | 'image/webp', bytes: Uint8Array): Promise<WasmPixels> {
  const decoder = decoders[mediaType];
  const decode = await (decoder.ready ??= decoder.make());
  // The file's own buffer when the bytes are all of it (the decoder copies it into its memory anyway).
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return decode((whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) as ArrayBuffer);
}
