import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { decodeGenerationStream, type ImageSink, type ImageWriter } from '../../src/core/answers/generationStream';
import { CancelledError, ResponseFormatError } from '../../src/core/gateway/errors';
import type { GenerationResponseMeta } from '../../src/core/gateway/types';
import { prng } from '../../tools/emulator/png';

// ---------------------------------------------------------------------------------------------
// Helpers

function randomBytes(rng: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rng() * 256);
  return b;
}

/** Unknown values of every JSON type, with strings full of characters that matter to a scanner. */
const NASTY: Record<string, unknown> = {
  str: 'quote " backslash \\ brace } bracket ] colon : comma , slash / é 漢字 😀 \n\t\u0001 \u2028',
  num: -12.5e-3,
  zero: 0,
  big: 1.7976931348623157e308,
  yes: true,
  no: false,
  nothing: null,
  arr: [1, 'a"]}\\', [[], [{}]], { x: [null, { y: '\\"}]' }] }, -0.5, 1e-7],
  obj: { a: { b: { c: ['}', ']', '"', '\\', '{', '['] } }, empty: {}, 'k"e}y': 1, b64_json: 'not an image', url: 'x' },
  emptyStr: '',
  emptyArr: [],
};

interface Layout {
  /** Order of the top-level fields. Unknown fields (when on) go first, between and last anyway. */
  topOrder: ('created' | 'model' | 'data' | 'usage')[];
  mediaType: 'first' | 'last' | 'absent' | 'null';
  unknown: boolean;
  slashEscape: boolean;
  /** Insert a break after every `every` base64 characters. */
  lineBreaks?: { every: number; style: 'escaped-n' | 'escaped-rn' | 'literal-n' | 'literal-crlf' | 'space' | 'escaped-t' };
  /** Probability of writing a base64 character as \u00XX. */
  uEscape: number;
  pretty: boolean;
  created?: number;
  model?: string;
  usage?: { cost_rub: number; balance: number };
  mediaTypes: (string | undefined)[];
}

const DEFAULT_LAYOUT: Layout = {
  topOrder: ['created', 'data', 'model', 'usage'],
  mediaType: 'last',
  unknown: false,
  slashEscape: false,
  uEscape: 0,
  pretty: false,
  created: 1713833628,
  model: 'test-model',
  usage: { cost_rub: 12.5, balance: 987.25 },
  mediaTypes: [],
};

/** The content of a JSON string holding the base64 of `bytes`, encoded as the layout asks. */
function encodeBase64(bytes: Buffer, layout: Layout, rng: () => number): string {
  const b64 = bytes.toString('base64');
  if (!layout.slashEscape && !layout.lineBreaks && layout.uEscape === 0) return b64;
  const out: string[] = [];
  for (let i = 0; i < b64.length; i++) {
    const ch = b64[i]!;
    if (layout.uEscape > 0 && rng() < layout.uEscape) {
      const hex = ch.charCodeAt(0).toString(16).padStart(4, '0');
      out.push('\\u' + (rng() < 0.5 ? hex : hex.toUpperCase()));
    } else if (ch === '/' && layout.slashEscape) out.push('\\/');
    else out.push(ch);
    const lb = layout.lineBreaks;
    if (lb && (i + 1) % lb.every === 0 && i + 1 < b64.length) {
      out.push({ 'escaped-n': '\\n', 'escaped-rn': '\\r\\n', 'literal-n': '\n', 'literal-crlf': '\r\n', space: ' ', 'escaped-t': '\\t' }[lb.style]);
    }
  }
  return out.join('');
}

interface Built {
  body: Buffer;
  /** Offset of the closing quote of each image's b64_json string. */
  closeQuotes: number[];
  meta: GenerationResponseMeta;
}

/** Builds a generation response body with the given layout; images are placed via markers. */
function buildBody(images: Buffer[], layoutIn: Partial<Layout> = {}, seed = 1): Built {
  const layout: Layout = { ...DEFAULT_LAYOUT, ...layoutIn };
  const rng = prng(seed);
  const data = images.map((_, i) => {
    const el: Record<string, unknown> = {};
    const media = layout.mediaTypes[i] ?? 'image/png';
    if (layout.unknown) el.revised_prompt = NASTY.str;
    if (layout.mediaType === 'first') el.media_type = media;
    if (layout.mediaType === 'null') el.media_type = null;
    if (layout.unknown) el.extra = NASTY;
    el.b64_json = `@@B64_${i}@@`;
    if (layout.unknown) el.list = NASTY.arr;
    if (layout.mediaType === 'last') el.media_type = media;
    if (layout.unknown) el.z = 0.25;
    return el;
  });
  const top: Record<string, unknown> = {};
  if (layout.unknown) top.id = 'gen-"1"';
  for (const key of layout.topOrder) {
    if (key === 'created' && layout.created !== undefined) top.created = layout.created;
    if (key === 'model' && layout.model !== undefined) top.model = layout.model;
    if (key === 'data') top.data = data;
    if (key === 'usage' && layout.usage !== undefined) {
      top.usage = layout.unknown ? { tokens: { a: [1, 2] }, ...layout.usage, note: 'x}' } : layout.usage;
    }
    if (layout.unknown) top[`unknown_after_${key}`] = NASTY;
  }
  const text = layout.pretty ? JSON.stringify(top, null, 2) : JSON.stringify(top);
  const pieces = text.split(/"@@B64_(\d+)@@"/);
  const parts: Buffer[] = [];
  const closeQuotes: number[] = [];
  let offset = 0;
  for (let p = 0; p < pieces.length; p++) {
    let piece: Buffer;
    if (p % 2 === 0) piece = Buffer.from(pieces[p]!, 'utf8');
    else {
      piece = Buffer.from(`"${encodeBase64(images[Number(pieces[p])]!, layout, rng)}"`, 'latin1');
      closeQuotes[Number(pieces[p])] = offset + piece.length - 1;
    }
    parts.push(piece);
    offset += piece.length;
  }
  const meta: GenerationResponseMeta = {
    images: images.map((_, i) => {
      if (layout.mediaType === 'absent' || layout.mediaType === 'null') return { index: i };
      return { index: i, mediaType: layout.mediaTypes[i] ?? 'image/png' };
    }),
  };
  if (layout.created !== undefined) meta.created = layout.created;
  if (layout.model !== undefined) meta.model = layout.model;
  if (layout.usage !== undefined) meta.usage = layout.usage;
  return { body: Buffer.concat(parts), closeQuotes, meta };
}

/** Yields `body` in chunks: a fixed size, or random sizes from 1 byte to `max` (skewed small). */
async function* chunked(body: Buffer, size: number | { seed: number; max: number }): AsyncGenerator<Uint8Array> {
  if (typeof size === 'number') {
    for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
    return;
  }
  const rng = prng(size.seed);
  let i = 0;
  while (i < body.length) {
    const r = rng();
    const n = 1 + Math.floor((r < 0.3 ? r * r * r : r) * size.max);
    // Some chunks are Uint8Array, not Buffer, as a WHATWG stream would give.
    const piece = body.subarray(i, i + n);
    yield rng() < 0.2 ? new Uint8Array(piece) : piece;
    i += n;
  }
}

class RecordingWriter implements ImageWriter {
  readonly chunks: Buffer[] = [];
  closed = false;
  aborted: Error | undefined;
  abortCount = 0;
  inFlight = 0;

  constructor(
    readonly index: number,
    private readonly asyncWrites: boolean,
  ) {}

  write(bytes: Buffer): void | Promise<void> {
    assert.ok(Buffer.isBuffer(bytes), 'write gets a Buffer');
    assert.ok(!this.closed && !this.aborted, 'write after close/abort');
    assert.equal(this.inFlight, 0, 'overlapping writes');
    this.chunks.push(Buffer.from(bytes)); // copy: the decoder must not rely on this
    if (!this.asyncWrites) return;
    this.inFlight++;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        this.inFlight--;
        resolve();
      }),
    );
  }

  async close(): Promise<void> {
    assert.ok(!this.closed && !this.aborted, 'close after close/abort');
    this.closed = true;
  }

  async abort(reason: Error): Promise<void> {
    assert.ok(!this.closed, 'abort after close');
    this.abortCount++;
    this.aborted = reason;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

class RecordingSink implements ImageSink {
  readonly writers: RecordingWriter[] = [];

  constructor(private readonly asyncWrites = false) {}

  open(index: number): ImageWriter | Promise<ImageWriter> {
    assert.equal(index, this.writers.length, 'images are opened once each, in index order');
    const w = new RecordingWriter(index, this.asyncWrites);
    this.writers.push(w);
    return index % 2 === 0 ? w : Promise.resolve(w);
  }
}

async function decodeAll(
  body: Buffer,
  size: number | { seed: number; max: number } = 65536,
  asyncWrites = false,
): Promise<{ meta: GenerationResponseMeta; sink: RecordingSink }> {
  const sink = new RecordingSink(asyncWrites);
  const meta = await decodeGenerationStream(chunked(body, size), sink);
  return { meta, sink };
}

function assertImages(sink: RecordingSink, images: Buffer[]): void {
  assert.equal(sink.writers.length, images.length, 'one writer per image');
  images.forEach((img, i) => {
    const w = sink.writers[i]!;
    assert.ok(w.closed, `image ${i} closed`);
    assert.equal(w.aborted, undefined, `image ${i} not aborted`);
    const got = w.bytes();
    assert.ok(got.equals(img), `image ${i}: ${got.length} bytes decoded, ${img.length} expected, content ${got.length === img.length ? 'differs' : ''}`);
  });
}

async function expectFormatError(body: Buffer, pattern: RegExp, size: number | { seed: number; max: number } = 65536): Promise<RecordingSink> {
  const sink = new RecordingSink();
  await assert.rejects(decodeGenerationStream(chunked(body, size), sink), (e: unknown) => {
    assert.ok(e instanceof ResponseFormatError, `ResponseFormatError expected, got ${String(e)}`);
    assert.match(e.message, pattern);
    return true;
  });
  for (const w of sink.writers) {
    assert.ok(w.closed !== (w.aborted !== undefined), `writer ${w.index} is either closed or aborted`);
    assert.ok(w.abortCount <= 1);
  }
  return sink;
}

/** Sizes around every remainder mod 3 and mod 4-char groups, plus some larger ones. */
const SIZES = [0, 1, 2, 3, 4, 5, 6, 7, 47, 48, 49, 3071, 3072, 3073, 65535, 65536, 65537, 200_001];

// ---------------------------------------------------------------------------------------------

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

  describe('invalid base64', () => {
    const cases: [string, string, RegExp][] = [
      ['an invalid character', 'YWJj!ZGVm', /invalid character '!'/],
      ['a non-ASCII byte', 'YWJj\u00e9ZGVm', /invalid character byte 0xC3/],
      ['padding in the middle', 'YQ==YWJj', /padding/],
      ['padding in the middle, spaced', 'YQ== YWJj', /padding/],
      ['URL-safe alphabet', 'A-B_', /invalid character '-'/],
      ['a length of 4n+1', 'YWJjZ', /length/],
      ['one = after two characters', 'YQ=', /padding/],
      ['three =', 'YQ===', /padding/],
      ['= alone', '=', /padding/],
      ['an escaped quote', 'YWJj\\"ZGVm', /quote/],
      ['an escaped backslash', 'YWJj\\\\ZGVm', /escape/],
      ['\\b escape', 'YW\\bJj', /escape/],
      ['\\u escape of a non-base64 character', 'YWJj\\u0021ZGVm', /invalid character '!'/],
      ['\\u escape of a non-ASCII character', 'YWJj\\u00e9ZGVm', /U\+00E9/],
      ['\\u escape with a bad hex digit', 'YWJj\\u00g1', /hex/],
      ['a raw control character', 'YWJj\u0001ZGVm', /invalid character byte 0x01/],
    ];
    for (const [name, b64, pattern] of cases) {
      it(name, async () => {
        const body = Buffer.from(`{"data":[{"b64_json":"${b64}","media_type":"image/png"}]}`, 'utf8');
        for (const size of [1, 2, 5, 1000]) {
          const sink = await expectFormatError(body, pattern, size);
          assert.equal(sink.writers.length, 1);
          assert.equal(sink.writers[0]!.closed, false);
          assert.equal(sink.writers[0]!.abortCount, 1);
        }
      });
    }

    it('an invalid character deep inside a large image (fast path rejects, slow path reports)', async () => {
      const good = crypto.randomBytes(600_000).toString('base64');
      for (const bad of ['!', '-', '_', '=', '.', '\u0080']) {
        const at = 400_001 + bad.length;
        const b64 = good.slice(0, at) + bad + good.slice(at + 1);
        const body = Buffer.from(`{"data":[{"b64_json":"${crypto.randomBytes(3000).toString('base64')}"},{"b64_json":"${b64}"}]}`, 'latin1');
        const sink = await expectFormatError(body, /data\[1\]\.b64_json.*not valid base64/, { seed: bad.charCodeAt(0), max: 65536 });
        assert.equal(sink.writers[0]!.closed, true, 'the first image completed');
        assert.equal(sink.writers[1]!.abortCount, 1);
      }
    });

    it('the same with escaped slashes and line breaks (dense escape path)', async () => {
      const good = crypto.randomBytes(300_000).toString('base64').replace(/\//g, '\\/');
      const at = 200_000;
      for (const bad of ['!', '\\"', '\\\\', '\\b']) {
        const b64 = good.slice(0, at) + bad + good.slice(at);
        const body = Buffer.from(`{"data":[{"b64_json":"${b64}"}]}`, 'latin1');
        await expectFormatError(body, /not valid base64/, 65536);
      }
    });
  });

  describe('invalid responses', () => {
    const cases: [string, string, RegExp][] = [
      ['a top-level array', '[{"b64_json":"YQ=="}]', /array, not the expected object/],
      ['a top-level string', '"hello"', /a string, not the expected JSON object/],
      ['a top-level number', '42', /a number, not the expected JSON object/],
      ['HTML', '<html><body>Bad gateway</body></html>', /not JSON: it starts with '<'/],
      ['an empty body', '', /empty/],
      ['whitespace only', '  \n ', /ended early/],
      ['data is an object', '{"data":{"b64_json":"YQ=="}}', /`data`.*an object, not an array/],
      ['data is null', '{"data":null}', /`data`.*null, not an array/],
      ['data is a string', '{"data":"x"}', /`data`.*a string, not an array/],
      ['no data', '{"created":1}', /no `data` array/],
      ['an element that is not an object', '{"data":["YQ=="]}', /data\[0\].*a string, not an object/],
      ['an element without b64_json', '{"data":[{"b64_json":"YQ=="},{"media_type":"image/png"}]}', /data\[1\].*no b64_json/],
      ['an empty element', '{"data":[{}]}', /data\[0\].*no b64_json/],
      ['a url element without an address', '{"data":[{"url":null,"revised_prompt":"p"}]}', /data\[0\] of the gateway's response has no b64_json/],
      ['b64_json null', '{"data":[{"b64_json":null}]}', /b64_json.*null, not a string/],
      ['b64_json a number', '{"data":[{"b64_json":5}]}', /b64_json.*a number, not a string/],
      ['b64_json twice', '{"data":[{"b64_json":"YQ==","b64_json":"YQ=="}]}', /twice/],
      ['data twice', '{"data":[],"data":[]}', /twice/],
      ['data after the object', '{"data":[]} x', /after the JSON object/],
      ['two objects', '{"data":[]}{"data":[]}', /after the JSON object/],
      ['a missing comma', '{"data":[] "created":1}', /expected , or }/],
      ['a trailing comma', '{"data":[],}', /expected a key/],
      ['a trailing comma in an array', '{"data":[{"b64_json":""},]}', /not valid JSON/],
      ['a missing colon', '{"data" []}', /expected :/],
      ['a bad literal in an unknown field', '{"x":tru,"data":[]}', /expected 'true'/],
      ['a bad number in an unknown field', '{"x":01,"data":[]}', /invalid number|expected/],
      ['a bad number 1.', '{"x":1.,"data":[]}', /invalid number/],
      ['a bad number -', '{"x":-,"data":[]}', /invalid number/],
      ['an empty slot in an unknown array', '{"x":[1,,2],"data":[]}', /not valid JSON/],
      ['a bad escape in an unknown string', '{"x":"a\\xb","data":[]}', /invalid escape/],
      ['a bad \\u escape in an unknown string', '{"x":"\\u12G4","data":[]}', /invalid \\u escape/],
      ['a control character in the model', '{"model":"a\u0001b","data":[]}', /invalid JSON string/],
      ['unbalanced brackets', '{"x":[1,2},"data":[]}', /not valid JSON/],
      ['a single quote string', "{'data':[]}", /expected a key or }/],
    ];
    for (const [name, text, pattern] of cases) {
      it(name, async () => {
        for (const size of [1, 3, 1000]) await expectFormatError(Buffer.from(text), pattern, size);
      });
    }

    it('an error after a complete image leaves it closed; the incomplete one is aborted', async () => {
      const a = crypto.randomBytes(1000);
      const body = Buffer.from(`{"data":[{"b64_json":"${a.toString('base64')}"},{"b64_json":"YWJj","media_type":"image/png" "x":1}]}`);
      for (const size of [1, 17, 5000]) {
        const sink = await expectFormatError(body, /expected , or }/, size);
        assert.ok(sink.writers[0]!.closed);
        assert.ok(sink.writers[0]!.bytes().equals(a));
        // The second string ended validly before the syntax error: it was closed too; the caller decides.
        assert.ok(sink.writers[1]!.closed);
      }
    });

    it('a url element after valid images: its address is read (the client downloads it), no image is opened for it', async () => {
      const body = Buffer.from('{"data":[{"b64_json":"YQ=="},{"url":"https://example.com/a.png"}]}');
      for (const size of [1, 5, 1000]) {
        const { meta, sink } = await decodeAll(body, size);
        assert.equal(sink.writers.length, 1);
        assert.deepEqual(meta.images, [{ index: 0 }, { index: 1, url: 'https://example.com/a.png' }]);
      }
    });

    it('an element with an empty url and no b64_json has no image', async () => {
      await expectFormatError(Buffer.from('{"data":[{"url":" "}]}'), /data\[0\] of the gateway's response has no b64_json/, 3);
    });

    it('a url that is an address and b64_json: the bytes win, nothing to download', async () => {
      const { meta, sink } = await decodeAll(Buffer.from('{"data":[{"url":"https://example.com/a.png","b64_json":"YQ=="}]}'), 4);
      assertImages(sink, [Buffer.from('a')]);
      assert.deepEqual(meta.images, [{ index: 0 }]);
    });

    it('an address with an escaped quote, a \\u escape split over chunks, or longer than 64 KiB', async () => {
      const body = Buffer.from('{"data":[{"url":"https://example.com/a\\"b\\u0041.png"}]}');
      for (const size of [1, 2, 3, 17, 17 + 6, 1000]) {
        const { meta } = await decodeAll(body, size);
        assert.equal(meta.images[0]?.url, 'https://example.com/a"bA.png', `chunks of ${size}`);
      }
      await expectFormatError(
        Buffer.from(`{"data":[{"url":"https://example.com/${'a'.repeat(70_000)}"}]}`),
        /data\[0\]\.url in the gateway's response is too long/,
        4096,
      );
    });

    it('deep nesting of unknown values is fine up to a limit, then an error, never a stack overflow', async () => {
      const ok = `{"x":${'['.repeat(5000)}${']'.repeat(5000)},"data":[{"b64_json":"YQ=="}]}`;
      const { sink } = await decodeAll(Buffer.from(ok), 100);
      assertImages(sink, [Buffer.from('a')]);
      const deep = `{"x":${'['.repeat(200_000)}`;
      await expectFormatError(Buffer.from(deep), /too deeply/);
    });
  });

  describe('errors of the body, the sink and the signal', () => {
    async function* stalling(first: Buffer): AsyncGenerator<Uint8Array> {
      yield first;
      await new Promise(() => undefined); // never resolves
    }

    it('an abort while waiting for the body: the open writer is aborted, the reason is thrown', async () => {
      const img = crypto.randomBytes(30_000).toString('base64');
      const first = Buffer.from(`{"data":[{"b64_json":"${img.slice(0, 20_000)}`);
      const controller = new AbortController();
      const sink = new RecordingSink();
      const reason = new Error('stop now');
      const promise = decodeGenerationStream(stalling(first), sink, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 20);
      await assert.rejects(promise, (e) => e === reason);
      assert.equal(sink.writers.length, 1);
      assert.equal(sink.writers[0]!.abortCount, 1);
      assert.equal(sink.writers[0]!.aborted, reason);
      assert.equal(sink.writers[0]!.closed, false);
    });

    it('an abort without a reason gives a CancelledError', async () => {
      const controller = new AbortController();
      const sink = new RecordingSink();
      const promise = decodeGenerationStream(stalling(Buffer.from('{"data":[{"b64_json":"YWJj')), sink, { signal: controller.signal });
      setTimeout(() => controller.abort(), 10);
      await assert.rejects(promise, CancelledError);
      assert.equal(sink.writers[0]!.abortCount, 1);
    });

    it('an already aborted signal: nothing is read or opened', async () => {
      const controller = new AbortController();
      controller.abort();
      let read = false;
      async function* body(): AsyncGenerator<Uint8Array> {
        read = true;
        yield Buffer.from('{"data":[]}');
      }
      const sink = new RecordingSink();
      await assert.rejects(decodeGenerationStream(body(), sink, { signal: controller.signal }), CancelledError);
      assert.equal(read, false);
      assert.equal(sink.writers.length, 0);
    });

    it('an abort during a slow write stops decoding', async () => {
      const imgs = [crypto.randomBytes(2_000_000)];
      const built = buildBody(imgs);
      const controller = new AbortController();
      let writes = 0;
      let aborted: Error | undefined;
      const sink: ImageSink = {
        open: () => ({
          write: async () => {
            if (++writes === 3) controller.abort(new Error('user'));
            await new Promise((r) => setTimeout(r, 1));
          },
          close: async () => assert.fail('must not close'),
          abort: async (r) => {
            aborted = r;
          },
        }),
      };
      await assert.rejects(decodeGenerationStream(chunked(built.body, 65536), sink, { signal: controller.signal }), /user/);
      assert.equal(writes, 3);
      assert.match(String(aborted), /user/);
    });

    it('a body that fails mid-stream: the error passes through and the writer is aborted', async () => {
      const failure = new Error('socket hang up');
      async function* body(): AsyncGenerator<Uint8Array> {
        yield Buffer.from('{"data":[{"b64_json":"YWJj');
        throw failure;
      }
      const sink = new RecordingSink();
      await assert.rejects(decodeGenerationStream(body(), sink), (e) => e === failure);
      assert.equal(sink.writers[0]!.aborted, failure);
    });

    it('a sink whose write fails: that error is thrown, the writer aborted, the body stopped', async () => {
      const failure = new Error('disk full');
      let returned = false;
      const built = buildBody([crypto.randomBytes(1_000_000)]);
      async function* body(): AsyncGenerator<Uint8Array> {
        try {
          for (let i = 0; i < built.body.length; i += 65536) yield built.body.subarray(i, i + 65536);
        } finally {
          returned = true;
        }
      }
      let abortedWith: Error | undefined;
      const sink: ImageSink = {
        open: async () => ({
          write: () => {
            throw failure;
          },
          close: async () => undefined,
          abort: async (r) => {
            abortedWith = r;
          },
        }),
      };
      await assert.rejects(decodeGenerationStream(body(), sink), (e) => e === failure);
      assert.equal(abortedWith, failure);
      await new Promise((r) => setImmediate(r));
      assert.ok(returned, 'the body iterator was returned');
    });

    it('a sink whose close fails: the writer is aborted and the error thrown', async () => {
      const failure = new Error('rename failed');
      let aborted = 0;
      const sink: ImageSink = {
        open: () => ({
          write: () => undefined,
          close: async () => {
            throw failure;
          },
          abort: async () => {
            aborted++;
          },
        }),
      };
      await assert.rejects(decodeGenerationStream(chunked(Buffer.from('{"data":[{"b64_json":"YQ=="}]}'), 4), sink), (e) => e === failure);
      assert.equal(aborted, 1);
    });
  });

  describe('size', () => {
    it('streams a ~200 MB body generated lazily with bounded memory', async function () {
      this.timeout(120_000);
      // A block of base64 text repeated; each image is REPEATS blocks. A 20 MB unknown string comes first.
      const blockBytes = crypto.randomBytes(768 * 1024);
      const block = Buffer.from(blockBytes.toString('base64'), 'latin1'); // 1 MiB of base64
      const REPEATS = 60;
      const IMAGES = 3;
      const head = Buffer.from('{"created":1,"note":"');
      const filler = Buffer.alloc(1 << 20, 'x');
      async function* body(): AsyncGenerator<Uint8Array> {
        const rng = prng(9);
        // Yields `buf` in random chunks (1 B .. 128 KiB).
        function* pieces(buf: Buffer): Generator<Buffer> {
          for (let i = 0; i < buf.length;) {
            const n = 1 + Math.floor(rng() * 128 * 1024);
            yield buf.subarray(i, i + n);
            i += n;
          }
        }
        yield head;
        for (let k = 0; k < 20; k++) yield* pieces(filler);
        yield Buffer.from('","data":[');
        for (let i = 0; i < IMAGES; i++) {
          yield Buffer.from(`${i ? ',' : ''}{"b64_json":"`);
          for (let r = 0; r < REPEATS; r++) yield* pieces(block);
          yield Buffer.from(`","media_type":"image/png"}`);
        }
        yield Buffer.from('],"usage":{"cost_rub":3,"balance":4}}');
      }
      const expectedHash = crypto.createHash('sha256');
      for (let r = 0; r < REPEATS; r++) expectedHash.update(blockBytes);
      const expected = expectedHash.digest('hex');

      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      const counts: number[] = [];
      const hashes: string[] = [];
      let writes = 0;
      const sink: ImageSink = {
        open: (index) => {
          const hash = crypto.createHash('sha256');
          counts[index] = 0;
          return {
            write: (bytes) => {
              counts[index]! += bytes.length;
              hash.update(bytes);
              if (++writes % 64 === 0) peak = Math.max(peak, process.memoryUsage().rss);
            },
            close: async () => {
              hashes[index] = hash.digest('hex');
            },
            abort: async () => assert.fail('no abort'),
          };
        },
      };
      const meta = await decodeGenerationStream(body(), sink);
      peak = Math.max(peak, process.memoryUsage().rss);
      assert.deepEqual(meta, {
        created: 1,
        usage: { cost_rub: 3, balance: 4 },
        images: [0, 1, 2].map((index) => ({ index, mediaType: 'image/png' })),
      });
      assert.deepEqual(
        counts,
        [0, 1, 2].map(() => REPEATS * blockBytes.length),
      );
      assert.deepEqual(hashes, [expected, expected, expected]);
      const growth = (peak - baseline) / (1 << 20);
      assert.ok(growth < 100, `RSS grew by ${growth.toFixed(1)} MiB`);
    });
  });
});
