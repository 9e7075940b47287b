// The upload limit: the bytes the extension sends for 4 reference images (a JSON body with data:
// URLs, and a multipart body), written raw to a socket whose server only drains them. The limit
// reads the files and encodes them as it goes, the least work an upload of files needs; "send
// alone" writes the same bytes prepared in memory. The extension's own upload rows run against the
// same draining server, so the emulator's buffering and parsing of 100+ MB stays out of the comparison.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs, existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import * as path from 'node:path';
import { base64Into, jsonBodyWithReferences, multipartEditBody, type ReferenceFile } from '../../src/core/requests/requestBodies';
import { checkReferenceFiles } from '../../src/jobs/jobFiles';
import { type DrainServer, startDrainServer } from './drainServer';
import { type BenchContext, runsAtLeast, type BenchTarget, fmtS, lpad, median, MiB, pad, runNote, type ScenarioReport } from './scenario';
import type { WorkerResult, WorkerTask } from './workerTypes';

const TARGET_UPLOAD_RATIO = 1.3;

/** Each run is 0.1-0.2 s, so a few tens of ms of a busy machine swing one run's ratio by 0.2-0.3: more runs. */
const runsOf = (ctx: BenchContext) => runsAtLeast(ctx, 9);

const FULL_REFERENCE_BYTES = 25_000_000;

const QUICK_REFERENCE_BYTES = 2_500_000;

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

/** A body as the limit sends it: the framing text as bytes, and where each file's bytes (or their base64) go. */
type Segment = Buffer | { file: string; base64: boolean };

/**
 * The request the extension would make: its head, and its body as segments. The body is built once
 * by the extension's own builders (before the clock); each file's bytes, or their base64, are then
 * located in it, so the text between them is the framing, byte for byte.
 */
async function requestPlan(task: WorkerTask, references: ReferenceFile[]): Promise<{ head: Buffer; body: Buffer; segments: Segment[] }> {
  const fields = { model: task.model!, prompt: task.prompt!, n: task.n ?? 1 };
  const url = new URL(task.uploadUrl!);
  const base64 = task.transport !== 'multipart';
  let body: Buffer;
  let contentType: string;
  let route: string;
  if (!base64) {
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
  const segments: Segment[] = [];
  let at = 0;
  for (const reference of references) {
    const bytes = await fs.readFile(reference.path);
    const content = base64 ? Buffer.from(bytes.toString('base64'), 'latin1') : bytes;
    // The files share their first bytes (a PNG header): locate them by a later, random stretch.
    const probe = content.subarray(PROBE_OFFSET, PROBE_OFFSET + 64);
    const found = body.indexOf(probe, at + PROBE_OFFSET);
    if (found < 0 || !body.subarray(found - PROBE_OFFSET, found - PROBE_OFFSET + content.length).equals(content)) {
      throw new Error(`the bytes of ${reference.path} are not in the body`);
    }
    segments.push(body.subarray(at, found - PROBE_OFFSET), { file: reference.path, base64 });
    at = found - PROBE_OFFSET + content.length;
  }
  segments.push(body.subarray(at));
  return { head: Buffer.from(head, 'latin1'), body, segments };
}

/** A multiple of 3 (base64 of whole chunks joins up) and 4 (its base64 offset is whole). */
const PROBE_OFFSET = 48;

/** The limit's read size, a multiple of 3 so that each chunk's base64 joins the next without a carry. */
const LIMIT_CHUNK_BYTES = 3 * 512 * 1024;

const written = (socket: Socket, data: Buffer): Promise<void> =>
  new Promise((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));

/**
 * The least work that sends files: each one read into two buffers in turn (the next read while the
 * current chunk is written), written raw. For the JSON body each chunk is base64-encoded into one of
 * two output buffers with the extension's own primitive (base64Into).
 */
async function sendFiles(socket: Socket, head: Buffer, segments: Segment[]): Promise<void> {
  const reads = [Buffer.allocUnsafe(LIMIT_CHUNK_BYTES), Buffer.allocUnsafe(LIMIT_CHUNK_BYTES)];
  const outputs = [Buffer.allocUnsafe((LIMIT_CHUNK_BYTES / 3) * 4), Buffer.allocUnsafe((LIMIT_CHUNK_BYTES / 3) * 4)];
  /** When the socket is done with pair i: read buffer i (raw) or output buffer i (base64). */
  const sent: Array<Promise<void>> = [Promise.resolve(), Promise.resolve()];
  let last = written(socket, head);
  let turn = 0;
  for (const segment of segments) {
    if (Buffer.isBuffer(segment)) {
      last = written(socket, segment);
      continue;
    }
    const handle = await fs.open(segment.file, 'r');
    try {
      const { size } = await handle.stat();
      let position = 0;
      if (!segment.base64) await sent[turn]; // the file before may have ended in this buffer
      let reading = handle.read(reads[turn]!, 0, LIMIT_CHUNK_BYTES, 0);
      for (;;) {
        const { bytesRead } = await reading;
        if (bytesRead === 0) break;
        // Base64 per chunk joins up only if every chunk but the last is whole 3-byte groups.
        if (segment.base64 && bytesRead % 3 !== 0 && position + bytesRead < size) throw new Error(`short read of ${segment.file}`);
        const current = turn;
        turn ^= 1;
        position += bytesRead;
        if (!segment.base64) await sent[turn]; // that read buffer may still be on its way out
        reading = handle.read(reads[turn]!, 0, LIMIT_CHUNK_BYTES, position);
        let chunk = reads[current]!.subarray(0, bytesRead);
        if (segment.base64) {
          await sent[current];
          chunk = outputs[current]!.subarray(0, base64Into(outputs[current]!, chunk, bytesRead));
        }
        last = sent[current] = written(socket, chunk);
      }
    } finally {
      await handle.close();
    }
  }
  await last;
}

/** Worker side: write the request to a socket (prepared bytes, or read from the files) and wait for the draining server's answer. */
export async function uploadLimitRow(task: WorkerTask, clock: { start(): void }): Promise<Partial<WorkerResult>> {
  const references = await checkReferenceFiles(task.references ?? []);
  const { head, body, segments } = await requestPlan(task, references);
  const url = new URL(task.uploadUrl!);
  clock.start();
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const parts: Buffer[] = [];
    socket.on('connect', () => {
      if (task.limitFrom === 'memory') {
        socket.write(head);
        socket.write(body);
      } else {
        sendFiles(socket, head, segments).catch(reject);
      }
    });
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(parts).toString('latin1')));
    socket.on('error', reject);
  });
  if (!answer.startsWith('HTTP/1.1 200')) throw new Error(`unexpected answer: ${answer.slice(0, 80)}`);
  // After the clock: what the server must have received, for the untimed check of the bytes.
  const bodySha256 = task.verifyBytes ? createHash('sha256').update(body).digest('hex') : undefined;
  return { bytesWritten: head.length + body.length, bodySha256 };
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
  /** The limit reading the files (the target's yardstick). */
  limit: WorkerResult[];
  /** The same bytes prepared in memory: the send alone. */
  memoryLimit: WorkerResult[];
  extension: WorkerResult[];
  /** Body bytes the draining server received, per row kind: they must all be equal. */
  bodyBytes: Record<RowName, number>;
}

type RowName = 'limit' | 'memoryLimit' | 'extension';

const ROWS: ReadonlyArray<{ name: RowName; kind: 'upload-limit' | 'upload'; limitFrom?: 'files' | 'memory'; label: string }> = [
  { name: 'memoryLimit', kind: 'upload-limit', limitFrom: 'memory', label: 'limit, bytes in memory' },
  { name: 'limit', kind: 'upload-limit', limitFrom: 'files', label: 'limit, read from the files' },
  { name: 'extension', kind: 'upload', label: 'extension' },
];

/** Bench side: both transports, the two limits and the extension interleaved, against one draining server. */
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
    const wrongBytes = await checkLimitBytes(ctx, drain, references);
    if (wrongBytes) throw new Error(wrongBytes);
    for (const [transport, warm] of [
      ['input_references', false],
      ['multipart', false],
      ['input_references', true],
      ['multipart', true],
    ] as const) {
      const f: TransportFigures = { transport, warm, limit: [], memoryLimit: [], extension: [], bodyBytes: { limit: 0, memoryLimit: 0, extension: 0 } };
      for (let run = 0; run < runsOf(ctx); run++) {
        for (const row of ROWS) {
          const workDir = path.join(ctx.tmp, `${row.name}-drain-${transport}-${run}`);
          const result = await ctx.runWorker({ ...uploadTask(ctx, drain, references, transport), kind: row.kind, limitFrom: row.limitFrom, workDir, warm });
          if (result.ok && row.kind === 'upload' && result.files !== 1)
            Object.assign(result, { ok: false, error: `expected 1 saved image, got ${result.files}` });
          f.bodyBytes[row.name] = drain.lastBodyBytes;
          f[row.name].push(result);
          await fs.rm(workDir, { recursive: true, force: true });
          ctx.log(
            `  ${row.label} upload ${transport}${warm ? ' (warm)' : ''} (draining server) run ${run + 1}: ${runNote(result, (r) => `${fmtS(r.wallMs)}, ${drain.lastBodyBytes} body bytes`)}`,
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

/**
 * Untimed, once per transport: the limit reading the files sends exactly the bytes of the body the
 * extension's builders make (SHA-256 at the server against the prepared body). Returns what is wrong.
 */
async function checkLimitBytes(ctx: BenchContext, drain: DrainServer, references: string[]): Promise<string | undefined> {
  drain.hashing = true;
  try {
    for (const transport of ['input_references', 'multipart'] as const) {
      const workDir = path.join(ctx.tmp, `limit-bytes-${transport}`);
      const result = await ctx.runWorker({
        ...uploadTask(ctx, drain, references, transport),
        kind: 'upload-limit',
        limitFrom: 'files',
        verifyBytes: true,
        workDir,
      });
      await fs.rm(workDir, { recursive: true, force: true });
      if (!result.ok) return `the limit failed: ${result.error}`;
      const same = result.bodySha256 !== undefined && result.bodySha256 === drain.lastSha256;
      ctx.log(
        `  limit, read from the files, ${transport}: the server received ${same ? 'the same bytes (SHA-256)' : 'OTHER bytes'} as the body built by the extension`,
      );
      if (!same) return `the limit read from the files sent other bytes than the ${transport} body (SHA-256 ${drain.lastSha256} != ${result.bodySha256})`;
    }
    return undefined;
  } finally {
    drain.hashing = false;
  }
}

function uploadTask(
  ctx: BenchContext,
  drain: DrainServer,
  references: string[],
  transport: 'input_references' | 'multipart',
): Omit<WorkerTask, 'kind' | 'workDir'> {
  return {
    baseUrl: ctx.emulator.url,
    uploadUrl: drain.url,
    apiKey: ctx.emulator.keys.unlimited,
    model: 'mosaic-edit',
    prompt: 'benchmark: combine these',
    n: 1,
    references,
    transport,
  };
}

function report(ctx: BenchContext, size: number, figures: TransportFigures[]): ScenarioReport {
  const lines = [
    pad(`Upload 4 x ${size.toLocaleString('en-US')} bytes to a draining server`, 50) +
      lpad('body', 10) +
      lpad('limit', 8) +
      lpad('extension', 11) +
      lpad('ext/limit', 11) +
      lpad('CPU ext/limit', 16) +
      lpad('main thread', 15) +
      lpad('send alone', 12) +
      lpad('ext/send alone', 16) +
      lpad('ext loop delay', 16),
  ];
  const targets: BenchTarget[] = [];
  const json: Record<string, unknown> = {};
  for (const f of figures) {
    const label = `${f.transport === 'input_references' ? 'JSON body, data: URLs' : 'multipart body (edit)'}${f.warm ? ', warm' : ', cold'}`;
    // Judged warm: the target is about the cost per byte. The first upload of a process also compiles
    // the job's code once (~20 ms: V8 logs ~365 functions first run during it), shown as info.
    const name = f.warm ? `upload ${f.transport}: extension / limit` : `upload ${f.transport}:   info: first upload of a process`;
    const ok = (rows: WorkerResult[]) => rows.filter((r) => r.ok);
    const [limitOk, memoryOk, extOk] = [ok(f.limit), ok(f.memoryLimit), ok(f.extension)];
    const failed = [...f.limit, ...f.memoryLimit, ...f.extension].find((r) => !r.ok);
    const sameBytes = f.bodyBytes.limit === f.bodyBytes.extension && f.bodyBytes.memoryLimit === f.bodyBytes.extension;
    if (!limitOk.length || !memoryOk.length || !extOk.length || !sameBytes) {
      const error = failed?.error ?? `body bytes differ: ${JSON.stringify(f.bodyBytes)}`;
      lines.push(`${pad(label, 50)}FAILED: ${error.split('\n')[0]!.slice(0, 110)}`);
      targets.push({ name, value: 'failed', target: `≤ ${TARGET_UPLOAD_RATIO}`, pass: false });
      continue;
    }
    const wall = (rows: WorkerResult[]) => median(rows.map((r) => r.wallMs));
    const cpu = (rows: WorkerResult[]) => median(rows.map((r) => r.cpuMs ?? 0));
    const mainCpu = (rows: WorkerResult[]) => median(rows.map((r) => r.threadCpuMs?.main ?? 0));
    const [limit, memory, ext] = [wall(limitOk), wall(memoryOk), wall(extOk)];
    const ratio = ext / limit;
    lines.push(
      pad(label, 50) +
        lpad(`${(f.bodyBytes.extension / 1e6).toFixed(1)} MB`, 10) +
        lpad(fmtS(limit), 8) +
        lpad(fmtS(ext), 11) +
        lpad(ratio.toFixed(2), 11) +
        // CPU time of the row's process: less at the mercy of a loaded machine than wall time.
        lpad(`${fmtS(cpu(extOk))}/${fmtS(cpu(limitOk))}`, 16) +
        // The main thread's share: where the extension's JavaScript runs (cold, not yet compiled).
        lpad(`${fmtS(mainCpu(extOk))}/${fmtS(mainCpu(limitOk))}`, 15) +
        lpad(fmtS(memory), 12) +
        lpad((ext / memory).toFixed(2), 16) +
        lpad(`${median(extOk.map((r) => r.maxLoopDelayMs)).toFixed(0)} ms`, 16),
    );
    targets.push({
      name,
      value: `${ratio.toFixed(2)} (${fmtS(ext)} / ${fmtS(limit)}; send alone ${fmtS(memory)})`,
      target: f.warm ? `≤ ${TARGET_UPLOAD_RATIO}` : `(≤ ${TARGET_UPLOAD_RATIO})`,
      pass: f.warm ? ratio <= TARGET_UPLOAD_RATIO && failed === undefined : failed ? false : undefined,
      // A run of the row that failed is not a matter of speed: judged in every mode.
      ...(failed === undefined && { time: true as const }),
    });
    json[`${f.transport}${f.warm ? '-warm' : ''}`] = {
      bodyBytes: f.bodyBytes.extension,
      limitMs: limit,
      sendAloneMs: memory,
      extensionMs: ext,
      ratio,
      limitRuns: f.limit,
      sendAloneRuns: f.memoryLimit,
      extensionRuns: f.extension,
    };
  }
  lines.push(
    `  (median of ${runsOf(ctx)} run(s). Every row sends the same bytes to a server that only drains them and answers one tiny image.`,
    '   limit: the least work that uploads the files: read into two buffers in turn, the JSON body base64-encoded per chunk',
    '   as the extension encodes it, written raw to a socket. send alone: the same bytes prepared in memory before the clock, written raw (no file reading).',
    '   extension: ImageJobService.run reading the files from disk. Cold: the first upload of a fresh process; warm: the second',
    '   (the target: cold also compiles the code of a job once, about 20 ms here, whatever the size of the upload).)',
  );
  return { lines, targets, json };
}
