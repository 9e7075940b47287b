// Incremental base64 decoding of the content of one JSON string, for the streaming decoder of
// generation responses (generationStream.ts). Pure: no vscode import.
import { ResponseFormatError } from '../gateway/errors';
import { type ByteFinder, HEX_VALUE, describeByte } from './jsonScanner';
import * as l10n from '@vscode/l10n';
import { trPlural } from '../common/plural';

/** Input chunks larger than this are processed in slices, so that one step of synchronous work stays small. */
export const MAX_SLICE = 256 * 1024;

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
const EMPTY = Buffer.alloc(0);

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
export class Base64Decoder {
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
  /**
   * The checkpoint (what pendingText() was then) is kept as positions while the staging still holds it,
   * and copied only before the staging changes under it: a copy per feed would cost the whole staging
   * for every small chunk.
   */
  private checkpointed = false;
  private cpLength = 0;
  private cpEsc = 0;
  private cpU = 0;
  private cpDecoded = 0;
  private cpText: Buffer | undefined;
  private label = '';
  private emit: (bytes: Buffer) => void = () => undefined;

  reset(label: string, emit: (bytes: Buffer) => void): void {
    this.checkpointed = false;
    this.cpText = undefined;
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

  /** Bytes emitted so far. */
  get decodedBytes(): number {
    return this.decoded;
  }

  /**
   * The characters taken and not decoded yet, as JSON string content: the staged ones, then a
   * partial escape. With the bytes emitted, they are everything of the string this decoder was given
   * (whitespace it dropped aside). A copy: the staging changes as the string goes on.
   */
  pendingText(): Buffer {
    return this.textOf(this.stLen, this.esc, this.uValue);
  }

  /** Marks what was taken so far, for atCheckpoint(). */
  checkpoint(): void {
    this.checkpointed = true;
    this.cpLength = this.stLen;
    this.cpEsc = this.esc;
    this.cpU = this.uValue;
    this.cpDecoded = this.decoded;
    this.cpText = undefined;
  }

  /** Bytes emitted and pendingText() as they were at the last checkpoint() (at the start when there was none). */
  atCheckpoint(): { decodedBytes: number; text: Buffer } {
    if (!this.checkpointed) return { decodedBytes: 0, text: EMPTY };
    return { decodedBytes: this.cpDecoded, text: this.cpText ?? this.textOf(this.cpLength, this.cpEsc, this.cpU) };
  }

  /** Called before the staged characters change other than by growing: the checkpoint's text is copied while it is there. */
  private keepCheckpoint(): void {
    if (this.checkpointed && this.cpText === undefined) this.cpText = this.textOf(this.cpLength, this.cpEsc, this.cpU);
  }

  private textOf(length: number, esc: number, uValue: number): Buffer {
    const escape = esc === 0 ? '' : esc === 1 ? '\\' : `\\u${esc > 2 ? uValue.toString(16).padStart(esc - 2, '0') : ''}`;
    if (length === 0 && !escape) return EMPTY;
    let staged = this.staging.subarray(0, length);
    // A quote or backslash got here only through an escape (it is refused later): written back as one.
    if (staged.includes(0x22) || staged.includes(0x5c)) staged = Buffer.from(JSON.stringify(staged.toString('latin1')).slice(1, -1), 'latin1');
    return Buffer.concat([staged, Buffer.from(escape, 'latin1')]);
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
      if (b < e && b - s < DENSE_RUN && !this.mixedEscapes && this.slashesOnly(buf, s, e)) break;
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
      this.keepCheckpoint();
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
   * Stages buf[s, e) in one native pass when its only escapes are \/ (encoders that escape every
   * slash): V8's replaceAll resolves them. Returns false, staging nothing, when other escapes occur
   * (they then go one by one, and this is not tried again for the string).
   */
  private slashesOnly(buf: Buffer, s: number, e: number): boolean {
    if (this.stLen + (e - s) > STAGING_CAPACITY) this.flush();
    // A backslash at the very end may start an escape that continues in the next chunk.
    const end = buf[e - 1] === 0x5c ? e - 1 : e;
    const text = buf.toString('latin1', s, end).replaceAll('\\/', '/');
    // No backslash left means every one was followed by '/': the same pairing JSON makes.
    if (text.indexOf('\\') !== -1) {
      this.mixedEscapes = true;
      return false;
    }
    this.stLen += this.staging.write(text, this.stLen, 'latin1');
    if (end < e) this.esc = 1;
    return true;
  }

  /** The closing quote was reached: validate the end and emit the last bytes. */
  end(): void {
    if (this.esc !== 0) throw this.error(l10n.t('a string escape is not finished'));
    this.filter();
    const len = this.stLen;
    const rest = len & 3;
    if (this.pad > 0) {
      if (!((rest === 2 && this.pad === 2) || (rest === 3 && this.pad === 1))) {
        throw this.error(
          trPlural(
            rest,
            {
              one: "wrong padding at the end ({0} '=' after a group of {1} character)",
              other: "wrong padding at the end ({0} '=' after a group of {1} characters)",
            },
            this.pad,
            rest,
          ),
        );
      }
    } else if (rest === 1) {
      throw this.error(l10n.t('the length is not valid (one character too many or three too few at the end)'));
    }
    if (len === 0) return;
    const tail = rest === 2 ? '==' : rest === 3 ? '=' : '';
    const out = Buffer.from(this.staging.toString('latin1', 0, len) + tail, 'base64');
    const expected = (len >>> 2) * 3 + (rest === 0 ? 0 : rest - 1);
    if (out.length !== expected) throw this.error(l10n.t('it could not be decoded'));
    this.keepCheckpoint();
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
      const c = buf[s++]!; // s < e
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
          throw this.error(l10n.t('the escape \\{0} is not allowed in base64', describeByte(c, false)));
        }
      } else {
        const h = HEX_VALUE[c]!; // a table of 256 entries, c is a byte
        if (h < 0) throw this.error(l10n.t('invalid \\u escape ({0} is not a hex digit)', describeByte(c)));
        this.uValue = (this.uValue << 4) | h;
        if (++this.esc === 6) {
          this.esc = 0;
          if (this.uValue >= 0x80) {
            throw this.error(l10n.t('invalid character U+{0}', this.uValue.toString(16).toUpperCase().padStart(4, '0')));
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
    if (out.length !== (m >>> 2) * 3) throw this.error(l10n.t('it could not be decoded'));
    this.consume(m, this.stLen - m);
    this.output(out);
  }

  /** Drops the first m staged characters; `verifiedRest` of the remaining ones are known to be data. */
  private consume(m: number, verifiedRest: number): void {
    this.keepCheckpoint();
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
    this.keepCheckpoint();
    const st = this.staging;
    const len = this.stLen;
    let w = this.verified;
    let removed = false;
    for (let r = this.verified; r < len; r++) {
      const c = st[r]!; // r < len
      const cls = B64_CLASS[c];
      if (cls === B64_DATA) {
        if (this.pad > 0) throw this.error(l10n.t("'=' padding appears before the end"));
        st[w++] = c;
      } else if (cls === B64_SPACE) {
        removed = true;
      } else if (cls === B64_PAD) {
        if (++this.pad > 2) throw this.error(l10n.t("too many '=' padding characters"));
      } else {
        throw this.error(l10n.t('invalid character {0}', describeByte(c)));
      }
    }
    this.stLen = w;
    this.verified = w;
    return removed;
  }

  private error(what: string): ResponseFormatError {
    return new ResponseFormatError(
      l10n.t("The image in {0} of the gateway's response is not valid base64: {1} (after {2} decoded bytes).", this.label, what, this.decoded),
    );
  }
}

/** Node's decoder also accepts the URL-safe alphabet ('-' and '_'); the response must use the standard one. */
function hasUrlSafeChars(buf: Buffer, start: number, end: number): boolean {
  const view = buf.subarray(start, end);
  return view.indexOf(0x2d) !== -1 || view.indexOf(0x5f) !== -1;
}
