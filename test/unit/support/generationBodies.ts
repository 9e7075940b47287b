// Generation response bodies for the streaming decoder's tests (generationStream*.test.ts): bodies
// built in every layout a gateway may use, fed in chunks of any size, decoded into recording sinks.
import * as assert from 'node:assert/strict';
import type { ImageSink, ImageWriter } from '../../../src/core/gateway/imageSink';
import { decodeGenerationStream } from '../../../src/core/answers/generationStream';
import { ResponseFormatError } from '../../../src/core/gateway/errors';
import type { GenerationResponseMeta } from '../../../src/core/gateway/types';
import { prng } from '../../../tools/emulator/png';

export function randomBytes(rng: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rng() * 256);
  return b;
}

/** Unknown values of every JSON type, with strings full of characters that matter to a scanner. */
export const NASTY: Record<string, unknown> = {
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

export interface Layout {
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

export const DEFAULT_LAYOUT: Layout = {
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
export function encodeBase64(bytes: Buffer, layout: Layout, rng: () => number): string {
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

export interface Built {
  body: Buffer;
  /** Offset of the closing quote of each image's b64_json string. */
  closeQuotes: number[];
  meta: GenerationResponseMeta;
}

/** Builds a generation response body with the given layout; images are placed via markers. */
export function buildBody(images: Buffer[], layoutIn: Partial<Layout> = {}, seed = 1): Built {
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
export async function* chunked(body: Buffer, size: number | { seed: number; max: number }): AsyncGenerator<Uint8Array> {
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

export class RecordingWriter implements ImageWriter {
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

export class RecordingSink implements ImageSink {
  readonly writers: RecordingWriter[] = [];

  constructor(private readonly asyncWrites = false) {}

  open(index: number): ImageWriter | Promise<ImageWriter> {
    assert.equal(index, this.writers.length, 'images are opened once each, in index order');
    const w = new RecordingWriter(index, this.asyncWrites);
    this.writers.push(w);
    return index % 2 === 0 ? w : Promise.resolve(w);
  }
}

export async function decodeAll(
  body: Buffer,
  size: number | { seed: number; max: number } = 65536,
  asyncWrites = false,
): Promise<{ meta: GenerationResponseMeta; sink: RecordingSink }> {
  const sink = new RecordingSink(asyncWrites);
  const meta = await decodeGenerationStream(chunked(body, size), sink);
  return { meta, sink };
}

export function assertImages(sink: RecordingSink, images: Buffer[]): void {
  assert.equal(sink.writers.length, images.length, 'one writer per image');
  images.forEach((img, i) => {
    const w = sink.writers[i]!;
    assert.ok(w.closed, `image ${i} closed`);
    assert.equal(w.aborted, undefined, `image ${i} not aborted`);
    const got = w.bytes();
    assert.ok(got.equals(img), `image ${i}: ${got.length} bytes decoded, ${img.length} expected, content ${got.length === img.length ? 'differs' : ''}`);
  });
}

export async function expectFormatError(body: Buffer, pattern: RegExp, size: number | { seed: number; max: number } = 65536): Promise<RecordingSink> {
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
export const SIZES = [0, 1, 2, 3, 4, 5, 6, 7, 47, 48, 49, 3071, 3072, 3073, 65535, 65536, 65537, 200_001];
