// One JSON string that holds an image: data[i].b64_json, or data[i].url when it holds a data URL.
// Strips a data URL header (its media type is a hint), decodes the base64 as it arrives, and can
// say what of the string arrived when decoding fails, so that it is kept rather than lost.
// Pure: no vscode import.
import { Base64Decoder } from './base64Stream';
import { DataUrlHead } from './dataUrl';
import { ByteFinder } from './jsonScanner';

/** What arrived of an image string that could not be decoded to its end. */
export interface ReceivedImageText {
  /** The first this many bytes written for the image are good (a multiple of 3: their base64 has no padding). */
  decodedBytes: number;
  /** The string's characters after them, as JSON text (a data URL header first, when there was one). */
  text: Buffer;
}

export class ImageString {
  private readonly decoder = new Base64Decoder();
  private readonly head = new DataUrlHead();
  private readonly replayBackslashes = new ByteFinder(0x5c);
  private deciding = true;
  private isUrl = false;
  /** A `url` that holds no data URL: its characters are skipped. */
  private skipping = false;
  private onOpen: () => void = () => undefined;
  /**
   * What had arrived when the last feed began (a feed that fails is kept from its start, as it came)
   * while the header was still read; once decoding, the decoder's checkpoint holds it.
   */
  private mark: ReceivedImageText | undefined;
  private failedInFeed = false;
  /** The data URL's media type, if the string was one. */
  mediaType: string | undefined;
  /** Decoding started: always for b64_json, for a url once it turned out a data URL. */
  opened = false;

  /** A new string; `onOpen` is called when a url turns out to hold a data URL (b64_json is open from the start). */
  begin(label: string, emit: (bytes: Buffer) => void, role: 'base64' | 'url', onOpen: () => void = () => undefined): void {
    this.decoder.reset(label, emit);
    this.head.reset();
    this.deciding = true;
    this.isUrl = role === 'url';
    this.skipping = false;
    this.onOpen = onOpen;
    this.failedInFeed = false;
    this.mediaType = undefined;
    this.opened = !this.isUrl;
  }

  get inEscape(): boolean {
    return !this.skipping && this.decoder.inEscape;
  }

  /**
   * String content buf[s, e) (no closing quote; `ended`: it closes at e). Returns the bytes of earlier
   * chunks that a url turned out not to need (they are plain text: the caller keeps them with the
   * rest of the answer), once; otherwise undefined.
   */
  feed(buf: Buffer, s: number, e: number, backslashes: ByteFinder, ended: boolean): Buffer | undefined {
    if (this.skipping) return undefined;
    if (this.deciding) {
      this.mark = { decodedBytes: 0, text: this.head.pending };
    } else {
      this.mark = undefined;
      this.decoder.checkpoint();
    }
    this.failedInFeed = true;
    let plainUrl: Buffer | undefined;
    if (this.deciding) {
      const head = this.head.read(buf, s, e, ended);
      if (head.kind === 'undecided') {
        this.failedInFeed = false;
        return undefined;
      }
      this.deciding = false;
      if (head.kind === 'plain' && this.isUrl) {
        this.skipping = true;
        plainUrl = head.replay;
      } else if (head.kind === 'plain') {
        if (head.replay.length) {
          this.replayBackslashes.reset(head.replay);
          this.decoder.feed(head.replay, 0, head.replay.length, this.replayBackslashes);
        }
      } else {
        this.mediaType = head.mediaType;
        s = head.at;
        if (this.isUrl) {
          this.opened = true;
          this.onOpen();
        }
      }
    }
    if (!this.skipping && e > s) this.decoder.feed(buf, s, e, backslashes);
    this.failedInFeed = false;
    return plainUrl;
  }

  /** The closing quote was reached (after feed). */
  end(): void {
    if (this.skipping || !this.opened) return;
    this.failedInFeed = true;
    this.decoder.end();
    this.failedInFeed = false;
  }

  /**
   * What arrived of the string: when the last feed failed, what had arrived when it began (the
   * caller keeps that feed's bytes as they came); otherwise everything so far.
   */
  received(): ReceivedImageText {
    if (this.failedInFeed && this.mark) return this.mark;
    if (this.deciding) return { decodedBytes: 0, text: this.head.pending };
    const { decodedBytes, text } = this.failedInFeed
      ? this.decoder.atCheckpoint()
      : { decodedBytes: this.decoder.decodedBytes, text: this.decoder.pendingText() };
    return { decodedBytes, text: this.head.header.length ? Buffer.concat([this.head.header, text]) : text };
  }
}
