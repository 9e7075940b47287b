// The streaming decoder as it keeps what it cannot read: for any failure at any point and any chunk
// boundaries, the kept bytes (the JSON around the images, what arrived of the failing image, the rest
// as it came) are exactly the answer without the images that were decoded whole. And data URLs, in
// b64_json or in url, with their header split anywhere.
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { open, readFile, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ResponseFormatError } from '../../src/core/gateway/errors';
import type { ImageSink, ImageWriter } from '../../src/core/gateway/imageSink';
import { AnswerKeeper } from '../../src/core/answers/keptAnswer';
import { decodePaidAnswer } from '../../src/core/answers/paidAnswer';
import { prng } from '../../tools/emulator/png';
import { listFiles, removeDir, tempDir } from './support/gateway';

/** Keeps what the decoder hands over the way StagingSink does, in memory. */
class KeepingSink implements ImageSink {
  readonly kept: Buffer[] = [];
  readonly images = new Map<number, Buffer>();

  open(index: number): ImageWriter {
    const parts: Buffer[] = [];
    return {
      write: (bytes) => void parts.push(Buffer.from(bytes)),
      close: async () => void this.images.set(index, Buffer.concat(parts)),
      abort: async () => undefined,
      unfinished: async ({ bytes, encoding, text }) => {
        const written = Buffer.concat(parts).subarray(0, bytes);
        this.kept.push(encoding === 'base64' ? Buffer.from(written.toString('base64'), 'latin1') : written);
        if (text) this.kept.push(Buffer.from(text));
      },
    };
  }

  keep(bytes: Buffer): void {
    this.kept.push(Buffer.from(bytes));
  }

  text(): string {
    return Buffer.concat(this.kept).toString('latin1');
  }
}

async function* chunked(body: Buffer, sizes: () => number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < body.length;) {
    const n = sizes();
    yield body.subarray(i, i + n);
    i += n;
  }
}

const randomSizes = (seed: number, max: number) => {
  const rng = prng(seed);
  return () => 1 + Math.floor(rng() ** 3 * max);
};

/** The answer with the content of the image strings in `decoded` left out (they went into files). */
function withoutImages(body: string, decoded: number[]): string {
  let out = '';
  let from = 0;
  let index = 0;
  for (let at = body.indexOf('"b64_json":"'); at !== -1; at = body.indexOf('"b64_json":"', at + 1), index++) {
    const start = at + '"b64_json":"'.length;
    if (!decoded.includes(index)) continue;
    out += body.slice(from, start);
    from = body.indexOf('"', start);
  }
  return out + body.slice(from);
}

async function decode(body: string, sizes: () => number, sink = new KeepingSink()) {
  let error: unknown;
  try {
    await decodePaidAnswer(chunked(Buffer.from(body, 'latin1'), sizes), 'application/json', sink);
  } catch (e) {
    error = e;
  }
  return { sink, error };
}

describe('the decoder keeps what it cannot read', function () {
  this.timeout(120_000);

  it('a stray character anywhere in any image, any chunk boundaries: kept byte-equal, earlier images decoded', async () => {
    let cases = 0;
    for (let seed = 1; seed <= 120; seed++) {
      const rng = prng(seed);
      const max = [1, 7, 4096, 65536, 300_000][seed % 5]!;
      // Tiny chunks with small images only: every boundary is met either way, in less time.
      const sizes = max < 100 ? [1, 2, 3, 47, 3072] : [1, 2, 3, 47, 3072, 70_000, 300_001];
      const images = Array.from({ length: 1 + Math.floor(rng() * 3) }, () => crypto.randomBytes(sizes[Math.floor(rng() * sizes.length)]!));
      const bad = Math.floor(rng() * images.length);
      const texts = images.map((img) => img.toString('base64'));
      const at = Math.floor(rng() * (texts[bad]!.length + 1));
      texts[bad] = `${texts[bad]!.slice(0, at)}${'!#%'[seed % 3]}${texts[bad]!.slice(at)}`;
      const body = `{"created":1,"data":[${texts.map((t) => `{"media_type":"image/png","b64_json":"${t}"}`).join(',')}],"usage":{"cost_rub":2.5}}`;
      const { sink, error } = await decode(body, randomSizes(seed, max));
      assert.ok(error instanceof ResponseFormatError, `seed ${seed}: ${String(error)}`);
      const decoded = [...sink.images.keys()];
      assert.deepEqual(
        decoded,
        Array.from({ length: bad }, (_, i) => i),
        `seed ${seed}: the images before the bad one are decoded`,
      );
      for (const i of decoded) assert.ok(sink.images.get(i)!.equals(images[i]!));
      assert.equal(sink.text(), withoutImages(body, decoded), `seed ${seed} (image ${bad}, at ${at}, chunks up to ${max})`);
      cases++;
    }
    assert.equal(cases, 120);
  });

  it('an answer cut anywhere (in an image, between images, in the JSON after them): kept byte-equal', async () => {
    const images = [crypto.randomBytes(5000), crypto.randomBytes(7)];
    const body = `{"data":[${images.map((img) => `{"b64_json":"${img.toString('base64')}"}`).join(',')}],"usage":{"cost_rub":1}}`;
    for (let cut = 1; cut < body.length; cut += cut < 40 ? 1 : 97) {
      const part = body.slice(0, cut);
      const { sink, error } = await decode(part, randomSizes(cut, 512));
      assert.ok(error instanceof ResponseFormatError, `cut ${cut}: ${String(error)}`);
      assert.equal(sink.text(), withoutImages(part, [...sink.images.keys()]), `cut at ${cut}`);
    }
  });

  it('escapes in the failing image are kept as the characters they stand for', async () => {
    const image = crypto.randomBytes(30_000);
    const text = image.toString('base64');
    const escaped = `${text.slice(0, 20_000).replaceAll('/', '\\/')}\\u0041!${text.slice(20_000)}`;
    const body = `{"data":[{"b64_json":"${escaped}"}]}`;
    const { sink } = await decode(body, randomSizes(3, 1000));
    const kept = sink.text();
    const content = kept.slice(kept.indexOf('"b64_json":"') + 12, kept.lastIndexOf('"'));
    assert.equal(content.replaceAll('\\/', '/').replace('\\u0041', 'A'), `${text.slice(0, 20_000)}A!${text.slice(20_000)}`);
  });

  describe('data URLs', () => {
    const image = crypto.randomBytes(9000);
    const header = 'data:image/webp;base64,';

    it('in b64_json, the header split at every byte: decoded, its media type a hint that media_type overrides', async () => {
      for (const mediaType of [undefined, 'image/png']) {
        const field = mediaType ? `"media_type":"${mediaType}",` : '';
        const body = `{"data":[{${field}"b64_json":"${header}${image.toString('base64')}"}]}`;
        for (let first = 1; first < 60; first++) {
          let n = 0;
          const sink = new KeepingSink();
          const meta = await decodePaidAnswer(
            chunked(Buffer.from(body), () => (n++ === 0 ? first : n < 6 ? n : 4096)),
            'application/json',
            sink,
          );
          assert.ok(sink.images.get(0)?.equals(image), `split after ${first}`);
          assert.equal(meta.images[0]!.mediaType, mediaType ?? 'image/webp');
        }
      }
    });

    it('escaped (data:image\\/png) and in capitals; in url; a url that is an address is read as one, kept in the envelope', async () => {
      for (const [key, prefix] of [
        ['b64_json', 'data:image\\/png;base64,'],
        ['b64_json', 'DATA:image/png;BASE64,'],
        ['url', 'data:image/png;base64,'],
        ['url', 'data:image\\/png;charset=utf-8;base64,'],
      ] as const) {
        const body = `{"data":[{"${key}":"${prefix}${image.toString('base64').replaceAll('/', '\\/')}"}]}`;
        const sink = new KeepingSink();
        const meta = await decodePaidAnswer(chunked(Buffer.from(body), randomSizes(key.length, 300)), 'application/json', sink);
        assert.ok(sink.images.get(0)?.equals(image), `${key}: ${prefix}`);
        assert.equal(meta.images[0]!.mediaType, 'image/png');
      }
      // An address (escaped, split anywhere): no image is opened; the text stays in the envelope, kept whole.
      const body = '{"data":[{"url":"https:\\/\\/images.example\\/1.png?sig=a%2Fb","media_type":"image/png"}],"usage":{"cost_rub":1}}';
      for (const size of [1, 2, 5, 7, 1000]) {
        const sink = new KeepingSink();
        const meta = await decodePaidAnswer(
          chunked(Buffer.from(body), () => size),
          'application/json',
          sink,
        );
        assert.deepEqual(meta.images, [{ index: 0, url: 'https://images.example/1.png?sig=a%2Fb', mediaType: 'image/png' }], `chunks of ${size}`);
        assert.equal(sink.images.size, 0);
        assert.equal(sink.text(), body, 'kept whole');
      }
    });

    it('the same image in url and b64_json is decoded once; base64 that begins with "data" is no header', async () => {
      const body = `{"data":[{"url":"${header}${image.toString('base64')}","b64_json":"${image.toString('base64')}"}]}`;
      const sink = new KeepingSink();
      await decodePaidAnswer(
        chunked(Buffer.from(body), () => 1000),
        'application/json',
        sink,
      );
      assert.equal(sink.images.size, 1);
      // Bytes whose base64 begins with "data" (but no colon follows): an image, not a header.
      const starts = Buffer.concat([Buffer.from([0x75, 0xab, 0x5a]), crypto.randomBytes(30)]);
      assert.ok(starts.toString('base64').startsWith('data'));
      for (let first = 1; first < 6; first++) {
        let n = 0;
        const plain = new KeepingSink();
        await decodePaidAnswer(
          chunked(Buffer.from(`{"data":[{"b64_json":"${starts.toString('base64')}"}]}`), () => (n++ === 0 ? 20 + first : 1)),
          'application/json',
          plain,
        );
        assert.ok(plain.images.get(0)?.equals(starts));
      }
    });

    it('a data URL that is not base64, or without a comma: refused, and kept as it came', async () => {
      for (const value of ['data:image/svg+xml,%3Csvg%3E', `data:image/png;base64${'x'.repeat(2000)}`]) {
        const body = `{"data":[{"b64_json":"${value}"}],"usage":{"cost_rub":3}}`;
        const { sink, error } = await decode(body, randomSizes(value.length, 64));
        assert.ok(error instanceof ResponseFormatError, String(error));
        assert.match(error.message, /data URL/);
        assert.equal(sink.text(), body);
      }
    });
  });
});

describe('AnswerKeeper', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-keeper-');
  });
  afterEach(() => removeDir(dir));
  const create = async (name: string) => {
    const file = path.join(dir, `job-${name}`);
    return { file, handle: await open(file, 'wx') };
  };

  it('a small answer stays in memory: no file unless it is kept; discard leaves nothing', async () => {
    const keeper = new AnswerKeeper(create);
    await keeper.write(Buffer.from('{"data":[{"b64_json":"'));
    assert.deepEqual(await listFiles(dir), []);
    await keeper.discard();
    assert.deepEqual(await listFiles(dir), []);
    const kept = new AnswerKeeper(create);
    await kept.write(Buffer.from('{"data":[{"b64_json":"'));
    assert.deepEqual(await kept.keep('application/json; charset=utf-8'), { file: path.join(dir, 'job-answer.json') });
    assert.equal(await readFile(path.join(dir, 'job-answer.json'), 'utf8'), '{"data":[{"b64_json":"');
  });

  it('a large one streams to disk as it arrives, in order; kept, it is named by its first bytes', async () => {
    const keeper = new AnswerKeeper(create);
    const parts = Array.from({ length: 40 }, (_, i) => Buffer.alloc(64 * 1024, 0x41 + (i % 26)));
    for (const [i, part] of parts.entries()) {
      await keeper.write(part);
      // Past 256 KiB everything is on disk, not in memory.
      if (i >= 4) assert.equal((await stat(path.join(dir, 'job-answer.part'))).size, (i + 1) * part.length, `after ${i + 1} parts`);
    }
    const kept = await keeper.keep(undefined);
    assert.equal(kept?.file, path.join(dir, 'job-answer.txt'));
    assert.ok((await readFile(kept.file)).equals(Buffer.concat(parts)));
  });

  it('what arrived of an image: the base64 of the bytes written, in pieces that join', async () => {
    const image = crypto.randomBytes(7 * 1024 * 1024 + 5);
    const source = path.join(dir, 'image.part');
    await writeFile(source, image);
    const keeper = new AnswerKeeper(create);
    await keeper.write(Buffer.from('"'));
    await keeper.writeFileOf(source, 6 * 1024 * 1024 + 3, 'base64');
    await keeper.write(Buffer.from('AB!'));
    const kept = await keeper.keep('application/json');
    assert.equal(await readFile(kept!.file, 'latin1'), `"${image.subarray(0, 6 * 1024 * 1024 + 3).toString('base64')}AB!`);
  });
});
