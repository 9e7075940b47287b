// The streaming decoder reads every layout of a generation response byte-exactly, whatever the
// chunk boundaries (fixed sizes around base64's groups, and a fuzz of random layouts and chunks).
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { decodeGenerationStream } from '../../src/core/answers/generationStream';
import { ResponseFormatError } from '../../src/core/gateway/errors';
import type { GenerationResponseMeta } from '../../src/core/gateway/types';
import { prng } from '../../tools/emulator/png';
import {
  randomBytes,
  type Layout,
  buildBody,
  chunked,
  type RecordingWriter,
  RecordingSink,
  decodeAll,
  assertImages,
  expectFormatError,
  SIZES,
} from './support/generationBodies';

describe('decodeGenerationStream', function () {
  // Fuzzing is CPU-bound; keep it robust on a loaded machine.
  this.timeout(120_000);

  describe('byte-exact decoding of layouts', () => {
    const images = SIZES.map((n, i) => crypto.randomBytes(n + (i === 0 ? 0 : 0)));

    const layouts: [string, Partial<Layout>][] = [
      ['default order', {}],
      ['media_type first', { mediaType: 'first' }],
      ['media_type absent', { mediaType: 'absent' }],
      ['media_type null', { mediaType: 'null' }],
      ['usage first', { topOrder: ['usage', 'created', 'model', 'data'] }],
      ['usage last, data first', { topOrder: ['data', 'model', 'created', 'usage'] }],
      ['no created/model/usage', { created: undefined, model: undefined, usage: undefined }],
      ['unknown fields of every JSON type everywhere', { unknown: true }],
      ['escaped slashes \\/', { slashEscape: true }],
      ['\\n every 76 characters', { lineBreaks: { every: 76, style: 'escaped-n' } }],
      ['\\r\\n every 64 characters', { lineBreaks: { every: 64, style: 'escaped-rn' } }],
      ['\\t every 1000 characters', { lineBreaks: { every: 1000, style: 'escaped-t' } }],
      ['literal line breaks every 76', { lineBreaks: { every: 76, style: 'literal-n' } }],
      ['literal CRLF every 4', { lineBreaks: { every: 4, style: 'literal-crlf' } }],
      ['spaces every 3', { lineBreaks: { every: 3, style: 'space' } }],
      ['\\u00XX escapes of base64 characters', { uEscape: 0.05 }],
      ['pretty-printed', { pretty: true, unknown: true }],
      [
        'everything at once',
        {
          pretty: true,
          unknown: true,
          slashEscape: true,
          uEscape: 0.01,
          lineBreaks: { every: 76, style: 'escaped-n' },
          mediaType: 'first',
          topOrder: ['usage', 'data', 'model', 'created'],
        },
      ],
    ];

    for (const [name, layout] of layouts) {
      it(name, async () => {
        const built = buildBody(images, layout);
        for (const size of [65536, 1000, 7, { seed: 42, max: 65536 }]) {
          const { meta, sink } = await decodeAll(built.body, size);
          assert.deepEqual(meta, built.meta);
          assertImages(sink, images);
        }
      });
    }

    it('an empty data array', async () => {
      const { meta, sink } = await decodeAll(Buffer.from('{"data":[],"created":5}'));
      assert.deepEqual(meta, { created: 5, images: [] });
      assert.equal(sink.writers.length, 0);
    });

    it('UTF-8 in other strings, split across chunks', async () => {
      const img = crypto.randomBytes(10);
      const body = Buffer.from(
        `{"model":"модель-😀","note":"漢字","data":[{"b64_json":"${img.toString('base64')}","media_type":"image/png","revised_prompt":"Кот ✨"}]}`,
      );
      for (const size of [1, 2, 3, 5]) {
        const { meta, sink } = await decodeAll(body, size);
        assert.equal(meta.model, 'модель-😀');
        assertImages(sink, [img]);
      }
    });

    it('escaped key names and escaped strings in known fields', async () => {
      const img = crypto.randomBytes(100);
      const body = Buffer.from(
        `{"d\\u0061ta":[{"b64\\u005fjson":"${img.toString('base64')}","media\\u005Ftype":"image\\/webp"}],"model":"a\\"b\\\\c\\u00e9","usage":{"cost_r\\u0075b":1,"balance":-2.5E+1}}`,
      );
      const { meta, sink } = await decodeAll(body, 1);
      assert.deepEqual(meta, { model: 'a"b\\cé', usage: { cost_rub: 1, balance: -25 }, images: [{ index: 0, mediaType: 'image/webp' }] });
      assertImages(sink, [img]);
    });

    it('whitespace everywhere JSON allows it, and around the body', async () => {
      const img = crypto.randomBytes(31);
      const body = Buffer.from(
        ` \r\n\t{ "data" \n:\t[ \r\n { "b64_json"\n:\n"${img.toString('base64')}" , "media_type" : "image/jpeg" } \n, {"b64_json":""}\t] , "created" :\n7 }\n\n `,
      );
      const { meta, sink } = await decodeAll(body, 1);
      assert.deepEqual(meta, { created: 7, images: [{ index: 0, mediaType: 'image/jpeg' }, { index: 1 }] });
      assertImages(sink, [img, Buffer.alloc(0)]);
    });

    it('unpadded base64 and padding followed by whitespace', async () => {
      for (const [b64, hex] of [
        ['YQ', '61'],
        ['YWI', '6162'],
        ['YQ==  ', '61'],
        ['YWI=\\n', '6162'],
        ['Y Q = =', '61'],
        ['\\u0059Q\\u003d=', '61'],
      ]) {
        const body = Buffer.from(`{"data":[{"b64_json":"${b64}"}]}`);
        for (const size of [1, 100]) {
          const { sink } = await decodeAll(body, size);
          assert.equal(sink.writers[0]!.bytes().toString('hex'), hex, b64);
        }
      }
    });

    it('fields of unexpected types are ignored (usage, created, model, media_type)', async () => {
      const img = crypto.randomBytes(5);
      const body = Buffer.from(`{"usage":"free","created":"today","model":{"id":"m"},"data":[{"media_type":7,"b64_json":"${img.toString('base64')}"}]}`);
      const { meta, sink } = await decodeAll(body, 3);
      assert.deepEqual(meta, { images: [{ index: 0 }] });
      assertImages(sink, [img]);
    });

    it('usage in the other forms: numeric strings, a decimal comma, one figure missing', async () => {
      const img = crypto.randomBytes(7);
      const b64 = img.toString('base64');
      const cases: [string, GenerationResponseMeta['usage']][] = [
        ['{"cost_rub":"12.50","balance":"987.25"}', { cost_rub: 12.5, balance: 987.25 }],
        ['{"cost_rub":" 3,5 ","balance":10}', { cost_rub: 3.5, balance: 10 }],
        ['{"cost_rub":4}', { cost_rub: 4 }],
        ['{"balance":"99"}', { balance: 99 }],
        ['{"cost_rub":"free","balance":"7"}', { balance: 7 }],
        ['{"cost_rub":null,"balance":5}', { balance: 5 }],
        ['{"tokens":3}', undefined],
      ];
      for (const [usage, expected] of cases) {
        for (const size of [1, 1000]) {
          const { meta } = await decodeAll(Buffer.from(`{"data":[{"b64_json":"${b64}"}],"usage":${usage}}`), size);
          assert.deepEqual(meta.usage, expected, `${usage} in chunks of ${size}`);
        }
      }
    });

    it('every chunk boundary around an escape inside escape-dense base64', async () => {
      const img = crypto.randomBytes(60_000);
      const b64 = img.toString('base64');
      const esc = (text: string): string => text.replace(/\//g, '\\/');
      const hex = (ch: string): string => ch.charCodeAt(0).toString(16).padStart(4, '0');
      const slash = b64.indexOf('/', 40_000);
      // [position, characters replaced, raw JSON text put there]
      const cases: [number, number, string][] = [
        [40_001, 0, '\\n'],
        [40_001, 0, '\\r\\n'],
        [40_001, 0, '\\t'],
        [40_001, 0, ' '],
        [40_001, 0, '\n'],
        [40_001, 1, '\\u' + hex(b64[40_001]!)],
        [40_001, 1, '\\u' + hex(b64[40_001]!).toUpperCase()],
        [slash, 1, '\\u002F'],
        [slash, 1, '\\/'],
      ];
      for (const [pos, replaced, raw] of cases) {
        const head = `{"data":[{"b64_json":"${esc(b64.slice(0, pos))}`;
        const body = Buffer.from(`${head}${raw}${esc(b64.slice(pos + replaced))}"}]}`, 'latin1');
        for (let k = head.length - 3; k <= head.length + raw.length + 2; k++) {
          const sink = new RecordingSink();
          async function* three(): AsyncGenerator<Uint8Array> {
            yield body.subarray(0, k);
            yield body.subarray(k, k + 3);
            yield body.subarray(k + 3);
          }
          await decodeGenerationStream(three(), sink);
          assert.ok(sink.writers[0]!.bytes().equals(img), `${JSON.stringify(raw)} split at ${k - head.length}`);
        }
      }
    });

    it('waits for each write (backpressure) and never overlaps writes', async () => {
      const imgs = [crypto.randomBytes(300_000), crypto.randomBytes(70_000)];
      const built = buildBody(imgs, { slashEscape: true });
      const { sink } = await decodeAll(built.body, { seed: 3, max: 65536 }, true);
      assertImages(sink, imgs);
    });

    it('does not hold on to large writes: each write is at most ~256 KiB', async () => {
      const img = crypto.randomBytes(3_000_000);
      const built = buildBody([img]);
      const sink = new RecordingSink();
      let max = 0;
      const inner = sink.open.bind(sink);
      sink.open = (i: number) => {
        const w = inner(i) as RecordingWriter;
        const write = w.write.bind(w);
        w.write = (b: Buffer) => {
          max = Math.max(max, b.length);
          return write(b);
        };
        return w;
      };
      // One 4 MB chunk: the decoder slices it.
      await decodeGenerationStream(chunked(built.body, 4 << 20), sink);
      assertImages(sink, [img]);
      assert.ok(max <= 256 * 1024, `largest write ${max}`);
    });
  });

  describe('fuzz: random images, layouts and chunk boundaries', () => {
    function randomCase(seed: number): { images: Buffer[]; layout: Partial<Layout> } {
      const rng = prng(seed);
      const count = Math.floor(rng() * 4) + (rng() < 0.1 ? 0 : 1);
      const images: Buffer[] = [];
      for (let i = 0; i < count; i++) {
        const r = rng();
        const n = r < 0.3 ? Math.floor(rng() * 8) : r < 0.9 ? Math.floor(rng() * 5000) : 60_000 + Math.floor(rng() * 80_000);
        images.push(randomBytes(rng, n));
      }
      const orders: Layout['topOrder'][] = [
        ['created', 'data', 'model', 'usage'],
        ['usage', 'model', 'data', 'created'],
        ['data', 'usage', 'created', 'model'],
        ['model', 'created', 'usage', 'data'],
      ];
      const styles = ['escaped-n', 'escaped-rn', 'literal-n', 'literal-crlf', 'space', 'escaped-t'] as const;
      const layout: Partial<Layout> = {
        topOrder: orders[Math.floor(rng() * orders.length)],
        mediaType: (['first', 'last', 'absent', 'null'] as const)[Math.floor(rng() * 4)],
        unknown: rng() < 0.5,
        slashEscape: rng() < 0.3,
        uEscape: rng() < 0.2 ? rng() * 0.1 : 0,
        pretty: rng() < 0.3,
        lineBreaks: rng() < 0.3 ? { every: 1 + Math.floor(rng() * 100), style: styles[Math.floor(rng() * styles.length)]! } : undefined,
        mediaTypes: images.map(() => (['image/png', 'image/jpeg', 'image/webp'] as const)[Math.floor(rng() * 3)]),
      };
      return { images, layout };
    }

    it('300 seeds, random chunk sizes from 1 byte to 64 KiB', async () => {
      for (let seed = 1; seed <= 300; seed++) {
        const { images, layout } = randomCase(seed);
        const built = buildBody(images, layout, seed);
        const max = [16, 1000, 65536][seed % 3]!;
        const { meta, sink } = await decodeAll(built.body, { seed: seed * 7919, max }, seed % 5 === 0);
        try {
          assert.deepEqual(meta, built.meta);
          assertImages(sink, images);
        } catch (e) {
          throw new Error(`seed ${seed}: ${(e as Error).message}`, { cause: e });
        }
      }
    });

    it('1-byte chunks throughout', async () => {
      for (let seed = 1000; seed < 1040; seed++) {
        const { images, layout } = randomCase(seed);
        const small = images.map((img) => img.subarray(0, 3000));
        const built = buildBody(small, layout, seed);
        const { meta, sink } = await decodeAll(built.body, 1);
        try {
          assert.deepEqual(meta, built.meta);
          assertImages(sink, small);
        } catch (e) {
          throw new Error(`seed ${seed}: ${(e as Error).message}`, { cause: e });
        }
      }
    });

    it('truncated at random points: ResponseFormatError, no incomplete image closed, aborts called', async () => {
      for (let seed = 1; seed <= 60; seed++) {
        const { images, layout } = randomCase(seed + 5000);
        const built = buildBody(images, layout, seed);
        const last = built.body.lastIndexOf('}');
        const rng = prng(seed);
        for (let k = 0; k < 15; k++) {
          const cut = k === 0 ? last : Math.floor(rng() * last);
          const sink = await expectFormatError(built.body.subarray(0, cut), /ended early|empty/, { seed: seed + k, max: 4096 });
          try {
            sink.writers.forEach((w, i) => {
              const complete = built.closeQuotes[i]! < cut;
              assert.equal(w.closed, complete, `image ${i} closed iff its string ended (cut ${cut})`);
              if (complete) assert.ok(w.bytes().equals(images[i]!));
              else {
                assert.equal(w.abortCount, 1, `image ${i} aborted once`);
                assert.ok(w.aborted instanceof ResponseFormatError);
                const got = w.bytes();
                assert.ok(got.equals(images[i]!.subarray(0, got.length)), 'what was written is a prefix');
              }
            });
            // Images whose string had not started are never opened.
            const started = built.closeQuotes.filter((q, i) => q < cut || sink.writers[i] !== undefined).length;
            assert.equal(sink.writers.length, started);
          } catch (e) {
            throw new Error(`seed ${seed}, cut ${cut}/${built.body.length}: ${(e as Error).message}`, { cause: e });
          }
        }
      }
    });
  });
});
