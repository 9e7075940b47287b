// The upload limit: the exact bytes the extension sends for 4 reference images (a JSON body with
// data: URLs, and a multipart body), written raw to a socket whose server only drains them. The
// extension's own upload rows then run against the same draining server, so the emulator's
// buffering and parsing of 100+ MB stays out of the comparison.
import { randomBytes } from 'node:crypto';
import { promises as fs, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import * as path from 'node:path';
import { jsonBodyWithReferences, multipartEditBody, type ReferenceFile } from '../../src/core/requestBodies';
import { checkReferenceFiles } from '../../src/jobs/jobFiles';
import { type BenchContext, type BenchTarget, fmtS, lpad, median, MiB, pad, runNote, type ScenarioReport } from './scenario';
import type { WorkerResult, WorkerTask } from './worker';

const TARGET_UPLOAD_RATIO = 1.3;
/** Each run is ~0.2 s, so a few tens of ms of a busy machine swing one run's ratio by 0.2: more runs. */
const runsOf = (ctx: BenchContext) => (ctx.quick ? ctx.runs : Math.max(ctx.runs, 5));
const FULL_REFERENCE_BYTES = 25_000_000;
const QUICK_REFERENCE_BYTES = 2_500_000;

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
  close(): Promise<void>;
}

/** Reads every body byte and throws it away, then answers with one tiny image. */
export async function startDrainServer(): Promise<DrainServer> {
  const drain: DrainServer = { url: '', port: 0, lastBodyBytes: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      drain.lastBodyBytes = bytes;
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

async function collect(body: AsyncIterable<Uint8Array>, length: number): Promise<Buffer> {
  const all = Buffer.allocUnsafe(length);
  let at = 0;
  for await (const chunk of body) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  if (at !== length) throw new Error(`body of ${at} bytes, announced ${length}`);
  return all;
}

/** The request the extension would make, as bytes: headers and the whole body, built before the clock starts. */
async function requestBytes(task: WorkerTask, references: ReferenceFile[]): Promise<{ head: Buffer; body: Buffer }> {
  const fields = { model: task.model!, prompt: task.prompt!, n: task.n ?? 1 };
  const url = new URL(task.uploadUrl!);
  let body: Buffer;
  let contentType: string;
  let route: string;
  if (task.transport === 'multipart') {
    const made = multipartEditBody(fields, references);
    body = await collect(made.body, made.contentLength);
    contentType = made.contentType;
    route = '/v1/images/edits';
  } else {
    const made = jsonBodyWithReferences(fields, references);
    body = await collect(made.body, made.contentLength);
    contentType = 'application/json';
    route = '/v1/images/generations';
  }
  const head =
    `POST ${route} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${task.apiKey}\r\ncontent-type: ${contentType}\r\n` +
    `content-length: ${body.length}\r\nuser-agent: gateway-images-bench\r\nconnection: close\r\n\r\n`;
  return { head: Buffer.from(head, 'latin1'), body };
}

/** Worker side: write the prepared bytes to a socket and wait for the draining server's answer. */
export async function uploadLimitRow(task: WorkerTask, clock: { start(): void }): Promise<Partial<WorkerResult>> {
  const references = await checkReferenceFiles(task.references ?? []);
  const { head, body } = await requestBytes(task, references);
  const url = new URL(task.uploadUrl!);
  clock.start();
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const parts: Buffer[] = [];
    socket.on('connect', () => {
      socket.write(head);
      socket.write(body);
    });
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(parts).toString('latin1')));
    socket.on('error', reject);
  });
  if (!answer.startsWith('HTTP/1.1 200')) throw new Error(`unexpected answer: ${answer.slice(0, 80)}`);
  return { bytesWritten: head.length + body.length };
}

/** A PNG signature and IHDR-like header, then random bytes: an image by its magic bytes, exactly `size` bytes. */
export async function makeReference(file: string, size: number): Promise<void> {
  const head = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const handle = await fs.open(file, 'w');
  try {
    await handle.write(head);
    for (let left = size - head.length; left > 0;) {
      const n = Math.min(left, 4 * MiB);
      await handle.write(randomBytes(n));
      left -= n;
    }
  } finally {
    await handle.close();
  }
}

interface TransportFigures {
  transport: 'input_references' | 'multipart';
  /** Warm: the second upload of its process (the first one ran before the clock). */
  warm: boolean;
  limit: WorkerResult[];
  extension: WorkerResult[];
  bodyBytes: number;
}

/** Bench side: both transports, limit and extension interleaved, against one draining server. */
export async function uploadLimitScenario(ctx: BenchContext): Promise<ScenarioReport> {
  const size = ctx.quick ? QUICK_REFERENCE_BYTES : FULL_REFERENCE_BYTES;
  const dir = path.join(ctx.tmp, `upload-limit-references-${size}`);
  await fs.mkdir(dir, { recursive: true });
  const references: string[] = [];
  for (let i = 0; i < 4; i++) {
    const file = path.join(dir, `reference-${i + 1}.png`);
    if (!existsSync(file)) await makeReference(file, size);
    references.push(file);
  }
  const drain = await startDrainServer();
  const figures: TransportFigures[] = [];
  try {
    for (const [transport, warm] of [
      ['input_references', false],
      ['multipart', false],
      ['input_references', true],
      ['multipart', true],
    ] as const) {
      const f: TransportFigures = { transport, warm, limit: [], extension: [], bodyBytes: 0 };
      for (let run = 0; run < runsOf(ctx); run++) {
        for (const kind of ['upload-limit', 'upload'] as const) {
          const workDir = path.join(ctx.tmp, `${kind}-drain-${transport}-${run}`);
          const result = await ctx.runWorker({
            kind,
            baseUrl: ctx.emulator.url,
            uploadUrl: drain.url,
            apiKey: ctx.emulator.keys.unlimited,
            workDir,
            model: 'mosaic-edit',
            prompt: 'benchmark: combine these',
            n: 1,
            references,
            transport,
            warm,
          });
          if (result.ok && kind === 'upload' && result.files !== 1) Object.assign(result, { ok: false, error: `expected 1 saved image, got ${result.files}` });
          f.bodyBytes = drain.lastBodyBytes;
          (kind === 'upload' ? f.extension : f.limit).push(result);
          await fs.rm(workDir, { recursive: true, force: true });
          ctx.log(
            `  ${kind === 'upload' ? 'extension' : 'limit'} upload ${transport}${warm ? ' (warm)' : ''} (draining server) run ${run + 1}: ${runNote(result, (r) => `${fmtS(r.wallMs)}, ${drain.lastBodyBytes} body bytes`)}`,
          );
        }
      }
      figures.push(f);
    }
  } finally {
    await drain.close();
  }
  return report(ctx, size, figures);
}

function report(ctx: BenchContext, size: number, figures: TransportFigures[]): ScenarioReport {
  const lines = [
    `${pad(`Upload 4 x ${size.toLocaleString('en-US')} bytes to a draining server`, 62)}${lpad('body', 11)}${lpad('limit', 9)}${lpad('extension', 11)}${lpad('ext/limit', 11)}${lpad('CPU ext/limit', 15)}${lpad('ext max loop delay', 20)}`,
  ];
  const targets: BenchTarget[] = [];
  const json: Record<string, unknown> = {};
  for (const f of figures) {
    const label = `${f.transport === 'input_references' ? 'JSON body, data: URLs (generateWithReferences)' : 'multipart body (edit)'}${f.warm ? ', warm' : ''}`;
    const limitOk = f.limit.filter((r) => r.ok);
    const extOk = f.extension.filter((r) => r.ok);
    const name = f.warm ? `upload ${f.transport}:   info: warm (2nd upload of the process)` : `upload ${f.transport}: extension / limit (draining server)`;
    if (!limitOk.length || !extOk.length) {
      const error = (f.limit.find((r) => !r.ok) ?? f.extension.find((r) => !r.ok))?.error ?? 'failed';
      lines.push(`${pad(label, 62)}FAILED: ${error.split('\n')[0]!.slice(0, 110)}`);
      targets.push({ name, value: 'failed', target: `≤ ${TARGET_UPLOAD_RATIO}`, pass: f.warm ? undefined : false });
      continue;
    }
    const limit = median(limitOk.map((r) => r.wallMs));
    const ext = median(extOk.map((r) => r.wallMs));
    const loop = median(extOk.map((r) => r.maxLoopDelayMs));
    const ratio = ext / limit;
    // CPU time of the row's process: less at the mercy of a loaded machine than wall time.
    const cpu = `${fmtS(median(extOk.map((r) => r.cpuMs ?? 0)))}/${fmtS(median(limitOk.map((r) => r.cpuMs ?? 0)))}`;
    lines.push(
      pad(label, 62) +
        lpad(`${(f.bodyBytes / 1e6).toFixed(1)} MB`, 11) +
        lpad(fmtS(limit), 9) +
        lpad(fmtS(ext), 11) +
        lpad(ratio.toFixed(2), 11) +
        lpad(cpu, 15) +
        lpad(`${loop.toFixed(0)} ms`, 20),
    );
    targets.push({
      name,
      value: `${ratio.toFixed(2)} (${fmtS(ext)} / ${fmtS(limit)})`,
      target: f.warm ? `(≤ ${TARGET_UPLOAD_RATIO})` : `≤ ${TARGET_UPLOAD_RATIO}`,
      // The target is judged on the first upload of a process (a user's first edit of a session).
      pass: f.warm ? undefined : ratio <= TARGET_UPLOAD_RATIO && extOk.length === f.extension.length,
    });
    json[`${f.transport}${f.warm ? '-warm' : ''}`] = {
      bodyBytes: f.bodyBytes,
      limitMs: limit,
      extensionMs: ext,
      ratio,
      limitRuns: f.limit,
      extensionRuns: f.extension,
    };
  }
  lines.push(
    `  (median of ${runsOf(ctx)} run(s). limit: the exact bytes the extension sends (built from the same files before the clock starts),`,
    '   written raw to a socket; extension: ImageJobService.run reading the files from disk. The server only drains and answers one tiny image.',
    '   Cold: the first upload of a fresh process (the target); warm: the second, after one whole upload before the clock.)',
  );
  return { lines, targets, json };
}
