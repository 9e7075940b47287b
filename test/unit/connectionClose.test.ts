// A gateway that closes the connection after its answer (`Connection: close`, then FIN), while the
// paid answer is still being written to a slow disk. undici 7 throws an uncatchable AssertionError
// when the socket ends while its parser is paused under backpressure (nodejs/undici#5360), and fails
// a kept-alive answer cut by a close with "other side closed"; a gateway may answer that way on its
// own. The image must be saved whole and nothing may be thrown outside the call (mocha fails a test
// on an uncaught exception). These tests fail without the mend (patches/undici@7.30.2.patch, loaded
// by .mocharc.unit.json's preload as the bundle has it: see undiciMend.test.ts).
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayClient } from '../../src/core/client/client';
import type { ImageSink, ImageWriter } from '../../src/core/gateway/imageSink';
import { paddedPngParts, paintPng } from '../../tools/emulator/png';
import { DEMO_KEYS, type LocalServer, localServer } from './support/gateway';

/** A disk that takes its time: each write waits, which pauses undici's parser. */
class SlowSink implements ImageSink {
  readonly images = new Map<number, Buffer>();
  open(index: number): ImageWriter {
    const parts: Buffer[] = [];
    return {
      write: async (bytes) => {
        parts.push(Buffer.from(bytes));
        await sleep(2);
      },
      close: async () => void this.images.set(index, Buffer.concat(parts)),
      abort: async () => undefined,
    };
  }
}

const ROUNDS = 10;

/** Answers each request with `answer`, then ends the connection. */
type Framing = 'content-length' | 'chunked' | 'until close' | 'content-length, closed without saying so';

async function closingGateway(framing: Framing, answer: () => string): Promise<LocalServer> {
  if (framing === 'content-length' || framing === 'chunked') {
    const server = await localServer((_request, res) => {
      const body = answer();
      const headers: Record<string, string> = { 'content-type': 'application/json', connection: 'close' };
      if (framing === 'content-length') headers['content-length'] = String(Buffer.byteLength(body));
      res.writeHead(200, headers);
      res.end(body);
    });
    return server;
  }
  // Written by hand. 'until close': HTTP/1.0 style, no length, the end of the answer is the end of the
  // connection. 'closed without saying so': a length, no `Connection: close`, and the connection
  // ended right after the answer, as tinyproxy does (the client takes the answer for a kept-alive one).
  const server = net.createServer((socket) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const headerEnd = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(received)?.[1] ?? 0);
      if (headerEnd < 0 || received.length < headerEnd + 4 + length) return;
      const body = answer();
      const head = framing === 'until close' ? 'connection: close' : `content-length: ${Buffer.byteLength(body)}`;
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${head}\r\n\r\n${body}`);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    requests: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a gateway that closes the connection after its paid answer', function () {
  this.timeout(60_000);
  let server: LocalServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  for (const framing of ['content-length', 'chunked', 'until close', 'content-length, closed without saying so'] as const) {
    it(`${framing}: ${ROUNDS} answers of 1-3 MB written to a slow disk are saved whole`, async () => {
      let png = Buffer.alloc(0);
      server = await closingGateway(framing, () => JSON.stringify({ created: 1, data: [{ b64_json: png.toString('base64') }], usage: { cost_rub: 1.5 } }));
      const client = new GatewayClient({ baseUrl: server.url, getApiKey: () => DEMO_KEYS.unlimited, paidTimeoutMs: 30_000 });
      try {
        for (let i = 0; i < ROUNDS; i++) {
          png = Buffer.concat(paddedPngParts(paintPng({ width: 32, height: 32, transparent: false, identity: `closing ${i}` }), 1_000_000 + i * 200_000));
          const sink = new SlowSink();
          const meta = await client.generate({ model: 'aurora-1', prompt: `closing ${i}`, size: '64x64' }, sink);
          assert.ok(sink.images.get(0)?.equals(png), `answer ${i + 1}: the image, whole`);
          assert.equal(meta.usage?.cost_rub, 1.5);
        }
      } finally {
        await client.close();
      }
    });
  }
});
