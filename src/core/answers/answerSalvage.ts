// Reads a paid answer that could not be read as it arrived (kept in the recovery folder) again, more
// leniently: every JSON string that holds base64 (under any field name, with a data URL header, with
// stray characters, cut short) is decoded, and kept when its bytes are an image. Streams: the answer
// may be hundreds of MB. Pure: no vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type ImageKind, readImageHead, SNIFF_HEAD_BYTES, sniffImage } from '../images/imageSniff';

export interface SalvagedImage {
  path: string;
  bytes: number;
  kind: ImageKind;
  /** The string was cut short: the image is incomplete. */
  cut: boolean;
  /** Characters that are not base64 in the string, skipped: the image may be damaged. */
  strayCharacters: number;
}

export interface SalvageResult {
  images: SalvagedImage[];
  /**
   * Every string that could hold an image decoded whole and clean: nothing else in the answer is
   * worth keeping. False when an image may be damaged or a long string was no image.
   */
  complete: boolean;
}

const READ_BYTES = 1024 * 1024;
/** A string is sniffed once this many base64 characters are in (their 3072 bytes hold any image's magic). */
const SNIFF_CHARS = 4096;
/** What is kept of a string's first characters, to start again where an image begins after a stray prefix. */
const LEADING_CHARS = 64 * 1024;
/** How images begin in base64 (PNG, JPEG, WebP, GIF, an XML declaration, <svg): where one starts after a prefix such as "base64," or b'. */
const IMAGE_STARTS = ['iVBORw0KGgo', '/9j/', 'UklGR', 'R0lGOD', 'PD94bWw', 'PHN2Zy'];
/** A string this long that is no image may be one that is damaged beyond reading: the answer is kept. */
const LONG_STRING = 4096;
const MAX_HEADER = 1024;
const STAGE_CHARS = 256 * 1024;
const SCHEME = 'data:';

/** Base64 classes for lenient decoding: 1 data, 2 ignored (whitespace, padding), 0 a stray character. */
const CLASS = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_') CLASS[c.charCodeAt(0)] = 1;
for (const c of ' \t\r\n=') CLASS[c.charCodeAt(0)] = 2;

/**
 * Decodes the images in `file` into `<dir>/<baseName>-<k>.<ext>`. A file that is an image itself
 * (an image body cut short) is returned as it is.
 */
export async function salvageAnswer(file: string, dir: string, baseName: string): Promise<SalvageResult> {
  const head = await readImageHead(file);
  const itself = sniffImage(head);
  if (itself) return { images: [{ path: file, bytes: (await fs.stat(file)).size, kind: itself, cut: true, strayCharacters: 0 }], complete: false };
  const text = head
    .toString('latin1')
    .replace(/^\xef\xbb\xbf/, '')
    .trimStart();
  const scanner = new Scanner(dir, baseName, !(text.startsWith('{') || text.startsWith('[')));
  const handle = await fs.open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(READ_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, READ_BYTES, null);
      if (bytesRead === 0) break;
      await scanner.feed(buf.subarray(0, bytesRead));
    }
    await scanner.end();
  } finally {
    await handle.close();
    await scanner.close();
  }
  return { images: scanner.images, complete: scanner.complete };
}

const enum Phase {
  /** Checking whether the string opens with "data:". */
  Scheme,
  /** Inside a data URL header, up to its comma. */
  Header,
  Data,
  /** Decided: not an image; the rest of the string is skipped. */
  Skip,
}

/** File work decided while scanning a chunk, done after it (scanning stays synchronous). */
type Action = { kind: 'open'; image: ImageKind; head: Buffer } | { kind: 'write'; bytes: Buffer } | { kind: 'close'; cut: boolean; strayCharacters: number };

/** Finds the strings of a JSON text and decodes each one leniently as it is read. */
class Scanner {
  readonly images: SalvagedImage[] = [];
  complete = true;
  private inString: boolean;
  /** 0: no escape; 1: after a backslash; 2..5: reading \uXXXX digits. */
  private escape = 0;
  private unicode = 0;
  private phase = Phase.Scheme;
  private schemeText = '';
  private headerChars = 0;
  private chars = 0;
  private stray = 0;
  private readonly staging = Buffer.allocUnsafe(STAGE_CHARS + 8);
  private staged = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  /** Not yet known whether the string is an image: its characters are kept in `leading`. */
  private sniffing = true;
  private leading = '';
  private restarted = false;
  /** The current string is an image: its bytes go to a file. */
  private imageOpen = false;
  private actions: Action[] = [];
  private output: { handle: fs.FileHandle; file: string; kind: ImageKind; bytes: number } | undefined;

  constructor(
    private readonly dir: string,
    private readonly baseName: string,
    /** Not JSON: the whole text is one string (base64 as plain text, a bare data URL). */
    private readonly whole: boolean,
  ) {
    this.inString = whole;
  }

  async feed(buf: Buffer): Promise<void> {
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i]!; // i < buf.length
      if (!this.inString) {
        if (c === 0x22) this.startString();
      } else if (this.escape === 1) {
        this.escape = 0;
        if (c === 0x75) {
          this.escape = 2;
          this.unicode = 0;
        } else if (c === 0x2f) this.char(0x2f);
        else if (c !== 0x6e && c !== 0x72 && c !== 0x74) this.char(0); // \" \\ \b \f: not base64
      } else if (this.escape >= 2) {
        const digit = HEX.indexOf(String.fromCharCode(c).toLowerCase());
        this.unicode = this.unicode * 16 + Math.max(0, digit);
        if (++this.escape === 6) {
          this.escape = 0;
          this.char(this.unicode < 0x100 ? this.unicode : 0);
        }
      } else if (!this.whole && c === 0x5c) this.escape = 1;
      else if (!this.whole && c === 0x22) this.endString(false);
      else this.char(c);
    }
    await this.act();
  }

  async end(): Promise<void> {
    // An answer cut inside a string: what arrived of it is decoded too.
    if (this.inString) this.endString(!this.whole);
    await this.act();
  }

  async close(): Promise<void> {
    await this.output?.handle.close().catch(() => undefined);
    this.output = undefined;
  }

  private startString(): void {
    this.inString = true;
    this.phase = Phase.Scheme;
    this.schemeText = '';
    this.headerChars = 0;
    this.chars = 0;
    this.stray = 0;
    this.staged = 0;
    this.head = [];
    this.headBytes = 0;
    this.imageOpen = false;
    this.sniffing = true;
    this.leading = '';
    this.restarted = false;
  }

  /** One character of string content (0: a character that is not base64). */
  private char(c: number): void {
    this.chars++;
    if (this.phase === Phase.Data) this.dataChar(c);
    else if (this.phase === Phase.Scheme) {
      this.schemeText += String.fromCharCode(c).toLowerCase();
      if (!SCHEME.startsWith(this.schemeText)) {
        this.phase = Phase.Data;
        for (let k = 0; k < this.schemeText.length; k++) this.dataChar(this.schemeText.charCodeAt(k));
      } else if (this.schemeText === SCHEME) this.phase = Phase.Header;
    } else if (this.phase === Phase.Header) {
      if (c === 0x2c) this.phase = Phase.Data;
      else if (++this.headerChars > MAX_HEADER) this.phase = Phase.Skip;
    }
  }

  private dataChar(c: number): void {
    if (this.sniffing && this.leading.length < LEADING_CHARS) this.leading += String.fromCharCode(c);
    const cls = CLASS[c];
    if (cls === 1) {
      this.staging[this.staged++] = c === 0x2d ? 0x2b : c === 0x5f ? 0x2f : c;
      if (this.staged >= (this.sniffing ? SNIFF_CHARS : STAGE_CHARS)) this.decode(false);
    } else if (cls === 0) this.stray++;
  }

  /** Decodes the staged characters (all of them at the string's end, else in groups of 4). */
  private decode(last: boolean): void {
    const take = last ? this.staged : this.staged & ~3;
    if (take === 0) return;
    const text = this.staging.toString('latin1', 0, take);
    this.staging.copy(this.staging, 0, take, this.staged);
    this.staged -= take;
    const bytes = Buffer.from(take % 4 === 1 ? text.slice(0, -1) : text, 'base64');
    if (this.imageOpen) {
      this.actions.push({ kind: 'write', bytes });
      return;
    }
    this.head.push(bytes);
    this.headBytes += bytes.length;
    if (this.headBytes >= SNIFF_HEAD_BYTES || last) this.decide();
  }

  /** Enough is decoded to tell: an image goes on into a file, anything else is skipped. */
  private decide(): void {
    const head = Buffer.concat(this.head, this.headBytes);
    this.head = [];
    this.headBytes = 0;
    const image = sniffImage(head);
    if (image) {
      this.sniffing = false;
      this.imageOpen = true;
      this.actions.push({ kind: 'open', image, head });
      return;
    }
    // A stray prefix ("base64,", b'): start again where an image begins, once.
    const start =
      this.restarted || this.leading.length >= LEADING_CHARS ? -1 : Math.min(...IMAGE_STARTS.map((m) => this.leading.indexOf(m)).filter((at) => at > 0));
    if (Number.isFinite(start) && start > 0) {
      const rest = this.leading.slice(start);
      this.restarted = true;
      this.leading = '';
      this.staged = 0;
      this.stray = start;
      for (let k = 0; k < rest.length; k++) this.dataChar(rest.charCodeAt(k));
      return;
    }
    this.sniffing = false;
    this.phase = Phase.Skip;
    this.staged = 0;
  }

  private endString(cut: boolean): void {
    this.inString = false;
    this.escape = 0;
    if (this.phase === Phase.Data) this.decode(true);
    // A start again at the very end (decide, above) left the characters from the image's start staged.
    if (this.phase === Phase.Data && this.staged > 0) this.decode(true);
    if (this.sniffing && this.headBytes > 0) this.decide();
    if (this.imageOpen) this.actions.push({ kind: 'close', cut, strayCharacters: this.stray });
    else if (this.chars >= LONG_STRING) this.complete = false;
    this.imageOpen = false;
  }

  /** Does the file work the scan decided, in order. */
  private async act(): Promise<void> {
    const actions = this.actions;
    this.actions = [];
    for (const action of actions) {
      if (action.kind === 'open') {
        this.output = { ...(await this.create(action.image)), kind: action.image, bytes: 0 };
        await this.write(action.head);
      } else if (action.kind === 'write') {
        await this.write(action.bytes);
      } else if (this.output) {
        const { handle, file, kind, bytes } = this.output;
        this.output = undefined;
        await handle.sync();
        await handle.close();
        this.images.push({ path: file, bytes, kind, cut: action.cut, strayCharacters: action.strayCharacters });
        if (action.cut || action.strayCharacters) this.complete = false;
      }
    }
  }

  private async write(bytes: Buffer): Promise<void> {
    if (!this.output) return;
    await writeAll(this.output.handle, bytes);
    this.output.bytes += bytes.length;
  }

  /** `<baseName>-<k>.<ext>`, k from 1, never over an existing file. */
  private async create(image: ImageKind): Promise<{ handle: fs.FileHandle; file: string }> {
    for (let k = this.images.length + 1; ; k++) {
      const file = path.join(this.dir, `${this.baseName}-${k}.${image.extension}`);
      try {
        return { handle: await fs.open(file, 'wx'), file };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  }
}

const HEX = '0123456789abcdef';

async function writeAll(handle: fs.FileHandle, bytes: Buffer): Promise<void> {
  for (let written = 0; written < bytes.length;) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten;
}
