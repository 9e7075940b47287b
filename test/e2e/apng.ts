// Assembles same-sized PNG screenshots into one animated PNG (APNG), for the README's capture.
// No decoding: each frame's compressed IDAT data is reused as the frame data (fdAT).
import * as zlib from 'zlib';

interface Chunk {
  type: string;
  data: Buffer;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function readChunks(png: Buffer): Chunk[] {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  const chunks: Chunk[] = [];
  for (let offset = 8; offset < png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    chunks.push({ type, data: png.subarray(offset + 8, offset + 8 + length) });
    offset += 12 + length;
  }
  return chunks;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** Frames must share one IHDR (size, depth, colour type). `delaysMs` per frame. */
export function assembleApng(frames: Buffer[], delaysMs: number[]): Buffer {
  if (!frames.length) throw new Error('no frames');
  const parsed = frames.map(readChunks);
  const ihdr = parsed[0]!.find((c) => c.type === 'IHDR')!.data;
  for (const [i, chunks] of parsed.entries()) {
    if (!chunks.find((c) => c.type === 'IHDR')!.data.equals(ihdr)) throw new Error(`frame ${i} differs in size or format`);
  }
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const acTL = Buffer.alloc(8);
  acTL.writeUInt32BE(frames.length, 0);
  acTL.writeUInt32BE(0, 4); // loop forever
  const out: Buffer[] = [SIGNATURE, chunk('IHDR', ihdr), chunk('acTL', acTL)];
  let sequence = 0;
  parsed.forEach((chunks, i) => {
    const fcTL = Buffer.alloc(26);
    fcTL.writeUInt32BE(sequence++, 0);
    fcTL.writeUInt32BE(width, 4);
    fcTL.writeUInt32BE(height, 8);
    fcTL.writeUInt16BE(Math.max(1, Math.round(delaysMs[i] ?? 1000)), 20);
    fcTL.writeUInt16BE(1000, 22); // delay in milliseconds
    out.push(chunk('fcTL', fcTL));
    for (const data of chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)) {
      if (i === 0) {
        out.push(chunk('IDAT', data));
      } else {
        const seq = Buffer.alloc(4);
        seq.writeUInt32BE(sequence++, 0);
        out.push(chunk('fdAT', Buffer.concat([seq, data])));
      }
    }
  });
  out.push(chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(out);
}
