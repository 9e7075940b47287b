// The start of a JSON string that may be a data URL ("data:image/png;base64,iVBOR…"): a gateway may
// send an image that way in b64_json, or in a `url` field. Read before the base64 is decoded, as it
// arrives (the header may be split over chunks and may hold JSON escapes: "image\/png").
// Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { ResponseFormatError } from '../gateway/errors';
import { HEX_VALUE } from './jsonScanner';

/** A data URL's header is short; a string that opens with "data:" and has no comma by then is refused. */
const MAX_HEADER_CHARS = 1024;
const SCHEME = 'data:';
const JSON_ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };

export type HeadResult =
  /** More characters are needed: everything given was taken (and is kept to be given back). */
  | { kind: 'undecided' }
  /** Not a data URL: `replay` (bytes of earlier chunks) and then buf[s, e) are the content. */
  | { kind: 'plain'; replay: Buffer }
  /** A base64 data URL: the content starts at `at` in the current buffer. */
  | { kind: 'data'; at: number; mediaType?: string };

/** Reads the first characters of one JSON string until it is known whether they open a data URL. */
export class DataUrlHead {
  /** Raw bytes of earlier chunks, not yet decided about. */
  private carry: Buffer = Buffer.alloc(0);
  /** The header as received (raw JSON text, escapes included), once decided: it is part of what arrived. */
  header: Buffer = Buffer.alloc(0);

  reset(): void {
    this.carry = Buffer.alloc(0);
    this.header = Buffer.alloc(0);
  }

  /** Raw bytes taken but not decided about (from earlier chunks). */
  get pending(): Buffer {
    return this.carry;
  }

  /** buf[s, e) holds string content (no closing quote). `ended`: the closing quote follows at e. */
  read(buf: Buffer, s: number, e: number, ended: boolean): HeadResult {
    // The usual case decides on the first byte: base64 never starts with "d" or an escape.
    if (this.carry.length === 0 && s < e && buf[s] !== 0x64 && buf[s] !== 0x44 && buf[s] !== 0x5c) return { kind: 'plain', replay: this.carry };
    const bytes = this.carry.length ? Buffer.concat([this.carry, buf.subarray(s, Math.min(e, s + MAX_HEADER_CHARS * 6 + 6))]) : buf.subarray(s, e);
    let text = '';
    for (let k = 0; k < bytes.length;) {
      const c = bytes[k]!; // k < bytes.length
      let ch: string;
      let size = 1;
      if (c === 0x5c) {
        if (k + 1 >= bytes.length) break;
        const d = bytes[k + 1]!; // k + 1 < bytes.length
        if (d === 0x75) {
          if (k + 6 > bytes.length) break;
          const digits = bytes.subarray(k + 2, k + 6);
          if (digits.some((h) => HEX_VALUE[h]! < 0)) return this.plain();
          ch = String.fromCharCode(digits.reduce((value, h) => value * 16 + HEX_VALUE[h]!, 0));
          size = 6;
        } else {
          const escaped = JSON_ESCAPES[d];
          if (escaped === undefined) return this.plain(); // an invalid escape: the base64 decoder reports it
          ch = escaped;
          size = 2;
        }
      } else {
        ch = String.fromCharCode(c);
      }
      k += size;
      text += ch;
      if (text.length <= SCHEME.length) {
        if (!SCHEME.startsWith(text.toLowerCase())) return this.plain();
        continue;
      }
      if (ch === ',') return this.data(text, bytes.subarray(0, k), k - this.carry.length + s);
      if (text.length > MAX_HEADER_CHARS) {
        throw new ResponseFormatError(l10n.t('A data URL in the gateway\'s response has no "," within its first {0} characters.', MAX_HEADER_CHARS));
      }
    }
    if (ended) return this.plain();
    this.carry = Buffer.from(bytes);
    return { kind: 'undecided' };
  }

  private plain(): HeadResult {
    const replay = this.carry;
    this.carry = Buffer.alloc(0);
    return { kind: 'plain', replay };
  }

  private data(text: string, raw: Buffer, at: number): HeadResult {
    this.header = Buffer.from(raw);
    this.carry = Buffer.alloc(0);
    const [type = '', ...params] = text.slice(SCHEME.length, -1).split(';');
    if (!params.some((p) => p.trim().toLowerCase() === 'base64')) {
      throw new ResponseFormatError(l10n.t('A data URL in the gateway\'s response is not base64 ("{0}").', text.slice(0, 80)));
    }
    const mediaType = type.trim().toLowerCase();
    return { kind: 'data', at, ...(mediaType.startsWith('image/') ? { mediaType } : {}) };
  }
}
