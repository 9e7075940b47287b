// What a paid call writes the images of an answer into: the sink and its writers. It sits in the
// gateway's contract, below both the answers' decoders (which write into it) and the paid call (which
// guards it), so that neither room imports the other for it. Pure: no vscode import.

import type { FileHandle } from 'node:fs/promises';

export interface ImageWriter {
  /** Decoded image bytes, in order. Awaited: this is the backpressure. The buffer is handed over (not reused). */
  write(bytes: Buffer): void | Promise<void>;
  /** The image's base64 string ended and was valid. */
  close(): Promise<void>;
  /** Decoding failed or the stream ended early: discard what was written (after `unfinished`, when there is one). */
  abort(reason: Error): Promise<void>;
  /**
   * The image could not be received whole: what arrived of it goes on in the sink's kept answer (see
   * ImageSink.keep). `encoding` 'base64': as text, the base64 of the first `bytes` bytes written,
   * then `text`; 'binary': the first `bytes` bytes as they are. Optional: without it nothing is kept.
   */
  unfinished?(received: { bytes: number; encoding: 'base64' | 'binary'; text?: Buffer }): Promise<void>;
  /** Writes out what is buffered and names the file that holds every byte written so far (to keep them). Optional. */
  received?(): Promise<string>;
}

export interface ImageSink {
  open(index: number): ImageWriter | Promise<ImageWriter>;
  /**
   * The answer's bytes that are not decoded into images, in order: the JSON around the images, and
   * once the answer could not be read, everything that follows as it came. Kept so that nothing paid
   * for is lost; a sink that keeps nothing leaves it out. Must not throw (failures are its own to report).
   */
  keep?(bytes: Buffer): void | Promise<void>;
  /**
   * Creates a file for what cannot be decoded (`<job>-<name>` in the sink's folder): with it, the client
   * keeps that itself (keptAnswer.ts: keep and unfinished are then the client's). Optional.
   */
  createFile?(name: string): Promise<{ file: string; handle: FileHandle }>;
}
