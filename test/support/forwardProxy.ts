// A real forwarding HTTP proxy on loopback, for tests (unit and inside VS Code's extension host).
// It forwards absolute-URI requests (GET http://host/path) and tunnels CONNECT, and counts what
// passed through. It can drop the client's connection in the middle of a paid answer, and ask for
// credentials (407) as an authenticating corporate proxy does.
// No vscode import: the unit tests and the integration tests share it.
import * as http from 'node:http';
import * as net from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** The absolute URI the client asked for. */
  url: string;
  /** Whether the client sent a Proxy-Authorization header (its value is not kept). */
  proxyAuthorization: boolean;
  /** Refused with 407 (requireAuthorization): it went no further. */
  refused?: boolean;
}

export interface ProxiedTunnel {
  /** host:port of the CONNECT request. */
  target: string;
  proxyAuthorization: boolean;
  refused?: boolean;
}

export interface ForwardProxyOptions {
  /** Cut the client's connection after half the first chunk of the answer to a paid POST. */
  dropPaidAnswers?: boolean;
  /**
   * Like tinyproxy: a connection carries one request, and is closed after its answer without a
   * `Connection: close`. The close comes late (a proxy slowed by load): when the client sends on the
   * connection again. A request sent on a reused connection is cut before it goes anywhere.
   */
  oneRequestPerConnection?: boolean;
  /** A reverse proxy in front of this origin: origin-form requests (`GET /path`) go there. */
  reverseTo?: string;
  /** The Proxy-Authorization value it requires; anything else gets 407, and the request goes no further. */
  requireAuthorization?: string;
}

export interface ForwardProxy {
  url: string;
  port: number;
  readonly requests: ProxiedRequest[];
  readonly tunnels: ProxiedTunnel[];
  /** Paid POSTs whose answer the proxy cut. */
  readonly dropped: ProxiedRequest[];
  /** Requests cut because they came on a connection that had carried one (oneRequestPerConnection). */
  readonly cutOnReuse: ProxiedRequest[];
  /** Everything that passed, forwarded requests and tunnels together. */
  count(): number;
  options: ForwardProxyOptions;
  reset(): void;
  close(): Promise<void>;
}

const PAID_PATHS = /\/v1\/images\/(generations|edits)(\?|$)/;
const HOP_BY_HOP = new Set(['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const requests: ProxiedRequest[] = [];
  const tunnels: ProxiedTunnel[] = [];
  const dropped: ProxiedRequest[] = [];
  const cutOnReuse: ProxiedRequest[] = [];
  const answered = new WeakSet<net.Socket>();
  const sockets = new Set<net.Socket>();
  const state = { options };

  const server = http.createServer((req, res) => {
    const entry: ProxiedRequest = { method: req.method ?? 'GET', url: req.url ?? '', proxyAuthorization: 'proxy-authorization' in req.headers };
    if (state.options.oneRequestPerConnection) {
      if (answered.has(req.socket)) {
        cutOnReuse.push(entry);
        req.socket.destroy();
        return;
      }
      res.once('finish', () => answered.add(req.socket));
    }
    requests.push(entry);
    if (state.options.requireAuthorization && req.headers['proxy-authorization'] !== state.options.requireAuthorization) {
      entry.refused = true;
      // Like a proxy that answers on the headers: the body is read and dropped, never forwarded.
      req.resume();
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="gateway-images-test"', 'content-type': 'text/plain' }).end('Proxy authentication required.');
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '', state.options.reverseTo);
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('This proxy forwards absolute http:// URIs and CONNECT only.');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
    if (req.headers['transfer-encoding']) headers['transfer-encoding'] = req.headers['transfer-encoding'];
    const upstream = http.request(
      { host: target.hostname, port: target.port || 80, method: req.method, path: `${target.pathname}${target.search}`, headers },
      (answer) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
        if (answer.headers['transfer-encoding']) out['transfer-encoding'] = answer.headers['transfer-encoding'];
        res.writeHead(answer.statusCode ?? 502, out);
        const drop = state.options.dropPaidAnswers && req.method === 'POST' && PAID_PATHS.test(target.pathname);
        if (drop) {
          answer.once('data', (chunk: Buffer) => {
            // Half of the first chunk only: a small answer may arrive whole in one chunk.
            res.write(chunk.subarray(0, Math.max(1, Math.floor(chunk.length / 2))));
            dropped.push(entry);
            // Like a proxy that dies mid-answer: the client's socket is cut without an end.
            setTimeout(() => {
              req.socket.destroy();
              answer.destroy();
            }, 20);
          });
          return;
        }
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad gateway (proxy).');
      else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const targetText = req.url ?? '';
    const tunnel: ProxiedTunnel = { target: targetText, proxyAuthorization: 'proxy-authorization' in req.headers };
    tunnels.push(tunnel);
    if (state.options.requireAuthorization && req.headers['proxy-authorization'] !== state.options.requireAuthorization) {
      tunnel.refused = true;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="gateway-images-test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(targetText);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(m[2]), m[1], () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const closeBoth = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    client.on('error', closeBoth);
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });

  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    tunnels,
    dropped,
    cutOnReuse,
    get options() {
      return state.options;
    },
    set options(value: ForwardProxyOptions) {
      state.options = value;
    },
    count: () => requests.length + tunnels.length,
    reset() {
      requests.length = 0;
      tunnels.length = 0;
      dropped.length = 0;
      cutOnReuse.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
