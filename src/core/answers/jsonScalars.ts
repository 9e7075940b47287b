// Numbers and literals (true, false, null) of a generation response, read as they arrive: a number
// may be split over chunks, so its text is gathered until a byte that cannot be part of it. The
// structure around them is generationParser.ts's. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { ResponseFormatError } from '../gateway/errors';
import { NUMBER_CHAR, isValidJsonNumber } from './jsonScanner';

const MAX_NUMBER = 1024;

const LITERALS: Record<number, Buffer> = {
  0x74: Buffer.from('true'),
  0x66: Buffer.from('false'),
  0x6e: Buffer.from('null'),
};

export class JsonScalarReader {
  private numberText = '';
  private literal: Buffer = LITERALS[0x6e]!;
  private literalMatched = 0;
  /** The number read last, once scanNumber saw where it ends. */
  number = 0;

  /** Whether byte c starts a literal (t, f, n). */
  static startsLiteral(c: number): boolean {
    return LITERALS[c] !== undefined;
  }

  beginNumber(): void {
    this.numberText = '';
  }

  /**
   * Reads a number's characters from buf[i..n). Returns n while the number may go on in the next
   * chunk; otherwise the index after it, with `number` set. `offset`: bytes of the body before buf.
   */
  scanNumber(buf: Buffer, i: number, n: number, offset: number): number {
    const start = i;
    while (i < n && NUMBER_CHAR[buf[i]!] === 1) i++;
    if (i > start) {
      this.numberText += buf.toString('latin1', start, i);
      if (this.numberText.length > MAX_NUMBER) {
        throw new ResponseFormatError(l10n.t("The gateway's response has a number that is too long (near byte {0}).", offset + i));
      }
    }
    if (i === n) return n;
    if (!isValidJsonNumber(this.numberText)) {
      throw new ResponseFormatError(l10n.t("The gateway's response has an invalid number '{0}' before byte {1}.", this.numberText, offset + i));
    }
    this.number = Number(this.numberText);
    return i;
  }

  /** Starts the literal whose first byte is c (see startsLiteral). */
  beginLiteral(c: number): void {
    this.literal = LITERALS[c]!;
    this.literalMatched = 0;
  }

  /** The literal being read, as written ('true', 'false', 'null'). */
  get literalText(): string {
    return this.literal.toString();
  }

  get literalDone(): boolean {
    return this.literalMatched === this.literal.length;
  }

  /** Matches the literal's bytes from buf[i..n). Returns where it stopped: n, the literal's end, or a byte that does not match (literalDone false). */
  scanLiteral(buf: Buffer, i: number, n: number): number {
    const literal = this.literal;
    while (i < n && this.literalMatched < literal.length) {
      if (buf[i] !== literal[this.literalMatched]) return i;
      i++;
      this.literalMatched++;
    }
    return i;
  }
}
