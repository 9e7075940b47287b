// The JSON state machine of the streaming decoder: it knows the meaning of a generation response
// (data[i].b64_json, media_type, model, created, usage) and skips everything else. Pure: no vscode import.
import type { GeneratedImageMeta, GenerationResponseMeta, Usage } from './types';
import * as l10n from '@vscode/l10n';
import { ResponseFormatError } from './errors';
import { ByteFinder, HEX_VALUE, NUMBER_CHAR, describeByte, describeJsonType, isValidJsonNumber } from './jsonScanner';
import { Base64Decoder } from './base64Stream';

// ---------------------------------------------------------------------------------------------
// Parser events (collected during a synchronous feed, then awaited in order by the driver)

export const EV_OPEN = 0;
export const EV_WRITE = 1;
export const EV_CLOSE = 2;

export interface ParserEvent {
  kind: number;
  index: number;
  bytes?: Buffer;
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

export class GenerationParser {
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
    if (this.offset === 0) throw new ResponseFormatError(l10n.t("The gateway's response body is empty (expected a JSON object)."));
    throw new ResponseFormatError(
      this.state === S_STRING && this.mode === M_B64
        ? l10n.t("The gateway's response ended early: the JSON is truncated after {0} bytes inside data[{1}].b64_json.", this.offset, this.elemIndex)
        : l10n.t("The gateway's response ended early: the JSON is truncated after {0} bytes.", this.offset),
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
            else throw this.syntax(c, i, l10n.t('a key or }'));
            i++;
            break;
          case S_OBJ_KEY:
            if (c !== 0x22) throw this.syntax(c, i, l10n.t('a key'));
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
            else throw this.syntax(c, i, l10n.t(', or }'));
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
            else throw this.syntax(c, i, l10n.t(', or ]'));
            i++;
            break;
          default: // S_DONE
            throw new ResponseFormatError(
              l10n.t("The gateway's response has unexpected data after the JSON object ({0} at byte {1}).", describeByte(c), this.offset + i),
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
      } else if (v === V_MODEL || v === V_MEDIA || v === V_COST || v === V_BALANCE) {
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
    throw this.syntax(c, i, l10n.t('a value'));
  }

  /** Values whose type is required: the top level, `data`, its elements and b64_json. */
  private checkType(v: number, found: string, i: number): void {
    switch (v) {
      case V_TOP:
        throw new ResponseFormatError(
          found === 'an array'
            ? l10n.t("The gateway's response is a JSON array, not the expected object.")
            : l10n.t("The gateway's response is {0}, not the expected JSON object.", describeJsonType(found)),
        );
      case V_DATA:
        throw new ResponseFormatError(l10n.t("`data` in the gateway's response is {0}, not an array (at byte {1}).", describeJsonType(found), this.offset + i));
      case V_ELEM:
        throw new ResponseFormatError(l10n.t("data[{0}] in the gateway's response is {1}, not an object.", this.elemCount, describeJsonType(found)));
      case V_B64:
        throw new ResponseFormatError(l10n.t("data[{0}].b64_json in the gateway's response is {1}, not a string.", this.elemIndex, describeJsonType(found)));
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
      throw new ResponseFormatError(l10n.t("The gateway's response nests JSON too deeply (at byte {0}).", this.offset + i));
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
            l10n.t("data[{0}] of the gateway's response has an image URL instead of b64_json: URLs are not supported by this API version (images must be returned as base64).", index),
          );
        }
        throw new ResponseFormatError(l10n.t("data[{0}] of the gateway's response has no b64_json (at byte {1}).", index, this.offset + i));
      }
      const image: GeneratedImageMeta = { index };
      if (this.elemMedia !== undefined) image.mediaType = this.elemMedia;
      this.meta.images.push(image);
    } else if (frame === F_USAGE) {
      // Either figure alone is still worth keeping (the balance updates the account, the cost the history).
      if (this.usageCost !== undefined || this.usageBalance !== undefined) {
        const usage: Usage = {};
        if (this.usageCost !== undefined) usage.cost_rub = this.usageCost;
        if (this.usageBalance !== undefined) usage.balance = this.usageBalance;
        this.meta.usage = usage;
      }
    } else if (frame === F_TOP) {
      if (!this.dataSeen) throw new ResponseFormatError(l10n.t("The gateway's response has no `data` array."));
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
          if (this.dataSeen) throw new ResponseFormatError(l10n.t("The gateway's response has `data` twice."));
          v = V_DATA;
        } else if (key === 'usage') v = V_USAGE;
        else if (key === 'created') v = V_CREATED;
        else if (key === 'model') v = V_MODEL;
      } else if (frame === F_ELEM) {
        if (key === 'b64_json') {
          if (this.elemHasB64) throw new ResponseFormatError(l10n.t("data[{0}] of the gateway's response has b64_json twice.", this.elemIndex));
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
      throw new ResponseFormatError(l10n.t("The gateway's response has an invalid JSON string near byte {0}.", this.offset));
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
            l10n.t("The gateway's response has an invalid escape \\{0} in a string at byte {1}.", describeByte(c, false), this.offset + i),
          );
        }
      } else {
        if (HEX_VALUE[c] < 0) {
          throw new ResponseFormatError(l10n.t("The gateway's response has an invalid \\u escape in a string at byte {0}.", this.offset + i));
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
      if (this.capOverflow && (this.target === V_COST || this.target === V_BALANCE)) {
        this.valueDone();
        return;
      }
      if (this.capOverflow) {
        const name = this.target === V_MODEL ? '`model`' : `data[${this.elemIndex}].media_type`;
        throw new ResponseFormatError(l10n.t("{0} in the gateway's response is too long (near byte {1}).", name, this.offset + q));
      }
      const value = this.captured();
      if (this.target === V_MODEL) this.meta.model = value;
      else if (this.target === V_MEDIA) this.elemMedia = value;
      // Amounts as numeric strings ("12.50"), as some gateways send money; anything else is ignored.
      else if (this.target === V_COST) this.usageCost = numericString(value);
      else if (this.target === V_BALANCE) this.usageBalance = numericString(value);
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
        l10n.t("The image in data[{0}].b64_json of the gateway's response is not valid base64: it contains an escaped quote.", this.elemIndex),
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
        throw new ResponseFormatError(l10n.t("The gateway's response has a number that is too long (near byte {0}).", this.offset + i));
      }
    }
    if (i === n) return n;
    if (!isValidJsonNumber(this.num)) {
      throw new ResponseFormatError(l10n.t("The gateway's response has an invalid number '{0}' before byte {1}.", this.num, this.offset + i));
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
      l10n.t("The gateway's response is not JSON: it starts with {0} (at byte {1}).", describeByte(c), this.offset + i),
    );
  }

  private syntax(c: number, i: number, expected: string): ResponseFormatError {
    const frame = this.stack[this.stack.length - 1];
    const found = describeByte(c);
    const at = this.offset + i;
    return new ResponseFormatError(
      frame === F_ELEM
        ? l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2} in data[{3}].", expected, found, at, this.elemIndex)
        : frame === F_DATA
          ? l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2} in `data`.", expected, found, at)
          : l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2}.", expected, found, at),
    );
  }
}

/** "12.5", " 12,50 " (a decimal comma) → a finite number; anything else → undefined. */
function numericString(text: string): number | undefined {
  const trimmed = text.trim().replace(/^(-?\d+),(\d+)$/, '$1.$2');
  if (!/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : undefined;
}
