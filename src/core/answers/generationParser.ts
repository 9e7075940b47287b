// The JSON state machine of the streaming decoder: reads the syntax of a generation response and
// hands each value to GenerationFields (generationFields.ts), which knows what it means; everything
// else is skipped. Numbers and literals are read by jsonScalars.ts, and syntax faults told by
// syntaxErrors.ts. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import type { GenerationResponseMeta } from '../gateway/types';
import { ResponseFormatError } from '../gateway/errors';
import { ByteFinder } from './jsonScanner';
import { JsonStringReader } from './jsonString';
import { Frame, GenerationFields, Meaning, isKeptString } from './generationFields';
import { ImageString } from './imageString';
import { JsonScalarReader } from './jsonScalars';
import { endedEarlyError, notJsonError, syntaxError, trailingDataError } from './syntaxErrors';

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
const MAX_DEPTH = 10_000;

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
  private readonly scalars = new JsonScalarReader();

  private readonly emitWrite = (bytes: Buffer): void => {
    this.events.push({ kind: 'write', index: this.fields.elementIndex, bytes });
  };

  constructor(private readonly events: ParserEvent[]) {}

  result(): GenerationResponseMeta {
    return this.fields.meta;
  }

  finish(): void {
    if (this.state === State.Done) return;
    throw endedEarlyError(this.offset, this.inImage && this.image.opened, this.fields.elementIndex);
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
            throw trailingDataError(c, this.offset + i);
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
      this.scalars.beginNumber();
      this.state = State.Number;
      return i;
    }
    if (JsonScalarReader.startsLiteral(c)) {
      this.fields.requireType(meaning, c === 0x6e ? 'null' : 'a boolean', at);
      this.scalars.beginLiteral(c);
      this.state = State.Literal;
      return i;
    }
    if (meaning === Meaning.Top) throw notJsonError(c, at);
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
    const end = this.scalars.scanNumber(buf, i, n, this.offset);
    if (end === n) return n;
    this.fields.number(this.expected, this.scalars.number);
    this.valueDone();
    return end;
  }

  private scanLiteral(buf: Buffer, i: number, n: number): number {
    const end = this.scalars.scanLiteral(buf, i, n);
    // null for media_type means "absent"; other literals carry nothing we keep.
    if (this.scalars.literalDone) this.valueDone();
    else if (end < n) throw this.syntax(buf[end]!, end, `'${this.scalars.literalText}'`);
    return end;
  }

  // --- errors -----------------------------------------------------------------------------

  private syntax(c: number, i: number, expected: string): ResponseFormatError {
    return syntaxError(this.stack[this.stack.length - 1], this.fields.elementIndex, c, this.offset + i, expected);
  }
}
