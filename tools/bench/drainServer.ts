// A server that only drains what it is sent and answers one tiny image: the upload rows send to it,
// so that the emulator's buffering and parsing of 100+ MB stays out of the comparison.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A 1×1 PNG: the whole answer of the draining server is one tiny image. */
const TINY_PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const ANSWER = JSON.stringify({
  created: 0,
  model: 'mosaic-edit',
  data: [{ b64_json: TINY_PNG_B64, media_type: 'image/png' }],
  usage: { cost_rub: 1, balance: 1000 },
});

export interface DrainServer {
  url: string;
  port: number;
  /** Body bytes received by the last request. */
  lastBodyBytes: number;
  /** Hash the bodies (SHA-256 costs more than draining: only for the untimed check of the limit's bytes). */
  hashing: boolean;
  /** SHA-256 of the last body, when hashing. */
  lastSha256?: string;
  close(): Promise<void>;
}

/** Reads every body byte and throws it away, then answers with one tiny image. */
export async function startDrainServer(): Promise<DrainServer> {
  const drain: DrainServer = { url: '', port: 0, lastBodyBytes: 0, hashing: false, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let bytes = 0;
    const hash = drain.hashing ? createHash('sha256') : undefined;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      hash?.update(chunk);
    });
    req.on('end', () => {
      drain.lastBodyBytes = bytes;
      drain.lastSha256 = hash?.digest('hex');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  drain.port = (server.address() as AddressInfo).port;
  drain.url = `http://127.0.0.1:${drain.port}`;
  drain.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return drain;
}
