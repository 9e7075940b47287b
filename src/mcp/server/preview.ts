// The small preview a paid tool returns with its answer: a PNG of at most 128 px, never the image
// itself. PNGs are read by core/files/pngThumbnail.ts; JPEG and WebP by the WASM decoders of Squoosh
// (@jsquash/jpeg: mozjpeg, @jsquash/webp: libwebp), bundled into dist/mcp.js only, their .wasm
// files copied next to it by esbuild.mjs.
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import decodeJpeg, { init as initJpeg } from '@jsquash/jpeg/decode.js';
import decodeWebp, { init as initWebp } from '@jsquash/webp/decode.js';
import { imageHeaderOf } from '../../core/images/imageHeader';
import { pngThumbnail, rgbaImage, thumbnail } from '../../core/files/pngThumbnail';

export const PREVIEW_SIDE = 128;
/** Images above this are not read back for a preview. */
const MAX_PREVIEW_SOURCE_BYTES = 32 * 1024 * 1024;
/** JPEG and WebP above this many pixels are not decoded (64 MiB of RGBA). */
const MAX_DECODED_PIXELS = 16 * 1024 * 1024;

/** Node's global WebAssembly (the project's TypeScript libs leave it out). */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object };

type Decode = (bytes: ArrayBuffer) => Promise<{ width: number; height: number; data: Uint8ClampedArray }>;

/** Each decoder is made ready once, on first use. */
const decoders: Record<'image/jpeg' | 'image/webp', { ready?: Promise<Decode>; make: () => Promise<Decode> }> = {
  'image/jpeg': { make: () => ready(initJpeg, decodeJpeg, '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm') },
  'image/webp': { make: () => ready(initWebp, decodeWebp, '@jsquash/webp/codec/dec/webp_dec.wasm') },
};

async function ready(init: (module: object) => Promise<unknown>, decode: Decode, wasm: string): Promise<Decode> {
  // Next to dist/mcp.js once built; from the package when run from the sources (the unit tests).
  const bundled = path.join(__dirname, path.basename(wasm));
  const file = existsSync(bundled) ? bundled : require.resolve(wasm);
  await init(new WebAssembly.Module(await fs.readFile(file)));
  return decode;
}

/** A PNG thumbnail (base64) of the saved image, or undefined when it cannot be made. */
export async function previewOf(file: string): Promise<string | undefined> {
  try {
    const stat = await fs.stat(file);
    if (stat.size > MAX_PREVIEW_SOURCE_BYTES) return undefined;
    const bytes = await fs.readFile(file);
    const header = await imageHeaderOf(bytes);
    if (header?.mediaType === 'image/png') return pngThumbnail(bytes, PREVIEW_SIDE)?.toString('base64');
    if (header?.mediaType !== 'image/jpeg' && header?.mediaType !== 'image/webp') return undefined;
    if (header.width * header.height > MAX_DECODED_PIXELS) return undefined;
    const decoder = decoders[header.mediaType];
    const decode = await (decoder.ready ??= decoder.make());
    const pixels = await decode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const image = rgbaImage(pixels.width, pixels.height, pixels.data);
    return image && thumbnail(image, PREVIEW_SIDE).toString('base64');
  } catch {
    return undefined;
  }
}
