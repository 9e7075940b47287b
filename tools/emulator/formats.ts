// Output formats the emulator really encodes: a model that lists `jpeg` or `webp` in its
// supported_output_formats answers `output_format: jpeg|webp` with a JPEG or WebP of the painted
// picture (Squoosh's mozjpeg and libwebp encoders, @jsquash, the same project the extension decodes
// with). Other models ignore the parameter, as the contract says. The encoders load on first use.
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import encodeJpeg, { init as initJpeg } from '@jsquash/jpeg/encode.js';
import encodeWebp, { init as initWebp } from '@jsquash/webp/encode.js';
import type { EmulatorImageModel } from './catalog';

export type EncodedFormat = 'jpeg' | 'webp';

type Pixels = { data: Uint8ClampedArray; width: number; height: number };
type Encode = (pixels: Pixels) => Promise<ArrayBuffer>;

const encoders: Record<EncodedFormat, { ready?: Promise<Encode>; make: () => Promise<Encode> }> = {
  jpeg: {
    make: async () => {
      await initJpeg({ wasmBinary: readFileSync(require.resolve('@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm')) });
      return (pixels) => encodeJpeg(pixels, { quality: 85 });
    },
  },
  webp: {
    make: async () => {
      await initWebp({ wasmBinary: readFileSync(require.resolve('@jsquash/webp/codec/enc/webp_enc.wasm')) });
      return (pixels) => encodeWebp(pixels, { quality: 85 });
    },
  },
};

/** The format the model applies for this request's `output_format`, when it is one the emulator encodes. */
export function encodedFormat(model: EmulatorImageModel, outputFormat: unknown): EncodedFormat | undefined {
  return (outputFormat === 'jpeg' || outputFormat === 'webp') && model.supported_output_formats.includes(outputFormat) ? outputFormat : undefined;
}

/** The painted PNG (png.ts: unfiltered rows, one IDAT) as a JPEG or WebP. */
export async function encodeAs(format: EncodedFormat, png: Buffer): Promise<Buffer> {
  const encoder = encoders[format];
  const encode = await (encoder.ready ??= encoder.make());
  return Buffer.from(await encode(pixelsOf(png)));
}

/** The media type of an image the emulator made, by its first bytes. */
export function mediaTypeOf(image: Buffer): string {
  if (image[0] === 0x89) return 'image/png';
  if (image[0] === 0xff && image[1] === 0xd8) return 'image/jpeg';
  if (image.toString('latin1', 0, 4) === 'RIFF') return 'image/webp';
  return 'image/svg+xml';
}

/** RGBA pixels of a PNG that png.ts painted (8-bit RGB or RGBA, filter 0 on every row). */
function pixelsOf(png: Buffer): Pixels {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const channels = png[25] === 6 ? 4 : 3;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const rows = inflateSync(Buffer.concat(idat));
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * channels) + 1;
    for (let x = 0; x < width; x++) {
      const from = row + x * channels;
      const to = (y * width + x) * 4;
      data[to] = rows[from]!;
      data[to + 1] = rows[from + 1]!;
      data[to + 2] = rows[from + 2]!;
      data[to + 3] = channels === 4 ? rows[from + 3]! : 255;
    }
  }
  return { data, width, height };
}
