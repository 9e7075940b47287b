// The streaming decoder when things fail around it (the body, the sink, the caller's cancel), and
// the memory it holds while answers of hundreds of megabytes stream through it.
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import type { ImageSink } from '../../src/core/gateway/imageSink';
import { decodeGenerationStream } from '../../src/core/answers/generationStream';
import { CancelledError } from '../../src/core/gateway/errors';
import { prng } from '../../tools/emulator/png';
import { buildBody, chunked, RecordingSink } from './support/generationBodies';

describe('decodeGenerationStream', function () {
  // Large bodies are CPU-bound; keep it robust on a loaded machine.
  this.timeout(120_000);

  describe('errors of the body, the sink and the signal', () => {
    async function* stalling(first: Buffer): AsyncGenerator<Uint8Array> {
      yield first;
      await new Promise(() => undefined); // never resolves
    }

    it('an abort while waiting for the body: the open writer is aborted, the reason is thrown', async () => {
      const img = crypto.randomBytes(30_000).toString('base64');
      const first = Buffer.from(`{"data":[{"b64_json":"${img.slice(0, 20_000)}`);
      const controller = new AbortController();
      const sink = new RecordingSink();
      const reason = new Error('stop now');
      const promise = decodeGenerationStream(stalling(first), sink, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 20);
      await assert.rejects(promise, (e) => e === reason);
      assert.equal(sink.writers.length, 1);
      assert.equal(sink.writers[0]!.abortCount, 1);
      assert.equal(sink.writers[0]!.aborted, reason);
      assert.equal(sink.writers[0]!.closed, false);
    });

    it('an abort without a reason gives a CancelledError', async () => {
      const controller = new AbortController();
      const sink = new RecordingSink();
      const promise = decodeGenerationStream(stalling(Buffer.from('{"data":[{"b64_json":"YWJj')), sink, { signal: controller.signal });
      setTimeout(() => controller.abort(), 10);
      await assert.rejects(promise, CancelledError);
      assert.equal(sink.writers[0]!.abortCount, 1);
    });

    it('an already aborted signal: nothing is read or opened', async () => {
      const controller = new AbortController();
      controller.abort();
      let read = false;
      async function* body(): AsyncGenerator<Uint8Array> {
        read = true;
        yield Buffer.from('{"data":[]}');
      }
      const sink = new RecordingSink();
      await assert.rejects(decodeGenerationStream(body(), sink, { signal: controller.signal }), CancelledError);
      assert.equal(read, false);
      assert.equal(sink.writers.length, 0);
    });

    it('an abort during a slow write stops decoding', async () => {
      const imgs = [crypto.randomBytes(2_000_000)];
      const built = buildBody(imgs);
      const controller = new AbortController();
      let writes = 0;
      let aborted: Error | undefined;
      const sink: ImageSink = {
        open: () => ({
          write: async () => {
            if (++writes === 3) controller.abort(new Error('user'));
            await new Promise((r) => setTimeout(r, 1));
          },
          close: async () => assert.fail('must not close'),
          abort: async (r) => {
            aborted = r;
          },
        }),
      };
      await assert.rejects(decodeGenerationStream(chunked(built.body, 65536), sink, { signal: controller.signal }), /user/);
      assert.equal(writes, 3);
      assert.match(String(aborted), /user/);
    });

    it('a body that fails mid-stream: the error passes through and the writer is aborted', async () => {
      const failure = new Error('socket hang up');
      async function* body(): AsyncGenerator<Uint8Array> {
        yield Buffer.from('{"data":[{"b64_json":"YWJj');
        throw failure;
      }
      const sink = new RecordingSink();
      await assert.rejects(decodeGenerationStream(body(), sink), (e) => e === failure);
      assert.equal(sink.writers[0]!.aborted, failure);
    });

    it('a sink whose write fails: that error is thrown, the writer aborted, the body stopped', async () => {
      const failure = new Error('disk full');
      let returned = false;
      const built = buildBody([crypto.randomBytes(1_000_000)]);
      async function* body(): AsyncGenerator<Uint8Array> {
        try {
          for (let i = 0; i < built.body.length; i += 65536) yield built.body.subarray(i, i + 65536);
        } finally {
          returned = true;
        }
      }
      let abortedWith: Error | undefined;
      const sink: ImageSink = {
        open: async () => ({
          write: () => {
            throw failure;
          },
          close: async () => undefined,
          abort: async (r) => {
            abortedWith = r;
          },
        }),
      };
      await assert.rejects(decodeGenerationStream(body(), sink), (e) => e === failure);
      assert.equal(abortedWith, failure);
      await new Promise((r) => setImmediate(r));
      assert.ok(returned, 'the body iterator was returned');
    });

    it('a sink whose close fails: the writer is aborted and the error thrown', async () => {
      const failure = new Error('rename failed');
      let aborted = 0;
      const sink: ImageSink = {
        open: () => ({
          write: () => undefined,
          close: async () => {
            throw failure;
          },
          abort: async () => {
            aborted++;
          },
        }),
      };
      await assert.rejects(decodeGenerationStream(chunked(Buffer.from('{"data":[{"b64_json":"YQ=="}]}'), 4), sink), (e) => e === failure);
      assert.equal(aborted, 1);
    });
  });

  describe('size', () => {
    it('streams a ~200 MB body generated lazily with bounded memory', async function () {
      this.timeout(120_000);
      // A block of base64 text repeated; each image is REPEATS blocks. A 20 MB unknown string comes first.
      const blockBytes = crypto.randomBytes(768 * 1024);
      const block = Buffer.from(blockBytes.toString('base64'), 'latin1'); // 1 MiB of base64
      const REPEATS = 60;
      const IMAGES = 3;
      const head = Buffer.from('{"created":1,"note":"');
      const filler = Buffer.alloc(1 << 20, 'x');
      async function* body(): AsyncGenerator<Uint8Array> {
        const rng = prng(9);
        // Yields `buf` in random chunks (1 B .. 128 KiB).
        function* pieces(buf: Buffer): Generator<Buffer> {
          for (let i = 0; i < buf.length;) {
            const n = 1 + Math.floor(rng() * 128 * 1024);
            yield buf.subarray(i, i + n);
            i += n;
          }
        }
        yield head;
        for (let k = 0; k < 20; k++) yield* pieces(filler);
        yield Buffer.from('","data":[');
        for (let i = 0; i < IMAGES; i++) {
          yield Buffer.from(`${i ? ',' : ''}{"b64_json":"`);
          for (let r = 0; r < REPEATS; r++) yield* pieces(block);
          yield Buffer.from(`","media_type":"image/png"}`);
        }
        yield Buffer.from('],"usage":{"cost_rub":3,"balance":4}}');
      }
      const expectedHash = crypto.createHash('sha256');
      for (let r = 0; r < REPEATS; r++) expectedHash.update(blockBytes);
      const expected = expectedHash.digest('hex');

      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      const counts: number[] = [];
      const hashes: string[] = [];
      let writes = 0;
      const sink: ImageSink = {
        open: (index) => {
          const hash = crypto.createHash('sha256');
          counts[index] = 0;
          return {
            write: (bytes) => {
              counts[index]! += bytes.length;
              hash.update(bytes);
              if (++writes % 64 === 0) peak = Math.max(peak, process.memoryUsage().rss);
            },
            close: async () => {
              hashes[index] = hash.digest('hex');
            },
            abort: async () => assert.fail('no abort'),
          };
        },
      };
      const meta = await decodeGenerationStream(body(), sink);
      peak = Math.max(peak, process.memoryUsage().rss);
      assert.deepEqual(meta, {
        created: 1,
        usage: { cost_rub: 3, balance: 4 },
        images: [0, 1, 2].map((index) => ({ index, mediaType: 'image/png' })),
      });
      assert.deepEqual(
        counts,
        [0, 1, 2].map(() => REPEATS * blockBytes.length),
      );
      assert.deepEqual(hashes, [expected, expected, expected]);
      const growth = (peak - baseline) / (1 << 20);
      assert.ok(growth < 100, `RSS grew by ${growth.toFixed(1)} MiB`);
    });
  });
});
