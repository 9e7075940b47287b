// Reads one JSON string other than b64_json (a key, a kept or a skipped value, an image's address) as it arrives: checks
// its escapes and keeps its raw content up to a limit. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { ResponseFormatError } from '../gateway/errors';
import { type ByteFinder, HEX_VALUE, describeByte } from './jsonScanner';

/** Where the string is inside an escape sequence. */
const enum Escape {
  None,
  /** After a backslash. */
  Backslash,
  /** Reading the four hex digits of \uXXXX. */
  Unicode,
}

export class JsonStringReader {
  private escape = Escape.None;
  private hexDigitsLeft = 0;
  /** The most raw bytes kept; 0 when the content is not kept. */
  private limit = 0;
  private parts: Buffer[] = [];
  private length = 0;
  private overflowed = false;

  /** Shares the parser's finders: they cache their answers for the whole buffer. */
  constructor(
    private readonly quotes: ByteFinder,
    private readonly backslashes: ByteFinder,
  ) {}

  /** A new string starts; its raw content is kept up to `limit` bytes (0: not kept). */
  begin(limit: number): void {
    this.escape = Escape.None;
    this.limit = limit;
    this.parts = [];
    this.length = 0;
    this.overflowed = false;
  }

  /** The content was longer than the limit (and is not kept). */
  get tooLong(): boolean {
    return this.overflowed;
  }

  /**
   * Reads the string's characters in buf[i, n); `offset` is the body's offset of buf[0]. Returns the
   * index of the closing quote, or -1 when the string goes on in the next buffer.
   */
  scan(buf: Buffer, i: number, n: number, offset: number): number {
    for (;;) {
      if (this.escape !== Escape.None) {
        const start = i;
        i = this.scanEscape(buf, i, n, offset);
        this.keep(buf, start, i);
      }
      if (i >= n) return -1;
      const q = this.quotes.find(i);
      const stop = q === -1 ? n : q;
      const b = this.backslashes.find(i);
      if (b !== -1 && b < stop) {
        this.keep(buf, i, b + 1);
        this.escape = Escape.Backslash;
        i = b + 1;
        continue;
      }
      this.keep(buf, i, stop);
      return q;
    }
  }

  /**
   * Raw content that arrived before this reader took the string over (no closing quote in it: the
   * start of a `url` that turned out to be an address, not a data URL): kept, its escapes checked.
   */
  resume(raw: Buffer, offset: number): void {
    for (let i = 0; i < raw.length;) {
      if (this.escape !== Escape.None) {
        const start = i;
        i = this.scanEscape(raw, i, raw.length, offset);
        this.keep(raw, start, i);
        continue;
      }
      const b = raw.indexOf(0x5c, i);
      const end = b === -1 ? raw.length : b + 1;
      this.keep(raw, i, end);
      if (b !== -1) this.escape = Escape.Backslash;
      i = end;
    }
  }

  /** The kept raw content (escapes included), decoded as JSON. */
  content(offset: number): string {
    const raw = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length);
    this.parts = [];
    try {
      return JSON.parse(`"${raw.toString('utf8')}"`) as string;
    } catch {
      throw new ResponseFormatError(l10n.t("The gateway's response has an invalid JSON string near byte {0}.", offset));
    }
  }

  private keep(buf: Buffer, a: number, b: number): void {
    if (this.limit === 0 || b <= a) return;
    if (this.length + (b - a) > this.limit) {
      this.overflowed = true;
      this.limit = 0;
      this.parts = [];
      return;
    }
    this.parts.push(Buffer.from(buf.subarray(a, b)));
    this.length += b - a;
  }

  private scanEscape(buf: Buffer, i: number, n: number, offset: number): number {
    while (i < n && this.escape !== Escape.None) {
      const c = buf[i]!; // i < n
      if (this.escape === Escape.Backslash) {
        if (c === 0x75) {
          this.escape = Escape.Unicode;
          this.hexDigitsLeft = 4;
        } else if (c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) {
          this.escape = Escape.None;
        } else {
          throw new ResponseFormatError(
            l10n.t("The gateway's response has an invalid escape \\{0} in a string at byte {1}.", describeByte(c, false), offset + i),
          );
        }
      } else {
        if (HEX_VALUE[c]! < 0) {
          throw new ResponseFormatError(l10n.t("The gateway's response has an invalid \\u escape in a string at byte {0}.", offset + i));
        }
        if (--this.hexDigitsLeft === 0) this.escape = Escape.None;
      }
      i++;
    }
    return i;
  }
}
