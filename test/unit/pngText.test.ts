// PNG provenance chunks: round trip, UTF-8 (Cyrillic), big files without reading them, refusals,
// and that the result is still a valid PNG (IEND last, every CRC right, same pixels).
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32, inflateSync } from 'node:zlib';
import { StagingSink } from '../../src/core/files/imageStore';
import { addPngTextChunkToBuffer, buildITXtChunk, IEND_CHUNK, PNG_SIGNATURE, PngFormatError, readPngTextChunk } from '../../src/core/files/pngText';
import { PROVENANCE_KEYWORD } from '../../src/jobs/provenance';
import { paddedPngParts, paintPng, pngChunk } from '../../tools/emulator/png';
import { DEMO_KEYS, newClient, newService, removeDir, SMALL, startEmulator, tempDir, TINY_PNG } from './support/gateway';

interface Chunk {
  type: string;
  data: Buffer;
  crcOk: boolean;
}

/** Every chunk of an in-memory PNG, with its CRC checked. */
function chunks(png: Buffer): Chunk[] {
  assert.ok(png.subarray(0, 8).equals(PNG_SIGNATURE), 'signature');
  const found: Chunk[] = [];
  let offset = 8;
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    const crc = png.readUInt32BE(offset + 8 + length);
    found.push({ type, data, crcOk: crc32(png.subarray(offset + 4, offset + 8 + length)) === crc });
    offset += 12 + length;
  }
  assert.equal(offset, png.length, 'the chunks end exactly at the end of the file');
  return found;
}

/** The decompressed image data (what a decoder inflates). */
function pixels(png: Buffer): Buffer {
  return inflateSync(
    Buffer.concat(
      chunks(png)
        .filter((c) => c.type === 'IDAT')
        .map((c) => c.data),
    ),
  );
}

const KEY = 'gateway-images';

/** Writes `parts` as one image through the staging sink, asking for the chunk of `text`, as a job does. */
async function stagedWithText(dir: string, parts: Buffer[], text: string) {
  const sink = new StagingSink(dir, { pngChunkFor: () => buildITXtChunk(KEY, text) });
  const writer = await sink.open(0);
  for (const part of parts) await writer.write(part);
  await writer.close();
  await sink.durable();
  return sink.images[0]!;
}

describe('pngText', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-pngtext-');
  });
  afterEach(() => removeDir(dir));

  it('builds an uncompressed iTXt chunk: keyword, flags, empty language and translation, UTF-8 text', () => {
    const chunk = buildITXtChunk(KEY, 'hello');
    assert.equal(chunk.toString('latin1', 4, 8), 'iTXt');
    const data = chunk.subarray(8, chunk.length - 4);
    assert.ok(data.equals(Buffer.concat([Buffer.from(KEY), Buffer.from([0, 0, 0, 0, 0]), Buffer.from('hello')])));
    assert.equal(chunk.readUInt32BE(chunk.length - 4), crc32(chunk.subarray(4, chunk.length - 4)));
    assert.throws(() => buildITXtChunk('', 'x'), RangeError);
    assert.throws(() => buildITXtChunk('x'.repeat(80), 'x'), RangeError);
    assert.throws(() => buildITXtChunk('ключ', 'x'), RangeError);
  });

  it('round trip through the staging sink: Cyrillic JSON comes back unchanged; the file is still a valid PNG with the same pixels', async () => {
    const original = paintPng({ width: 64, height: 48, transparent: false, identity: 'round trip' });
    const plain = path.join(dir, 'a.png');
    await writeFile(plain, original);
    assert.equal(await readPngTextChunk(plain, KEY), undefined, 'no record without the chunk');
    const record = JSON.stringify({ prompt: 'Маяк на скале на рассвете, акварель — «тест» 🐟', model: 'aurora-1', seed: 42 });
    // In pieces that split IEND, as a decoder may hand them over.
    const pieces = [original.subarray(0, original.length - 7), original.subarray(original.length - 7)];
    const staged = await stagedWithText(path.join(dir, 'staging-a'), pieces, record);
    assert.equal(staged.pngChunk, 'added');
    const file = staged.path;
    assert.equal(await readPngTextChunk(file, KEY), record);
    assert.deepEqual(JSON.parse((await readPngTextChunk(file, KEY))!).prompt, 'Маяк на скале на рассвете, акварель — «тест» 🐟');

    const changed = await readFile(file);
    const list = chunks(changed);
    assert.deepEqual(
      list.map((c) => c.type),
      ['IHDR', 'IDAT', 'iTXt', 'IEND'],
    );
    assert.ok(
      list.every((c) => c.crcOk),
      'every CRC is valid',
    );
    assert.ok(changed.subarray(changed.length - 12).equals(IEND_CHUNK), 'IEND is last');
    assert.ok(changed.subarray(0, original.length - 12).equals(original.subarray(0, original.length - 12)), 'the bytes before IEND are untouched');
    assert.ok(pixels(changed).equals(pixels(original)), 'the same pixels decode');
  });

  it('the buffer variant gives the same bytes as the staging sink', async () => {
    const staged = await stagedWithText(path.join(dir, 'staging-b'), [TINY_PNG], 'тест');
    assert.ok((await readFile(staged.path)).equals(addPngTextChunkToBuffer(TINY_PNG, KEY, 'тест')));
  });

  it('reads the first chunk with the keyword, ignores other keywords, reads tEXt too', async () => {
    const other = pngChunk('tEXt', Buffer.from('Software\0something'));
    const legacy = pngChunk('tEXt', Buffer.from(`${KEY}\0latin text`, 'latin1'));
    const png = Buffer.concat([TINY_PNG.subarray(0, TINY_PNG.length - 12), other, legacy, IEND_CHUNK]);
    const file = path.join(dir, 'c.png');
    await writeFile(file, png);
    assert.equal(await readPngTextChunk(file, 'Software'), 'something');
    assert.equal(await readPngTextChunk(file, KEY), 'latin text');
    assert.equal(await readPngTextChunk(file, 'Missing'), undefined);
  });

  it('a chunk with a bad CRC is not believed', async () => {
    const chunk = buildITXtChunk(KEY, 'ok');
    chunk[chunk.length - 1]! ^= 0xff;
    const file = path.join(dir, 'd.png');
    await writeFile(file, Buffer.concat([TINY_PNG.subarray(0, TINY_PNG.length - 12), chunk, IEND_CHUNK]));
    assert.equal(await readPngTextChunk(file, KEY), undefined);
  });

  it('adds nothing to what is not a PNG ending in IEND, and leaves the bytes as they came', async () => {
    const cases: [string, Buffer][] = [
      ['jpeg.png', Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Buffer.alloc(40)])],
      ['junk-after-iend.png', Buffer.concat([TINY_PNG, Buffer.from('trailing')])],
      ['truncated.png', TINY_PNG.subarray(0, TINY_PNG.length - 5)],
      ['empty.png', Buffer.alloc(0)],
      ['signature-only.png', PNG_SIGNATURE],
    ];
    for (const [name, bytes] of cases) {
      await writeFile(path.join(dir, name), bytes);
      const staged = await stagedWithText(path.join(dir, `staging-${name}`), [bytes], 'x');
      assert.notEqual(staged.pngChunk, 'added', name);
      assert.ok((await readFile(staged.path)).equals(bytes), `${name} was modified`);
    }
    assert.throws(() => addPngTextChunkToBuffer(Buffer.concat([TINY_PNG, Buffer.from('x')]), KEY, 'x'), PngFormatError);
    await assert.rejects(readPngTextChunk(path.join(dir, 'jpeg.png'), KEY), PngFormatError);
    // A chunk length that runs past the end is reported, not followed.
    const broken = Buffer.from(TINY_PNG);
    broken.writeUInt32BE(0x7000_0000, 8);
    await writeFile(path.join(dir, 'broken.png'), broken);
    await assert.rejects(readPngTextChunk(path.join(dir, 'broken.png'), KEY), PngFormatError);
  });

  it('a 24 MiB PNG written through the sink gets its chunk; every byte before IEND is as sent (hash of the streamed file)', async function () {
    this.timeout(60_000);
    const base = paintPng({ width: 256, height: 256, transparent: true, identity: 'big' });
    const parts = paddedPngParts(base, 24 * 1024 * 1024 + 123);
    const sent = Buffer.concat(parts);
    const text = JSON.stringify({ prompt: 'большой файл' });
    const file = (await stagedWithText(path.join(dir, 'staging-big'), parts, text)).path;
    const chunk = buildITXtChunk(KEY, text);
    const after = await stat(file);
    assert.equal(after.size, sent.length + chunk.length);
    const hash = createHash('sha256');
    await pipeline(createReadStream(file, { start: 0, end: sent.length - 13 }), hash);
    assert.equal(
      hash.digest('hex'),
      createHash('sha256')
        .update(sent.subarray(0, sent.length - 12))
        .digest('hex'),
    );
    const handle = await open(file, 'r');
    const tail = Buffer.alloc(chunk.length + 12);
    await handle.read(tail, 0, tail.length, after.size - tail.length);
    await handle.close();
    assert.ok(tail.equals(Buffer.concat([chunk, IEND_CHUNK])));
    assert.equal(JSON.parse((await readPngTextChunk(file, KEY))!).prompt, 'большой файл');
  });

  it('reads the chunk of a 3 GiB (sparse) PNG that could not be read into memory at all', async function () {
    this.timeout(30_000);
    // Signature, IHDR, one 1.5 GiB and one ~1.5 GiB chunk of zeros (holes), the iTXt chunk, IEND: only headers are written.
    const file = path.join(dir, 'huge.png');
    const head = TINY_PNG.subarray(0, 8 + 25); // signature + IHDR
    const chunkLength = 1536 * 1024 * 1024;
    const handle = await open(file, 'w');
    await handle.write(head, 0, head.length, 0);
    let offset = head.length;
    for (let i = 0; i < 2; i++) {
      const header = Buffer.alloc(8);
      header.writeUInt32BE(chunkLength, 0);
      header.write('gaPd', 4, 'latin1');
      await handle.write(header, 0, 8, offset);
      offset += 12 + chunkLength; // data (holes) and a CRC of zeros: never read by readPngTextChunk
    }
    const ending = Buffer.concat([buildITXtChunk(KEY, '{"prompt":"огромный"}'), IEND_CHUNK]);
    await handle.write(ending, 0, ending.length, offset);
    await handle.close();
    const size = (await stat(file)).size;
    assert.ok(size > 3 * 1024 * 1024 * 1024, `size ${size}`);
    await assert.rejects(readFile(file), 'readFile refuses a file this large: proof that readPngTextChunk streams');
    assert.equal(await readPngTextChunk(file, KEY), '{"prompt":"огромный"}');
  });

  describe('through the job service (provenance port)', () => {
    it("on: each saved PNG holds its request; the pixels are the gateway's; off or absent: the file is untouched", async function () {
      this.timeout(30_000);
      const emu = await startEmulator();
      const client = newClient(emu, DEMO_KEYS.unlimited);
      try {
        const models = await client.imageModels();
        const job = (sub: string) => ({
          request: { model: 'aurora-1', prompt: 'Кот в сапогах', n: 2, seed: 5, size: SMALL, quality: 'low' },
          output: { directory: path.join(dir, sub), pattern: '{model}-{index}' },
        });
        const on = await newService(client, models, path.join(dir, 'recovery'), { provenance: () => true }).service.run(job('on'));
        const off = await newService(client, models, path.join(dir, 'recovery'), { provenance: () => false }).service.run(job('off'));
        const absent = await newService(client, models, path.join(dir, 'recovery')).service.run(job('absent'));
        for (const [i, file] of on.files.entries()) {
          const record = JSON.parse((await readPngTextChunk(file, PROVENANCE_KEYWORD))!);
          assert.equal(record.generator, 'gateway-images');
          assert.equal(record.prompt, 'Кот в сапогах');
          assert.equal(record.model, 'aurora-1');
          assert.equal(record.seed, 5);
          assert.deepEqual(record.parameters, { n: 2, size: SMALL, quality: 'low' });
          assert.equal(record.index, i + 1);
          const plain = await readFile(off.files[i]!);
          const withRecord = await readFile(file);
          assert.ok(withRecord.subarray(0, plain.length - 12).equals(plain.subarray(0, plain.length - 12)), 'same image bytes before the chunk');
          assert.ok(chunks(withRecord).every((c) => c.crcOk));
          assert.ok(pixels(withRecord).equals(pixels(plain)));
        }
        for (const file of [...off.files, ...absent.files]) assert.equal(await readPngTextChunk(file, PROVENANCE_KEYWORD), undefined);
      } finally {
        await client.close();
        await emu.close();
      }
    });
  });
});
