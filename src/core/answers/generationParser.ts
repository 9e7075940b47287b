// The JSON state machine of the streaming decoder: reads the syntax of a generation response and
// hands each value to GenerationFields (generationFields.ts), which knows what it means; everything
// else is skipped. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import type { GenerationResponseMeta } from '../gateway/types';
import { ResponseFormatError } from '../gateway/errors';
import { ByteFinder, NUMBER_CHAR, describeByte, isValidJsonNumber } from './jsonScanner';
import { JsonStringReader } from './jsonString';
import { Frame, GenerationFields, Meaning, isKeptString } from './generationFields';
import { ImageString } from './imageString';

/** Collected during a synchronous feed, then awaited in order by the driver (generationStream.ts). */
export type ParserEvent =
  | { kind: 'open'; index: number }
  | { kind: 'write'; index: number; bytes: Buffer }
  | { kind: 'close'; index: number }
  /** Bytes of the body outside the images' content (the envelope), in order; after a failure, all of it. */
  | { kind: 'raw'; bytes: Buffer }
  /** The open image's string could not be decoded to its end: what arrived of it (see ImageString.received). */
  | { kind: 'unfinished'; index: number; decodedBytes: number; text: Buffer };

/** What the parser expects next. */
const enum State {
  /** A value (its meaning is in `expected`). */
  Value,
  /** After '{': a key or '}'. */
  ObjectFirst,
  /** After ',' in an object: a key. */
  ObjectKey,
  Colon,
  /** After a member value: ',' or '}'. */
  ObjectNext,
  /** After '[': a value or ']'. */
  ArrayFirst,
  /** After an element: ',' or ']'. */
  ArrayNext,
  String,
  Number,
  Literal,
  /** The top-level object closed: only whitespace may follow. */
  Done,
}

/** What the string being read is. */
const enum StringRole {
  Key,
  /** A value that is kept (model, media_type, an amount). */
  Kept,
  Skipped,
  /** data[i].b64_json, or data[i].url (a data URL): decoded as it arrives. */
  Image,
}

const MAX_KEY = 256;
const MAX_KEPT = 64 * 1024;
const MAX_NUMBER = 1024;
const MAX_DEPTH = 10_000;

const LITERALS: Record<number, Buffer> = {
  0x74: Buffer.from('true'),
  0x66: Buffer.from('false'),
  0x6e: Buffer.from('null'),
};

export class GenerationParser {
  private state = State.Value;
  private expected = Meaning.Top;
  private readonly stack: Frame[] = [];
  /** Bytes of the body before the current buffer (for error messages). */
  private offset = 0;
  private readonly quotes = new ByteFinder(0x22);
  private readonly backslashes = new ByteFinder(0x5c);
  private readonly fields = new GenerationFields();

  // strings
  private stringRole = StringRole.Skipped;
  private stringMeaning = Meaning.Skip;
  private readonly string = new JsonStringReader(this.quotes, this.backslashes);
  private readonly image = new ImageString();
  /** Inside an image string's content (not kept as raw bytes: its decoded bytes go to the sink). */
  private inImage = false;
  /** Where the current buffer's bytes are kept as raw from; -1 while inside an image string. */
  private keepFrom = 0;
  private buffer: Buffer = Buffer.alloc(0);
  // numbers and literals
  private numberText = '';
  private literal: Buffer = LITERALS[0x6e]!;
  private literalMatched = 0;

  private readonly emitWrite = (bytes: Buffer): void => {
    this.events.push({ kind: 'write', index: this.fields.elementIndex, bytes });
  };

  constructor(private readonly events: ParserEvent[]) {}

  result(): GenerationResponseMeta {
    return this.fields.meta;
  }

  finish(): void {
    if (this.state === State.Done) return;
    if (this.offset === 0) throw new ResponseFormatError(l10n.t("The gateway's response body is empty (expected a JSON object)."));
    throw new ResponseFormatError(
      this.inImage && this.image.opened
        ? l10n.t("The gateway's response ended early: the JSON is truncated after {0} bytes inside data[{1}].b64_json.", this.offset, this.fields.elementIndex)
        : l10n.t("The gateway's response ended early: the JSON is truncated after {0} bytes.", this.offset),
    );
  }

  /** The body ends here, unfinished (cut, truncated, refused): what arrived of an open image is told in the events. */
  abandon(): void {
    if (!this.inImage) return;
    this.inImage = false;
    this.imageFailed();
  }

  feed(buf: Buffer): void {
    this.quotes.reset(buf);
    this.backslashes.reset(buf);
    const n = buf.length;
    let i = 0;
    this.buffer = buf;
    this.keepFrom = this.inImage ? -1 : 0;
    try {
      while (i < n) {
        const state = this.state;
        if (state === State.String) {
          i = this.stringRole === StringRole.Image ? this.scanImage(buf, i, n) : this.scanString(buf, i, n);
          continue;
        }
        if (state === State.Number) {
          i = this.scanNumber(buf, i, n);
          continue;
        }
        if (state === State.Literal) {
          i = this.scanLiteral(buf, i, n);
          continue;
        }
        const c = buf[i]!; // i < n
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
          i++;
          continue;
        }
        switch (state) {
          case State.Value:
            i = this.beginValue(c, i);
            break;
          case State.ObjectFirst:
            if (c === 0x22) this.beginKey();
            else if (c === 0x7d) this.closeObject(i);
            else throw this.syntax(c, i, l10n.t('a key or }'));
            i++;
            break;
          case State.ObjectKey:
            if (c !== 0x22) throw this.syntax(c, i, l10n.t('a key'));
            this.beginKey();
            i++;
            break;
          case State.Colon:
            if (c !== 0x3a) throw this.syntax(c, i, ':');
            this.state = State.Value;
            i++;
            break;
          case State.ObjectNext:
            if (c === 0x2c) this.state = State.ObjectKey;
            else if (c === 0x7d) this.closeObject(i);
            else throw this.syntax(c, i, l10n.t(', or }'));
            i++;
            break;
          case State.ArrayFirst:
            if (c === 0x5d) {
              this.closeArray();
              i++;
            } else {
              this.beginElement();
            }
            break;
          case State.ArrayNext:
            if (c === 0x2c) this.beginElement();
            else if (c === 0x5d) this.closeArray();
            else throw this.syntax(c, i, l10n.t(', or ]'));
            i++;
            break;
          default: // State.Done
            throw new ResponseFormatError(
              l10n.t("The gateway's response has unexpected data after the JSON object ({0} at byte {1}).", describeByte(c), this.offset + i),
            );
        }
      }
    } catch (error) {
      // Whatever could not be read is kept as it came: the rest of this buffer (the driver keeps the rest of the body).
      this.keepRaw(buf, this.keepFrom, n);
      throw error;
    } finally {
      this.offset += n;
    }
    this.keepRaw(buf, this.keepFrom, n);
  }

  private keepRaw(buf: Buffer, from: number, to: number): void {
    if (from >= 0 && to > from) this.events.push({ kind: 'raw', bytes: buf.subarray(from, to) });
  }

  // --- values -------------------------------------------------------------------------------

  private beginValue(c: number, i: number): number {
    const meaning = this.expected;
    const at = this.offset + i;
    if (c === 0x7b) {
      this.push(this.fields.openObject(meaning, at), i);
      this.state = State.ObjectFirst;
      return i + 1;
    }
    if (c === 0x5b) {
      this.push(this.fields.openArray(meaning, at), i);
      this.state = State.ArrayFirst;
      return i + 1;
    }
    if (c === 0x22) {
      this.stringMeaning = meaning;
      if (meaning === Meaning.Base64 || meaning === Meaning.Url) {
        this.stringRole = StringRole.Image;
        this.keepRaw(this.buffer, this.keepFrom, i + 1);
        this.keepFrom = -1;
        this.inImage = true;
        if (meaning === Meaning.Base64) {
          const index = this.fields.openImage('b64_json');
          this.events.push({ kind: 'open', index });
          this.image.begin(`data[${index}].b64_json`, this.emitWrite, 'base64');
        } else {
          this.image.begin(`data[${this.fields.elementIndex}].url`, this.emitWrite, 'url', () => {
            this.events.push({ kind: 'open', index: this.fields.openImage('url') });
          });
        }
      } else if (isKeptString(meaning)) {
        this.stringRole = StringRole.Kept;
        this.string.begin(MAX_KEPT);
      } else {
        this.fields.requireType(meaning, 'a string', at);
        this.stringRole = StringRole.Skipped;
        this.string.begin(0);
      }
      this.state = State.String;
      return i + 1;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      this.fields.requireType(meaning, 'a number', at);
      this.numberText = '';
      this.state = State.Number;
      return i;
    }
    const literal = LITERALS[c];
    if (literal !== undefined) {
      this.fields.requireType(meaning, c === 0x6e ? 'null' : 'a boolean', at);
      this.literal = literal;
      this.literalMatched = 0;
      this.state = State.Literal;
      return i;
    }
    if (meaning === Meaning.Top) throw this.notJson(c, i);
    throw this.syntax(c, i, l10n.t('a value'));
  }

  private valueDone(): void {
    const depth = this.stack.length;
    if (depth === 0) this.state = State.Done;
    else this.state = this.stack[depth - 1] === Frame.Data || this.stack[depth - 1] === Frame.SkippedArray ? State.ArrayNext : State.ObjectNext;
  }

  private push(frame: Frame, i: number): void {
    if (this.stack.length >= MAX_DEPTH) {
      throw new ResponseFormatError(l10n.t("The gateway's response nests JSON too deeply (at byte {0}).", this.offset + i));
    }
    this.stack.push(frame);
  }

  private beginElement(): void {
    this.expected = this.stack[this.stack.length - 1] === Frame.Data ? Meaning.Element : Meaning.Skip;
    this.state = State.Value;
  }

  private closeArray(): void {
    this.stack.pop();
    this.valueDone();
  }

  private closeObject(i: number): void {
    this.fields.closeObject(this.stack.pop(), this.offset + i);
    this.valueDone();
  }

  // --- keys and strings ----------------------------------------------------------------------

  private beginKey(): void {
    this.stringRole = StringRole.Key;
    this.string.begin(this.stack[this.stack.length - 1] !== Frame.SkippedObject ? MAX_KEY : 0);
    this.state = State.String;
  }

  private keyDone(): void {
    const frame = this.stack[this.stack.length - 1];
    // A key is only read inside an object, so the stack is never empty here.
    this.expected =
      frame !== undefined && frame !== Frame.SkippedObject && !this.string.tooLong
        ? this.fields.meaningOfKey(frame, this.string.content(this.offset))
        : Meaning.Skip;
    this.state = State.Colon;
  }

  /** Keys, kept values and skipped strings (not b64_json). */
  private scanString(buf: Buffer, i: number, n: number): number {
    const q = this.string.scan(buf, i, n, this.offset);
    if (q === -1) return n;
    this.stringDone(q);
    return q + 1;
  }

  private stringDone(q: number): void {
    if (this.stringRole === StringRole.Key) {
      this.keyDone();
      return;
    }
    if (this.stringRole === StringRole.Kept) {
      if (this.string.tooLong) this.fields.stringTooLong(this.stringMeaning, this.offset + q);
      else this.fields.string(this.stringMeaning, this.string.content(this.offset));
    }
    this.valueDone();
  }

  private scanImage(buf: Buffer, i: number, n: number): number {
    const q = this.quotes.find(i);
    const stop = q === -1 ? n : q;
    try {
      const plainUrl = this.image.feed(buf, i, stop, this.backslashes, q !== -1);
      if (plainUrl) {
        // No data URL: the image's address, read on as a kept string (its text stays in the envelope).
        if (plainUrl.length) this.events.push({ kind: 'raw', bytes: plainUrl });
        this.keepFrom = i;
        this.inImage = false;
        this.stringRole = StringRole.Kept;
        this.string.begin(MAX_KEPT);
        this.string.resume(plainUrl, this.offset + i);
        return i;
      }
      if (q === -1) return n;
      if (this.image.inEscape) {
        throw new ResponseFormatError(
          l10n.t("The image in data[{0}].b64_json of the gateway's response is not valid base64: it contains an escaped quote.", this.fields.elementIndex),
        );
      }
      this.image.end();
    } catch (error) {
      if (this.inImage) this.imageFailed();
      this.inImage = false;
      this.keepFrom = i;
      throw error;
    }
    this.inImage = false;
    if (this.keepFrom < 0) this.keepFrom = q;
    this.fields.imageEnded(this.image.mediaType);
    this.events.push({ kind: 'close', index: this.fields.elementIndex });
    this.valueDone();
    return q + 1;
  }

  /** What arrived of the image string goes with the events (a url that was no image yet: as raw text). */
  private imageFailed(): void {
    const { decodedBytes, text } = this.image.received();
    if (this.image.opened) this.events.push({ kind: 'unfinished', index: this.fields.elementIndex, decodedBytes, text });
    else if (text.length) this.events.push({ kind: 'raw', bytes: text });
  }

  // --- numbers and literals -------------------------------------------------------------------

  private scanNumber(buf: Buffer, i: number, n: number): number {
    const start = i;
    while (i < n && NUMBER_CHAR[buf[i]!] === 1) i++;
    if (i > start) {
      this.numberText += buf.toString('latin1', start, i);
      if (this.numberText.length > MAX_NUMBER) {
        throw new ResponseFormatError(l10n.t("The gateway's response has a number that is too long (near byte {0}).", this.offset + i));
      }
    }
    if (i === n) return n;
    if (!isValidJsonNumber(this.numberText)) {
      throw new ResponseFormatError(l10n.t("The gateway's response has an invalid number '{0}' before byte {1}.", this.numberText, this.offset + i));
    }
    this.fields.number(this.expected, Number(this.numberText));
    this.valueDone();
    return i;
  }

  private scanLiteral(buf: Buffer, i: number, n: number): number {
    const literal = this.literal;
    while (i < n && this.literalMatched < literal.length) {
      if (buf[i] !== literal[this.literalMatched]) throw this.syntax(buf[i]!, i, `'${literal.toString()}'`);
      i++;
      this.literalMatched++;
    }
    if (this.literalMatched === literal.length) {
      // null for media_type means "absent"; other literals carry nothing we keep.
      this.valueDone();
    }
    return i;
  }

  // --- errors -----------------------------------------------------------------------------

  private notJson(c: number, i: number): ResponseFormatError {
    return new ResponseFormatError(l10n.t("The gateway's response is not JSON: it starts with {0} (at byte {1}).", describeByte(c), this.offset + i));
  }

  private syntax(c: number, i: number, expected: string): ResponseFormatError {
    const frame = this.stack[this.stack.length - 1];
    const found = describeByte(c);
    const at = this.offset + i;
    return new ResponseFormatError(
      frame === Frame.Element
        ? l10n.t(
            "The gateway's response is not valid JSON: expected {0} but found {1} at byte {2} in data[{3}].",
            expected,
            found,
            at,
            this.fields.elementIndex,
          )
        : frame === Frame.Data
          ? l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2} in `data`.", expected, found, at)
          : l10n.t("The gateway's response is not valid JSON: expected {0} but found {1} at byte {2}.", expected, found, at),
    );
  }
}
