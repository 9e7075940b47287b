// Images answered as addresses (the url-images form): GET /files/<request id>/<i>.<ext> serves them,
// on the emulator's own origin and on a second port (another origin, url-other-origin). Every
// download is recorded with whether it carried an Authorization header, and the download-* faults
// apply here: a 404, an HTML page, bytes that are no image, another image type, a body too large,
// a connection cut, a body that stalls.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { faultsFromHeaders } from './faults';
import { paddedPngParts } from './png';
import { drain, sleep } from './respond';
import type { EmulatorState, RecordedDownload } from './state';

/** The download-large fault's size when the fault gives none: above any client's 50 MiB limit. */
export const DEFAULT_DOWNLOAD_LARGE_BYTES = 64 * 1024 * 1024;
/** How long download-stall holds the rest of the body when the fault gives no latencyMs. */
const DEFAULT_STALL_MS = 60_000;
/** A 1×1 GIF: an image, but not the PNG the answer said. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NOT_AN_IMAGE = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1');
const HTML = '<!doctype html><html><head><title>Your image</title></head><body>Your image is ready: <a href="/download">download</a></body></html>';

/** The path an image of a paid request is served at. */
export function filePath(requestId: string, index: number, mediaType: string): string {
  return `/files/${requestId}/${index}.${mediaType === 'image/svg+xml' ? 'svg' : 'png'}`;
}

/** Answers one download; resolves to the status sent (0 when the connection was cut before any). */
export async function serveFile(
  req: IncomingMessage,
  res: ServerResponse,
  state: EmulatorState,
  origin: RecordedDownload['origin'],
  shutdown: AbortSignal,
): Promise<number> {
  const path = new URL(req.url ?? '/', 'http://emulator').pathname;
  const entry = state.recordDownload(path, origin, req.headers.authorization !== undefined);
  const faults = faultsFromHeaders(req.headers);
  if (req.method === 'GET') state.faults.take('download', faults);
  else faults.names.clear();
  entry.faults = [...faults.names];
  const send = (status: number, type: string, body: Buffer | string) => {
    entry.status = status;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
    return status;
  };
  const file = state.files.get(path);
  if (req.method !== 'GET') return send(405, 'text/plain', 'Use GET.');
  if (!file || faults.names.has('download-404')) return send(404, 'text/plain', 'Not found.');
  if (faults.names.has('download-html')) return send(200, 'text/html; charset=utf-8', HTML);
  if (faults.names.has('download-not-image')) return send(200, 'application/octet-stream', NOT_AN_IMAGE);
  if (faults.names.has('download-other-type')) return send(200, 'image/gif', GIF);
  if (faults.names.has('download-large')) {
    entry.status = 200;
    res.writeHead(200, { 'content-type': file.mediaType });
    for (const part of paddedPngParts(file.bytes, faults.imageBytes ?? DEFAULT_DOWNLOAD_LARGE_BYTES)) {
      if (res.destroyed) return 200;
      if (!res.write(part)) await drain(res);
    }
    res.end();
    return 200;
  }
  const cut = faults.names.has('download-drop') || faults.names.has('download-stall');
  if (!cut) return send(200, file.mediaType, file.bytes);
  entry.status = 200;
  res.writeHead(200, { 'content-type': file.mediaType, 'content-length': file.bytes.length });
  res.write(file.bytes.subarray(0, Math.max(1, Math.floor(file.bytes.length / 2))));
  if (faults.names.has('download-stall')) {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    await sleep(faults.latencyMs ?? DEFAULT_STALL_MS, AbortSignal.any([gone.signal, shutdown]));
  }
  res.destroy();
  return 200;
}

/** The second origin: the same files on another port, started when an answer first points there. */
export class OtherOrigin {
  private server: Server | undefined;
  private started: Promise<string> | undefined;

  constructor(
    private readonly state: EmulatorState,
    private readonly host: string,
    private readonly shutdown: AbortSignal,
  ) {}

  /** Its base URL (http://host:port), listening. */
  url(): Promise<string> {
    this.started ??= new Promise<string>((resolve, reject) => {
      const server = createServer((req, res) => void this.answer(req, res));
      this.server = server;
      server.once('error', reject);
      server.listen(0, this.host, () => {
        const { address, port, family } = server.address() as AddressInfo;
        resolve(`http://${family === 'IPv6' ? `[${address}]` : address}:${port}`);
      });
    });
    return this.started;
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await serveFile(req, res, this.state, 'other', this.shutdown);
    } catch {
      res.destroy();
    }
  }
}
