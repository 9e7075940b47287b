// Small byte-level helpers of the streaming JSON decoder (generationStream.ts). Pure: no vscode import.

import * as l10n from '@vscode/l10n';

/**
 * Finds the next occurrence of one byte in a buffer with Buffer.indexOf (native memchr), remembering
 * the last answer so that repeated questions from increasing positions never rescan the same bytes:
 * a chunk with many short strings stays O(n) even when the byte does not occur at all.
 */
export class ByteFinder {
  private buf: Buffer = Buffer.alloc(0);
  private from = 0;
  /** -2: nothing cached; -1: no occurrence at or after `from`; else the first occurrence at or after `from`. */
  private at = -2;

  constructor(private readonly byte: number) {}

  reset(buf: Buffer): void {
    this.buf = buf;
    this.at = -2;
  }

  /** The first index >= i holding the byte, or -1. */
  find(i: number): number {
    const at = this.at;
    if (at !== -2 && i >= this.from && (at === -1 || i <= at)) return at;
    this.from = i;
    this.at = this.buf.indexOf(this.byte, i);
    return this.at;
  }
}

/** 1 for the characters a JSON number can contain: 0-9 + - . e E */
export const NUMBER_CHAR = new Uint8Array(256);
for (const c of '0123456789+-.eE') NUMBER_CHAR[c.charCodeAt(0)] = 1;

const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

export function isValidJsonNumber(text: string): boolean {
  return JSON_NUMBER.test(text);
}

/** Value of a hex digit, -1 for any other byte. */
export const HEX_VALUE = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) {
  HEX_VALUE['0123456789abcdef'.charCodeAt(d)] = d;
  HEX_VALUE['0123456789ABCDEF'.charCodeAt(d)] = d;
}

/** A byte for an error message: 'x' for printable ASCII (quoted unless quote is false), else 0xNN. */
export function describeByte(c: number, quote = true): string {
  if (c > 0x20 && c < 0x7f) return quote ? `'${String.fromCharCode(c)}'` : String.fromCharCode(c);
  return l10n.t('byte 0x{0}', c.toString(16).toUpperCase().padStart(2, '0'));
}

/** The JSON type found where another was expected (`found` as the parser names it), in the display language. */
export function describeJsonType(found: string): string {
  switch (found) {
    case 'an object':
      return l10n.t('an object');
    case 'an array':
      return l10n.t('an array');
    case 'a string':
      return l10n.t('a string');
    case 'a number':
      return l10n.t('a number');
    case 'a boolean':
      return l10n.t('a boolean');
    default:
      return found; // null
  }
}
