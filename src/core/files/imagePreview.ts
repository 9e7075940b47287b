// Previews of a saved image for agents, never the image itself when it is large: the MCP server's
// small PNG (previewOf, at most 128 px) and the chat tools' view of their result (agentPreviewOf: at
// most about a megapixel, PNG or JPEG, what a model can look at). PNGs are read by pngThumbnail.ts;
// JPEG and WebP by the WASM decoders of Squoosh (@jsquash/jpeg: mozjpeg, @jsquash/webp: libwebp),
// bundled into dist/mcp.js and dist/imagePreview.js only (never at activation), their .wasm files
// copied next to them by esbuild.mjs.
import { promises as fs } from 'node:fs';
import { type ImageHeader, imageHeaderOf } from '../images/imageHeader';
import { decodeWithWasm } from '../images/wasmDecoders';
import { type DecodedImage, pngThumbnail, rgbaImage, thumbnail } from './pngThumbnail';

export const PREVIEW_SIDE = 128;
/** What a chat model is shown at most: about one megapixel. */
export const AGENT_PREVIEW_PIXELS = 1024 * 1024;
/** A PNG or JPEG within the pixels is shown as it is up to this size; above, it is scaled (a PNG again). */
const MAX_AS_IS_BYTES = 4 * 1024 * 1024;
/** Images above this are not read back for a preview. */
const MAX_PREVIEW_SOURCE_BYTES = 32 * 1024 * 1024;
/** JPEG and WebP above this many pixels are not decoded (64 MiB of RGBA). */
const MAX_DECODED_PIXELS = 16 * 1024 * 1024;

export interface AgentPreview {
  mimeType: 'image/png' | 'image/jpeg';
  data: Buffer;
}

/** The file's bytes and header when it is an image small enough to read back. */
async function readImage(file: string): Promise<{ bytes: Buffer; header: ImageHeader } | undefined> {
  const stat = await fs.stat(file);
  if (stat.size > MAX_PREVIEW_SOURCE_BYTES) return undefined;
  const bytes = await fs.readFile(file);
  const header = await imageHeaderOf(bytes);
  return header && { bytes, header };
}

/** The scaled PNG of a read image (at most `side` px on its long side), or undefined for other kinds. */
async function scaledPng(bytes: Buffer, header: ImageHeader, side: number): Promise<Buffer | undefined> {
  if (header.mediaType === 'image/png') return pngThumbnail(bytes, side);
  if (header.mediaType !== 'image/jpeg' && header.mediaType !== 'image/webp') return undefined;
  if (header.width * header.height > MAX_DECODED_PIXELS) return undefined;
  const pixels = await decodeWithWasm(header.mediaType, bytes);
  const image: DecodedImage | undefined = rgbaImage(pixels.width, pixels.height, pixels.data);
  return image && thumbnail(image, side);
}

/** A PNG thumbnail (base64) of the saved image, or undefined when it cannot be made. */
export async function previewOf(file: string): Promise<string | undefined> {
  try {
    const read = await readImage(file);
    return read && (await scaledPng(read.bytes, read.header, PREVIEW_SIDE))?.toString('base64');
  } catch {
    return undefined;
  }
}

/**
 * What a chat model is shown of its result: the PNG or JPEG itself when it has at most `maxPixels`
 * and is not too heavy, else a PNG scaled down to at most `maxPixels`; undefined when none can be made.
 */
export async function agentPreviewOf(file: string, maxPixels = AGENT_PREVIEW_PIXELS): Promise<AgentPreview | undefined> {
  try {
    const read = await readImage(file);
    if (!read) return undefined;
    const { bytes, header } = read;
    const asIs = header.mediaType === 'image/png' || header.mediaType === 'image/jpeg';
    if (asIs && header.width * header.height <= maxPixels && bytes.length <= MAX_AS_IS_BYTES)
      return { mimeType: header.mediaType as AgentPreview['mimeType'], data: bytes };
    const png = await scaledPng(bytes, header, sideForPixels(header.width, header.height, maxPixels));
    return png && { mimeType: 'image/png', data: png };
  } catch {
    return undefined;
  }
}

/** The longest side (thumbnail()'s maxSide) that keeps a width×height image within `maxPixels`, as thumbnail() rounds. */
export function sideForPixels(width: number, height: number, maxPixels: number): number {
  const long = Math.max(width, height);
  if (!(width > 0 && height > 0) || width * height <= maxPixels) return Math.max(1, long);
  let side = Math.max(1, Math.floor(long * Math.sqrt(maxPixels / (width * height))));
  const pixelsAt = (s: number) => Math.max(1, Math.round((width * s) / long)) * Math.max(1, Math.round((height * s) / long));
  while (side > 1 && pixelsAt(side) > maxPixels) side--;
  return side;
}
