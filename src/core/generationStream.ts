// Streaming decoder of image generation responses (POST /v1/images/generations).
//
// A response can be hundreds of megabytes of JSON (10 images of ~24 MiB each, base64).
// `body.json()` would hold the whole body, then a JS string of it, then every decoded
// image, and above ~512 MiB cannot even build the string. This module reads the body
// chunk by chunk with a small state machine, decodes each `data[i].b64_json` as it
// arrives and hands the bytes to a sink (which awaits its own writes: backpressure).
// Nothing larger than one input chunk plus a small staging buffer is ever held.
//
// Pure: no vscode import. See ../shared/gateway-api-spec.md, "Image generation response".

import type { GeneratedImageMeta, GenerationResponseMeta } from './types';
import { CancelledError, GatewayError, ResponseFormatError } from './errors';
import { ByteFinder, HEX_VALUE, NUMBER_CHAR, describeByte, isValidJsonNumber } from './jsonScanner';

export interface ImageWriter {
  /** Decoded image bytes, in order. Awaited: this is the backpressure. The buffer is handed over (not reused). */
  write(bytes: Buffer): void | Promise<void>;
  /** The image's base64 string ended and was valid. */
  close(): Promise<void>;
  /** Decoding failed or the stream ended early: discard what was written. */
  abort(reason: Error): Promise<void>;
}

export interface ImageSink {
  open(index: number): ImageWriter | Promise<ImageWriter>;
}

export interface DecodeGenerationOptions {
  signal?: AbortSignal;
}

/** Input chunks larger than this are processed in slices, so that one step of synchronous work stays small. */
const MAX_SLICE = 256 * 1024;
/** Yield to the event loop (setImmediate) when this many ms of work ran without a macrotask boundary of ours. */
const YIELD_AFTER_MS = 8;

/**
 * Consumes a JSON generation response body; writes each data[i].b64_json, decoded, to sink.open(i);
 * returns everything else.
 *
 * Errors: ResponseFormatError for anything malformed (not JSON, not an object, truncated, bad base64,
 * `data` not an array, an element without b64_json, URL elements of the old API); errors of the body
 * iterator and of the sink are rethrown as they are. On abort of `options.signal`: its reason when that
 * is an Error other than the default AbortError, otherwise a CancelledError. On any error the writer that
 * is open (opened and not closed) is aborted first.
 */
export async function decodeGenerationStream(
  body: AsyncIterable<Uint8Array>,
  sink: ImageSink,
  options?: DecodeGenerationOptions,
): Promise<GenerationResponseMeta> {
  const signal = options?.signal;
  const queue: ParserEvent[] = [];
  const parser = new GenerationParser(queue);
  let writer: ImageWriter | undefined;
  let iterator: AsyncIterator<Uint8Array> | undefined;
  let iteratorDone = false;
  let lastYield = performance.now();

  const drain = async (): Promise<void> => {
    // Events are few per slice (at most a handful of opens/closes and writes of ~36 KiB).
    for (let k = 0; k < queue.length; k++) {
      const ev = queue[k];
      if (ev.kind === EV_WRITE) {
        const pending = writer!.write(ev.bytes!);
        if (pending !== undefined) await pending;
      } else if (ev.kind === EV_OPEN) {
        writer = await sink.open(ev.index);
      } else {
        const w = writer!;
        writer = undefined;
        try {
          await w.close();
        } catch (error) {
          await abortQuietly(w, asError(error));
          throw error;
        }
      }
      if (signal?.aborted) throw abortReason(signal);
    }
    queue.length = 0;
  };

  try {
    if (signal?.aborted) throw abortReason(signal);
    iterator = body[Symbol.asyncIterator]();
    for (;;) {
      const step = signal ? await nextOrAbort(iterator, signal) : await iterator.next();
      if (step.done) {
        iteratorDone = true;
        break;
      }
      const chunk = toBuffer(step.value);
      for (let off = 0; off < chunk.length; off += MAX_SLICE) {
        const slice = off === 0 && chunk.length <= MAX_SLICE ? chunk : chunk.subarray(off, off + MAX_SLICE);
        let failure: unknown;
        try {
          parser.feed(slice);
        } catch (error) {
          failure = error;
        }
        // Events produced before a failure still happen in order (an image that ended is closed).
        await drain();
        if (failure !== undefined) throw failure;
        if (signal?.aborted) throw abortReason(signal);
        const now = performance.now();
        if (now - lastYield > YIELD_AFTER_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          lastYield = performance.now();
          if (signal?.aborted) throw abortReason(signal);
        }
      }
    }
    parser.finish();
    return parser.result();
  } catch (error) {
    const reason = signal?.aborted ? abortReason(signal) : asError(error);
    if (writer) {
      const w = writer;
      writer = undefined;
      await abortQuietly(w, reason);
    }
    if (iterator && !iteratorDone && typeof iterator.return === 'function') {
      // Stop the body (an undici body cancels its socket). Not awaited: a pending read may never settle.
      try {
        Promise.resolve(iterator.return()).catch(() => undefined);
      } catch {
        // ignore
      }
    }
    throw signal?.aborted ? reason : error;
  }
}

function toBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

async function abortQuietly(writer: ImageWriter, reason: Error): Promise<void> {
  try {
    await writer.abort(reason);
  } catch {
    // The writer failed to discard; the original error matters more.
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof GatewayError) return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason;
  return new CancelledError();
}

function nextOrAbort(iterator: AsyncIterator<Uint8Array>, signal: AbortSignal): Promise<IteratorResult<Uint8Array>> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<IteratorResult<Uint8Array>>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Parser events (collected during a synchronous feed, then awaited in order by the driver)

const EV_OPEN = 0;
const EV_WRITE = 1;
const EV_CLOSE = 2;

interface ParserEvent {
  kind: number;
  index: number;
  bytes?: Buffer;
}

// ---------------------------------------------------------------------------------------------
// Incremental base64 decoder for the content of one JSON string

/** Base64 character classes (0: invalid). */
const B64_DATA = 1;
const B64_SPACE = 2;
const B64_PAD = 3;
const B64_CLASS = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') B64_CLASS[c.charCodeAt(0)] = B64_DATA;
for (const c of ' \t\r\n') B64_CLASS[c.charCodeAt(0)] = B64_SPACE;
B64_CLASS[0x3d] = B64_PAD;

/** Raw characters staged before decoding; decoded when this many are staged (~48 KiB of output per write). */
const FLUSH_AT = 64 * 1024;
/** Escape-free runs at least this long are decoded straight from the input. */
const DIRECT_MIN = 4096;
/** A run this short before a backslash means escapes are dense. */
const DENSE_RUN = 512;
const STAGING_CAPACITY = MAX_SLICE + FLUSH_AT + 16;

/**
 * Decodes the characters of a JSON string holding base64, as they arrive. Tolerates literal whitespace,
 * the JSON escapes \/ \n \r \t and \u00XX escapes of base64 characters. Byte-exact; strict about
 * everything else (invalid characters, padding not at the end, a length of 4n+1).
 *
 * Fast path: raw characters are copied (memcpy) into a staging buffer, which is decoded by Node's native
 * decoder in multiples of 4 characters. Node silently skips invalid characters, so the decoded length is
 * compared with the expected one; only when it differs is the staging filtered byte by byte in JS (this
 * either drops tolerated whitespace or reports the real error).
 */
class Base64Decoder {
  private readonly staging = Buffer.allocUnsafe(STAGING_CAPACITY);
  private stLen = 0;
  /** staging[0, verified) holds only base64 data characters. */
  private verified = 0;
  /** Number of '=' seen; once > 0 only '=' and whitespace may follow. */
  private pad = 0;
  /** 0: no escape; 1: after a backslash; 2..5: reading the hex digits of \uXXXX. */
  private esc = 0;
  private uValue = 0;
  /** The previous flush needed filtering (e.g. line-broken base64): skip the futile fast attempt. */
  private dirty = false;
  /** Escapes other than \/ were seen in a dense run: skip the replaceAll attempt. */
  private mixedEscapes = false;
  private decoded = 0;
  private label = '';
  private emit: (bytes: Buffer) => void = () => undefined;

  reset(label: string, emit: (bytes: Buffer) => void): void {
    this.stLen = 0;
    this.verified = 0;
    this.pad = 0;
    this.esc = 0;
    this.uValue = 0;
    this.dirty = false;
    this.mixedEscapes = false;
    this.decoded = 0;
    this.label = label;
    this.emit = emit;
  }

  get inEscape(): boolean {
    return this.esc !== 0;
  }

  /** String content buf[s, e): contains no closing quote. Backslashes are found with `backslashes`. */
  feed(buf: Buffer, s: number, e: number, backslashes: ByteFinder): void {
    while (s < e) {
      if (this.esc !== 0) {
        s = this.escape(buf, s, e);
        continue;
      }
      let b = backslashes.find(s);
      if (b === -1 || b > e) b = e;
      if (b - s >= DIRECT_MIN) s = this.direct(buf, s, b);
      if (b < e && b - s < DENSE_RUN) {
        // Escapes are dense (e.g. every '/' written as \/): one JS pass is cheaper than a native call per run.
        this.dense(buf, s, e);
        break;
      }
      if (b > s) this.append(buf, s, b);
      if (b < e) {
        this.esc = 1;
        s = b + 1;
      } else {
        s = e;
      }
    }
    if (this.stLen >= FLUSH_AT) this.flush();
  }

  /**
   * The fast path: decodes most of the escape-free run buf[s, e) straight from the input (completing the
   * 1-3 carried characters first), into one fresh output buffer. Returns where it stopped: the caller
   * stages the rest (the last 0-3 characters, or everything from the first group that was not clean).
   */
  private direct(buf: Buffer, s: number, e: number): number {
    if (this.dirty || this.pad !== 0 || this.stLen > 3) return s;
    const need = this.stLen === 0 ? 0 : 4 - this.stLen;
    const m = (e - s - need) & ~3;
    if (m < DIRECT_MIN) return s;
    const head = need === 0 ? 0 : 3;
    const expected = (m >>> 2) * 3;
    const out = Buffer.allocUnsafe(head + expected);
    if (need !== 0) {
      this.append(buf, s, s + need);
      s += need;
      const quad = this.staging.toString('latin1', 0, 4);
      if (out.write(quad, 0, 'base64') !== 3 || hasUrlSafeChars(this.staging, 0, 4)) return s;
      this.stLen = 0;
      this.verified = 0;
    }
    const written = out.write(buf.toString('latin1', s, s + m), head, 'base64');
    if (written !== expected || hasUrlSafeChars(buf, s, s + m)) {
      // Not clean (whitespace, an invalid character or padding): the staging path sorts it out.
      if (head !== 0) this.output(out.subarray(0, head));
      return s;
    }
    this.output(out);
    return s + m;
  }

  /**
   * Stages buf[s, e), where escapes are dense. When the only escapes are \/ (encoders that escape every
   * slash), V8's native replaceAll does it; otherwise one JS loop resolves \/ inline and other escapes
   * through escape().
   */
  private dense(buf: Buffer, s: number, e: number): void {
    if (this.stLen + (e - s) > STAGING_CAPACITY) this.flush();
    if (!this.mixedEscapes) {
      // A backslash at the very end may start an escape that continues in the next chunk.
      const end = buf[e - 1] === 0x5c ? e - 1 : e;
      const text = buf.toString('latin1', s, end).replaceAll('\\/', '/');
      // No backslash left means every one was followed by '/': the same pairing JSON makes.
      if (text.indexOf('\\') === -1) {
        this.stLen += this.staging.write(text, this.stLen, 'latin1');
        if (end < e) this.esc = 1;
        return;
      }
      this.mixedEscapes = true;
    }
    const st = this.staging;
    let n = this.stLen;
    while (s < e) {
      const c = buf[s++];
      if (c !== 0x5c) {
        st[n++] = c;
      } else if (s < e && buf[s] === 0x2f) {
        st[n++] = 0x2f;
        s++;
      } else {
        this.stLen = n;
        this.esc = 1;
        s = this.escape(buf, s, e);
        n = this.stLen;
      }
    }
    this.stLen = n;
  }

  /** The closing quote was reached: validate the end and emit the last bytes. */
  end(): void {
    if (this.esc !== 0) throw this.error('a string escape is not finished');
    this.filter();
    const len = this.stLen;
    const rest = len & 3;
    if (this.pad > 0) {
      if (!((rest === 2 && this.pad === 2) || (rest === 3 && this.pad === 1))) {
        throw this.error(`wrong padding at the end (${this.pad} '=' after a group of ${rest} character${rest === 1 ? '' : 's'})`);
      }
    } else if (rest === 1) {
      throw this.error('the length is not valid (one character too many or three too few at the end)');
    }
    if (len === 0) return;
    const tail = rest === 2 ? '==' : rest === 3 ? '=' : '';
    const out = Buffer.from(this.staging.toString('latin1', 0, len) + tail, 'base64');
    const expected = (len >>> 2) * 3 + (rest === 0 ? 0 : rest - 1);
    if (out.length !== expected) throw this.error('it could not be decoded');
    this.stLen = 0;
    this.verified = 0;
    this.output(out);
  }

  private output(out: Buffer): void {
    this.decoded += out.length;
    if (out.length > 0) this.emit(out);
  }

  private append(buf: Buffer, s: number, e: number): void {
    while (s < e) {
      const n = Math.min(e - s, STAGING_CAPACITY - this.stLen);
      buf.copy(this.staging, this.stLen, s, s + n);
      this.stLen += n;
      s += n;
      if (this.stLen === STAGING_CAPACITY) this.flush();
    }
  }

  private pushChar(c: number): void {
    this.staging[this.stLen++] = c;
    if (this.stLen === STAGING_CAPACITY) this.flush();
  }

  private escape(buf: Buffer, s: number, e: number): number {
    while (s < e && this.esc !== 0) {
      const c = buf[s++];
      if (this.esc === 1) {
        if (c === 0x2f) {
          this.esc = 0;
          this.pushChar(0x2f); // \/
        } else if (c === 0x6e || c === 0x72 || c === 0x74) {
          this.esc = 0; // \n \r \t: whitespace, dropped
        } else if (c === 0x75) {
          this.esc = 2;
          this.uValue = 0;
        } else {
          throw this.error(`the escape \\${describeByte(c, false)} is not allowed in base64`);
        }
      } else {
        const h = HEX_VALUE[c];
        if (h < 0) throw this.error(`invalid \\u escape (${describeByte(c)} is not a hex digit)`);
        this.uValue = (this.uValue << 4) | h;
        if (++this.esc === 6) {
          this.esc = 0;
          if (this.uValue >= 0x80) {
            throw this.error(`invalid character U+${this.uValue.toString(16).toUpperCase().padStart(4, '0')}`);
          }
          this.pushChar(this.uValue); // validated like any other staged character
        }
      }
    }
    return s;
  }

  /** Decodes the staged characters in multiples of 4, keeping 0-3 for later. */
  private flush(): void {
    if (!this.dirty && this.pad === 0) {
      const m = this.stLen & ~3;
      if (m === 0) return;
      const out = Buffer.from(this.staging.toString('latin1', 0, m), 'base64');
      if (out.length === (m >>> 2) * 3 && !hasUrlSafeChars(this.staging, 0, m)) {
        this.consume(m, 0);
        this.output(out);
        return;
      }
    }
    const removed = this.filter();
    this.dirty = removed;
    const m = this.stLen & ~3;
    if (m === 0) return;
    const out = Buffer.from(this.staging.toString('latin1', 0, m), 'base64');
    if (out.length !== (m >>> 2) * 3) throw this.error('it could not be decoded');
    this.consume(m, this.stLen - m);
    this.output(out);
  }

  /** Drops the first m staged characters; `verifiedRest` of the remaining ones are known to be data. */
  private consume(m: number, verifiedRest: number): void {
    const rest = this.stLen - m;
    if (rest > 0) this.staging.copy(this.staging, 0, m, this.stLen);
    this.stLen = rest;
    this.verified = verifiedRest;
  }

  /**
   * Compacts the unverified staged characters to data characters only, in place. Throws on an invalid
   * character or on data after padding. Returns whether whitespace was removed.
   */
  private filter(): boolean {
    const st = this.staging;
    const len = this.stLen;
    let w = this.verified;
    let removed = false;
    for (let r = this.verified; r < len; r++) {
      const c = st[r];
      const cls = B64_CLASS[c];
      if (cls === B64_DATA) {
        if (this.pad > 0) throw this.error("'=' padding appears before the end");
        st[w++] = c;
      } else if (cls === B64_SPACE) {
        removed = true;
      } else if (cls === B64_PAD) {
        if (++this.pad > 2) throw this.error("too many '=' padding characters");
      } else {
        throw this.error(`invalid character ${describeByte(c)}`);
      }
    }
    this.stLen = w;
    this.verified = w;
    return removed;
  }

  private error(what: string): ResponseFormatError {
    return new ResponseFormatError(
      `The image in ${this.label} of the gateway's response is not valid base64: ${what} (after ${this.decoded} decoded bytes).`,
    );
  }
}

/** Node's decoder also accepts the URL-safe alphabet ('-' and '_'); the response must use the standard one. */
function hasUrlSafeChars(buf: Buffer, start: number, end: number): boolean {
  const view = buf.subarray(start, end);
  return view.indexOf(0x2d) !== -1 || view.indexOf(0x5f) !== -1;
}

// ---------------------------------------------------------------------------------------------
// The JSON state machine with the meaning of the generation response

// Parser states
const S_VALUE = 0; // a value is expected (its meaning is in `expect`)
const S_OBJ_FIRST = 1; // after '{': a key or '}'
const S_OBJ_KEY = 2; // after ',' in an object: a key
const S_COLON = 3;
const S_OBJ_NEXT = 4; // after a member value: ',' or '}'
const S_ARR_FIRST = 5; // after '[': a value or ']'
const S_ARR_NEXT = 6; // after an element: ',' or ']'
const S_STRING = 7;
const S_NUMBER = 8;
const S_LITERAL = 9;
const S_DONE = 10; // the top-level object closed: only whitespace may follow

// What the value being read means
const V_SKIP = 0;
const V_TOP = 1;
const V_DATA = 2;
const V_ELEM = 3;
const V_B64 = 4;
const V_MEDIA = 5;
const V_MODEL = 6;
const V_CREATED = 7;
const V_USAGE = 8;
const V_COST = 9;
const V_BALANCE = 10;

// Containers on the stack
const F_TOP = 0;
const F_DATA = 1;
const F_ELEM = 2;
const F_USAGE = 3;
const F_SKIP_OBJECT = 4;
const F_SKIP_ARRAY = 5;

// String modes
const M_KEY = 0;
const M_CAPTURE = 1;
const M_SKIP = 2;
const M_B64 = 3;

const MAX_KEY = 256;
const MAX_CAPTURED = 64 * 1024;
const MAX_NUMBER = 1024;
const MAX_DEPTH = 10_000;

const LITERALS: Record<number, Buffer> = {
  0x74: Buffer.from('true'),
  0x66: Buffer.from('false'),
  0x6e: Buffer.from('null'),
};

class GenerationParser {
  private state = S_VALUE;
  private expect = V_TOP;
  private readonly stack: number[] = [];
  /** Bytes of the body before the current buffer (for error messages). */
  private offset = 0;
  private readonly quotes = new ByteFinder(0x22);
  private readonly backslashes = new ByteFinder(0x5c);

  // strings
  private mode = M_SKIP;
  private target = V_SKIP;
  private sEsc = 0;
  private capturing = false;
  private capParts: Buffer[] = [];
  private capLen = 0;
  private capOverflow = false;
  private readonly b64 = new Base64Decoder();
  // numbers and literals
  private num = '';
  private literal: Buffer = LITERALS[0x6e];
  private litIndex = 0;

  // meaning
  private dataSeen = false;
  private elemCount = 0;
  private elemIndex = -1;
  private elemHasB64 = false;
  private elemHasUrl = false;
  private elemMedia: string | undefined;
  private usageCost: number | undefined;
  private usageBalance: number | undefined;
  private readonly meta: GenerationResponseMeta = { images: [] };
  private readonly emitWrite = (bytes: Buffer): void => {
    this.events.push({ kind: EV_WRITE, index: this.elemIndex, bytes });
  };

  constructor(private readonly events: ParserEvent[]) {}

  result(): GenerationResponseMeta {
    return this.meta;
  }

  finish(): void {
    if (this.state === S_DONE) return;
    if (this.offset === 0) throw new ResponseFormatError("The gateway's response body is empty (expected a JSON object).");
    const where = this.state === S_STRING && this.mode === M_B64 ? ` inside data[${this.elemIndex}].b64_json` : '';
    throw new ResponseFormatError(
      `The gateway's response ended early: the JSON is truncated after ${this.offset} bytes${where}.`,
    );
  }

  feed(buf: Buffer): void {
    this.quotes.reset(buf);
    this.backslashes.reset(buf);
    const n = buf.length;
    let i = 0;
    try {
      while (i < n) {
        const state = this.state;
        if (state === S_STRING) {
          i = this.mode === M_B64 ? this.scanBase64(buf, i, n) : this.scanString(buf, i, n);
          continue;
        }
        if (state === S_NUMBER) {
          i = this.scanNumber(buf, i, n);
          continue;
        }
        if (state === S_LITERAL) {
          i = this.scanLiteral(buf, i, n);
          continue;
        }
        const c = buf[i];
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
          i++;
          continue;
        }
        switch (state) {
          case S_VALUE:
            i = this.beginValue(c, i);
            break;
          case S_OBJ_FIRST:
            if (c === 0x22) this.beginKey();
            else if (c === 0x7d) this.closeObject(i);
            else throw this.syntax(c, i, 'a key or }');
            i++;
            break;
          case S_OBJ_KEY:
            if (c !== 0x22) throw this.syntax(c, i, 'a key');
            this.beginKey();
            i++;
            break;
          case S_COLON:
            if (c !== 0x3a) throw this.syntax(c, i, ':');
            this.state = S_VALUE;
            i++;
            break;
          case S_OBJ_NEXT:
            if (c === 0x2c) this.state = S_OBJ_KEY;
            else if (c === 0x7d) this.closeObject(i);
            else throw this.syntax(c, i, ', or }');
            i++;
            break;
          case S_ARR_FIRST:
            if (c === 0x5d) {
              this.closeArray();
              i++;
            } else {
              this.beginElement();
            }
            break;
          case S_ARR_NEXT:
            if (c === 0x2c) this.beginElement();
            else if (c === 0x5d) this.closeArray();
            else throw this.syntax(c, i, ', or ]');
            i++;
            break;
          default: // S_DONE
            throw new ResponseFormatError(
              `The gateway's response has unexpected data after the JSON object (${describeByte(c)} at byte ${this.offset + i}).`,
            );
        }
      }
    } finally {
      this.offset += n;
    }
  }

  // --- values -------------------------------------------------------------------------------

  private beginValue(c: number, i: number): number {
    const v = this.expect;
    if (c === 0x7b) {
      let frame = F_SKIP_OBJECT;
      if (v === V_TOP) frame = F_TOP;
      else if (v === V_ELEM) {
        frame = F_ELEM;
        this.elemIndex = this.elemCount++;
        this.elemHasB64 = false;
        this.elemHasUrl = false;
        this.elemMedia = undefined;
      } else if (v === V_USAGE) {
        frame = F_USAGE;
        this.usageCost = undefined;
        this.usageBalance = undefined;
      } else this.checkType(v, 'an object', i);
      this.push(frame, i);
      this.state = S_OBJ_FIRST;
      return i + 1;
    }
    if (c === 0x5b) {
      let frame = F_SKIP_ARRAY;
      if (v === V_DATA) frame = F_DATA;
      else this.checkType(v, 'an array', i);
      this.push(frame, i);
      this.state = S_ARR_FIRST;
      return i + 1;
    }
    if (c === 0x22) {
      this.target = v;
      this.sEsc = 0;
      if (v === V_B64) {
        this.mode = M_B64;
        this.elemHasB64 = true;
        this.events.push({ kind: EV_OPEN, index: this.elemIndex });
        this.b64.reset(`data[${this.elemIndex}].b64_json`, this.emitWrite);
      } else if (v === V_MODEL || v === V_MEDIA) {
        this.mode = M_CAPTURE;
        this.startCapture(true);
      } else {
        this.checkType(v, 'a string', i);
        this.mode = M_SKIP;
        this.capturing = false;
      }
      this.state = S_STRING;
      return i + 1;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      this.checkType(v, 'a number', i);
      this.target = v;
      this.num = '';
      this.state = S_NUMBER;
      return i;
    }
    const literal = LITERALS[c];
    if (literal !== undefined) {
      this.checkType(v, c === 0x6e ? 'null' : 'a boolean', i);
      this.target = v;
      this.literal = literal;
      this.litIndex = 0;
      this.state = S_LITERAL;
      return i;
    }
    if (v === V_TOP) throw this.notJson(c, i);
    throw this.syntax(c, i, 'a value');
  }

  /** Values whose type is required: the top level, `data`, its elements and b64_json. */
  private checkType(v: number, found: string, i: number): void {
    switch (v) {
      case V_TOP:
        throw new ResponseFormatError(
          found === 'an array'
            ? "The gateway's response is a JSON array, not the expected object."
            : `The gateway's response is ${found}, not the expected JSON object.`,
        );
      case V_DATA:
        throw new ResponseFormatError(`\`data\` in the gateway's response is ${found}, not an array (at byte ${this.offset + i}).`);
      case V_ELEM:
        throw new ResponseFormatError(`data[${this.elemCount}] in the gateway's response is ${found}, not an object.`);
      case V_B64:
        throw new ResponseFormatError(`data[${this.elemIndex}].b64_json in the gateway's response is ${found}, not a string.`);
      default:
      // Any other field of an unexpected type is ignored (skipped like an unknown one).
    }
  }

  private valueDone(): void {
    const depth = this.stack.length;
    if (depth === 0) this.state = S_DONE;
    else this.state = this.stack[depth - 1] === F_DATA || this.stack[depth - 1] === F_SKIP_ARRAY ? S_ARR_NEXT : S_OBJ_NEXT;
  }

  private push(frame: number, i: number): void {
    if (this.stack.length >= MAX_DEPTH) {
      throw new ResponseFormatError(`The gateway's response nests JSON too deeply (at byte ${this.offset + i}).`);
    }
    this.stack.push(frame);
    if (frame === F_DATA) this.dataSeen = true;
  }

  private beginElement(): void {
    this.expect = this.stack[this.stack.length - 1] === F_DATA ? V_ELEM : V_SKIP;
    this.state = S_VALUE;
  }

  private closeArray(): void {
    this.stack.pop();
    this.valueDone();
  }

  private closeObject(i: number): void {
    const frame = this.stack.pop();
    if (frame === F_ELEM) {
      const index = this.elemIndex;
      if (!this.elemHasB64) {
        if (this.elemHasUrl) {
          throw new ResponseFormatError(
            `data[${index}] of the gateway's response has an image URL instead of b64_json: URLs are not supported by this API version (images must be returned as base64).`,
          );
        }
        throw new ResponseFormatError(`data[${index}] of the gateway's response has no b64_json (at byte ${this.offset + i}).`);
      }
      const image: GeneratedImageMeta = { index };
      if (this.elemMedia !== undefined) image.mediaType = this.elemMedia;
      this.meta.images.push(image);
    } else if (frame === F_USAGE) {
      if (this.usageCost !== undefined && this.usageBalance !== undefined) {
        this.meta.usage = { cost_rub: this.usageCost, balance: this.usageBalance };
      }
    } else if (frame === F_TOP) {
      if (!this.dataSeen) throw new ResponseFormatError("The gateway's response has no `data` array.");
    }
    this.valueDone();
  }

  // --- keys ---------------------------------------------------------------------------------

  private beginKey(): void {
    this.mode = M_KEY;
    this.sEsc = 0;
    this.startCapture(this.stack[this.stack.length - 1] !== F_SKIP_OBJECT);
    this.state = S_STRING;
  }

  private keyDone(): void {
    const frame = this.stack[this.stack.length - 1];
    let v = V_SKIP;
    if (frame !== F_SKIP_OBJECT && !this.capOverflow) {
      const key = this.captured();
      if (frame === F_TOP) {
        if (key === 'data') {
          if (this.dataSeen) throw new ResponseFormatError("The gateway's response has `data` twice.");
          v = V_DATA;
        } else if (key === 'usage') v = V_USAGE;
        else if (key === 'created') v = V_CREATED;
        else if (key === 'model') v = V_MODEL;
      } else if (frame === F_ELEM) {
        if (key === 'b64_json') {
          if (this.elemHasB64) throw new ResponseFormatError(`data[${this.elemIndex}] of the gateway's response has b64_json twice.`);
          v = V_B64;
        } else if (key === 'media_type') v = V_MEDIA;
        else if (key === 'url') this.elemHasUrl = true;
      } else if (frame === F_USAGE) {
        if (key === 'cost_rub') v = V_COST;
        else if (key === 'balance') v = V_BALANCE;
      }
    }
    this.expect = v;
    this.state = S_COLON;
  }

  // --- strings ------------------------------------------------------------------------------

  private startCapture(on: boolean): void {
    this.capturing = on;
    this.capParts = [];
    this.capLen = 0;
    this.capOverflow = false;
  }

  private capture(buf: Buffer, a: number, b: number): void {
    if (!this.capturing || b <= a) return;
    const limit = this.mode === M_KEY ? MAX_KEY : MAX_CAPTURED;
    if (this.capLen + (b - a) > limit) {
      this.capOverflow = true;
      this.capturing = false;
      this.capParts = [];
      return;
    }
    this.capParts.push(Buffer.from(buf.subarray(a, b)));
    this.capLen += b - a;
  }

  /** The captured raw string content (escapes included), decoded as JSON. */
  private captured(): string {
    const raw = this.capParts.length === 1 ? this.capParts[0] : Buffer.concat(this.capParts, this.capLen);
    this.capParts = [];
    const text = raw.toString('utf8');
    try {
      return JSON.parse(`"${text}"`) as string;
    } catch {
      throw new ResponseFormatError(`The gateway's response has an invalid JSON string near byte ${this.offset}.`);
    }
  }

  /** Keys, captured values and skipped strings (not b64_json). */
  private scanString(buf: Buffer, i: number, n: number): number {
    for (;;) {
      if (this.sEsc !== 0) {
        const start = i;
        i = this.scanEscape(buf, i, n);
        this.capture(buf, start, i);
        if (this.sEsc !== 0) return i;
      }
      if (i >= n) return n;
      const q = this.quotes.find(i);
      const stop = q === -1 ? n : q;
      const b = this.backslashes.find(i);
      if (b !== -1 && b < stop) {
        this.capture(buf, i, b + 1);
        this.sEsc = 1;
        i = b + 1;
        continue;
      }
      this.capture(buf, i, stop);
      if (q === -1) return n;
      this.stringDone(q);
      return q + 1;
    }
  }

  private scanEscape(buf: Buffer, i: number, n: number): number {
    while (i < n && this.sEsc !== 0) {
      const c = buf[i];
      if (this.sEsc === 1) {
        if (c === 0x75) this.sEsc = 2;
        else if (c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) {
          this.sEsc = 0;
        } else {
          throw new ResponseFormatError(
            `The gateway's response has an invalid escape \\${describeByte(c, false)} in a string at byte ${this.offset + i}.`,
          );
        }
      } else {
        if (HEX_VALUE[c] < 0) {
          throw new ResponseFormatError(`The gateway's response has an invalid \\u escape in a string at byte ${this.offset + i}.`);
        }
        this.sEsc = this.sEsc === 5 ? 0 : this.sEsc + 1;
      }
      i++;
    }
    return i;
  }

  private stringDone(q: number): void {
    if (this.mode === M_KEY) {
      this.keyDone();
      return;
    }
    if (this.mode === M_CAPTURE) {
      if (this.capOverflow) {
        const name = this.target === V_MODEL ? '`model`' : `data[${this.elemIndex}].media_type`;
        throw new ResponseFormatError(`${name} in the gateway's response is too long (near byte ${this.offset + q}).`);
      }
      const value = this.captured();
      if (this.target === V_MODEL) this.meta.model = value;
      else if (this.target === V_MEDIA) this.elemMedia = value;
    }
    this.valueDone();
  }

  private scanBase64(buf: Buffer, i: number, n: number): number {
    const q = this.quotes.find(i);
    const stop = q === -1 ? n : q;
    if (stop > i) this.b64.feed(buf, i, stop, this.backslashes);
    if (q === -1) return n;
    if (this.b64.inEscape) {
      throw new ResponseFormatError(
        `The image in data[${this.elemIndex}].b64_json of the gateway's response is not valid base64: it contains an escaped quote.`,
      );
    }
    this.b64.end();
    this.events.push({ kind: EV_CLOSE, index: this.elemIndex });
    this.valueDone();
    return q + 1;
  }

  // --- numbers and literals -------------------------------------------------------------------

  private scanNumber(buf: Buffer, i: number, n: number): number {
    const start = i;
    while (i < n && NUMBER_CHAR[buf[i]] === 1) i++;
    if (i > start) {
      this.num += buf.toString('latin1', start, i);
      if (this.num.length > MAX_NUMBER) {
        throw new ResponseFormatError(`The gateway's response has a number that is too long (near byte ${this.offset + i}).`);
      }
    }
    if (i === n) return n;
    if (!isValidJsonNumber(this.num)) {
      throw new ResponseFormatError(`The gateway's response has an invalid number '${this.num}' before byte ${this.offset + i}.`);
    }
    const value = Number(this.num);
    switch (this.target) {
      case V_CREATED:
        this.meta.created = value;
        break;
      case V_COST:
        this.usageCost = value;
        break;
      case V_BALANCE:
        this.usageBalance = value;
        break;
      default:
    }
    this.valueDone();
    return i;
  }

  private scanLiteral(buf: Buffer, i: number, n: number): number {
    const lit = this.literal;
    while (i < n && this.litIndex < lit.length) {
      if (buf[i] !== lit[this.litIndex]) throw this.syntax(buf[i], i, `'${lit.toString()}'`);
      i++;
      this.litIndex++;
    }
    if (this.litIndex === lit.length) {
      // null for media_type means "absent"; other literals carry nothing we keep.
      this.valueDone();
    }
    return i;
  }

  // --- errors -----------------------------------------------------------------------------

  private notJson(c: number, i: number): ResponseFormatError {
    return new ResponseFormatError(
      `The gateway's response is not JSON: it starts with ${describeByte(c)} (at byte ${this.offset + i}).`,
    );
  }

  private syntax(c: number, i: number, expected: string): ResponseFormatError {
    const frame = this.stack[this.stack.length - 1];
    const where = frame === F_ELEM ? ` in data[${this.elemIndex}]` : frame === F_DATA ? ' in `data`' : '';
    return new ResponseFormatError(
      `The gateway's response is not valid JSON: expected ${expected} but found ${describeByte(c)} at byte ${this.offset + i}${where}.`,
    );
  }
}
