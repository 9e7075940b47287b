// Thumbnails are decoded in a worker thread: a 4096 px PNG takes about 400 ms to decode, which
// would stall the extension host (and every other extension) while the gallery is scrolled.
// One worker, started on first use and stopped after a quiet minute. No vscode import.
import { Worker } from 'node:worker_threads';

interface Reply {
  id: number;
  thumbnail: Uint8Array | null;
  error?: string;
}

const IDLE_MS = 60_000;

export class ThumbnailWorker {
  private worker?: Worker;
  private next = 0;
  private readonly pending = new Map<number, { resolve: (png: Buffer | undefined) => void; reject: (error: Error) => void }>();
  private idle?: NodeJS.Timeout;

  /** `script`: the worker's code (dist/thumbnails.js, built from thumbnailWorkerMain.ts). */
  constructor(private readonly script: string) {}

  /** A thumbnail of `png` at most `side` pixels wide and high, or undefined when it cannot be decoded. */
  decode = (png: Buffer, side: number): Promise<Buffer | undefined> => {
    const worker = this.start();
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, png, side });
    });
  };

  dispose(): void {
    clearTimeout(this.idle);
    void this.worker?.terminate();
    this.fail(new Error('The thumbnail worker was stopped.'));
  }

  private start(): Worker {
    clearTimeout(this.idle);
    if (this.worker) return this.worker;
    const worker = new Worker(this.script);
    worker.unref(); // never keeps the process alive
    worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.thumbnail ? Buffer.from(reply.thumbnail) : undefined);
      if (!this.pending.size) this.idle = setTimeout(() => this.stop(worker), IDLE_MS).unref();
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      this.fail(new Error('The thumbnail worker exited.'));
    });
    this.worker = worker;
    return worker;
  }

  private stop(worker: Worker): void {
    if (this.worker !== worker || this.pending.size) return;
    this.worker = undefined;
    void worker.terminate();
  }

  private fail(error: Error): void {
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }
}
