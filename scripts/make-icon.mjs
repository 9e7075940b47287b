#!/usr/bin/env node
// Draws the extension icon, images/icon.png (128×128 RGBA), with nothing but node:zlib:
// an indigo-to-violet rounded square, a white picture frame with hills and a sun, and a warm
// four-pointed sparkle. Colours read on light and dark themes alike. 4×4 supersampling.
//
//   node scripts/make-icon.mjs [out.png]
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';

const SIZE = 128;
const SAMPLES = 4;

const hex = (h, a = 1) => [parseInt(h.slice(1, 3), 16) / 255, parseInt(h.slice(3, 5), 16) / 255, parseInt(h.slice(5, 7), 16) / 255, a];
const mix = (c1, c2, t) => c1.map((v, i) => v + (c2[i] - v) * t);

function roundedRect(x, y, x0, y0, x1, y1, r) {
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return x >= x0 && x <= x1 && y >= y0 && y <= y1 && (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

/** Four-pointed star: |dx|^p + |dy|^p ≤ r^p with p < 1 gives the concave sides. */
function sparkle(x, y, cx, cy, r, p = 0.55) {
  return (Math.abs(x - cx) / r) ** p + (Math.abs(y - cy) / r) ** p <= 1;
}

/** Layers from bottom to top: each returns a colour (premultiplied later) or undefined. */
const layers = [
  // Background tile.
  (x, y) => (roundedRect(x, y, 4, 4, 124, 124, 26) ? mix(hex('#4338ca'), hex('#7c3aed'), (x + y) / 256) : undefined),
  // Picture: sky inside the frame.
  (x, y) => (roundedRect(x, y, 22, 40, 92, 104, 6) ? hex('#ffffff', 0.16) : undefined),
  // Hills.
  (x, y) => {
    if (!roundedRect(x, y, 22, 40, 92, 104, 6)) return undefined;
    const hill1 = y >= 104 - 30 * Math.exp(-(((x - 42) / 16) ** 2));
    const hill2 = y >= 104 - 22 * Math.exp(-(((x - 74) / 14) ** 2));
    return hill1 || hill2 ? hex('#ffffff', 0.9) : undefined;
  },
  // Sun.
  (x, y) => ((x - 72) ** 2 + (y - 62) ** 2 <= 7.5 ** 2 ? hex('#fde68a') : undefined),
  // Frame outline.
  (x, y) => (roundedRect(x, y, 16, 34, 98, 110, 10) && !roundedRect(x, y, 22, 40, 92, 104, 6) ? hex('#ffffff') : undefined),
  // Sparkles: a halo cut-out so the star stands off the frame, then the stars.
  (x, y) => (sparkle(x, y, 98, 34, 27) ? mix(hex('#4338ca'), hex('#7c3aed'), 0.55) : undefined),
  (x, y) => (sparkle(x, y, 98, 34, 22) ? hex('#fde68a') : undefined),
  (x, y) => (sparkle(x, y, 110, 66, 8) ? hex('#fef3c7') : undefined),
];

export function drawIcon() {
  const rgba = Buffer.alloc(SIZE * SIZE * 4);
  for (let py = 0; py < SIZE; py++) {
    for (let px = 0; px < SIZE; px++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = px + (sx + 0.5) / SAMPLES;
          const y = py + (sy + 0.5) / SAMPLES;
          // Premultiplied "over" compositing.
          let out = [0, 0, 0, 0];
          for (const layer of layers) {
            const c = layer(x, y);
            if (!c) continue;
            const a = c[3];
            out = [c[0] * a + out[0] * (1 - a), c[1] * a + out[1] * (1 - a), c[2] * a + out[2] * (1 - a), a + out[3] * (1 - a)];
          }
          for (let i = 0; i < 4; i++) sum[i] += out[i];
        }
      }
      const n = SAMPLES * SAMPLES;
      const alpha = sum[3] / n;
      const offset = (py * SIZE + px) * 4;
      for (let i = 0; i < 3; i++) rgba[offset + i] = alpha ? Math.round((sum[i] / n / alpha) * 255) : 0;
      rgba[offset + 3] = Math.round(alpha * 255);
    }
  }
  return encodePng(SIZE, SIZE, rgba);
}

// ---- PNG ------------------------------------------------------------------------------------

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

export function encodePng(width, height, rgba) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const out = path.resolve(process.argv[2] ?? path.join(root, 'images', 'icon.png'));
  mkdirSync(path.dirname(out), { recursive: true });
  const png = drawIcon();
  writeFileSync(out, png);
  console.log(`${path.relative(process.cwd(), out)}: ${SIZE}×${SIZE}, ${png.length} bytes`);
}
