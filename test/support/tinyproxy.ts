// Debian's tinyproxy (installed by test/harness/setup.ts), started on loopback for a test with its
// own configuration: a real forward proxy, with Basic authentication when asked for. What it
// forwarded is read from its log. No vscode import.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from '../harness/processes';

export const TINYPROXY = '/usr/bin/tinyproxy';

export interface Tinyproxy {
  /** http://127.0.0.1:<port> (without credentials). */
  url: string;
  port: number;
  /** The `Proxy-Authorization` value it accepts, when it asks for one. */
  authorization?: string;
  /** "METHOD url" of each request it handled (CONNECT: "CONNECT host:port"), from its log. */
  requests(): string[];
  /** Requests it refused for missing or wrong credentials (407). */
  refused(): number;
  /** The last lines of its log (for a failure's report). */
  logTail(lines: number): string[];
  close(): Promise<void>;
}

/** Starts tinyproxy in the foreground; with `auth`, it requires Basic credentials (407 otherwise). */
export async function startTinyproxy(options: { auth?: { user: string; password: string } } = {}): Promise<Tinyproxy> {
  if (!existsSync(TINYPROXY)) throw new Error(`${TINYPROXY} is missing: npm run setup:vscode installs it (Debian package tinyproxy)`);
  const dir = mkdtempSync(path.join(tmpdir(), 'gwi-tinyproxy-'));
  const port = await freePort();
  const log = path.join(dir, 'tinyproxy.log');
  const config = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 600',
    `LogFile "${log}"`,
    'LogLevel Info',
    'MaxClients 100',
    'Allow 127.0.0.1',
    'DisableViaHeader Yes',
    ...(options.auth ? [`BasicAuth ${options.auth.user} ${options.auth.password}`] : []),
  ];
  // As root it would switch to nobody, who could not write the log here.
  if (process.getuid?.() === 0) config.push('User root', 'Group root');
  writeFileSync(path.join(dir, 'tinyproxy.conf'), config.join('\n') + '\n');
  const child: ChildProcess = spawn(TINYPROXY, ['-d', '-c', path.join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready once it accepts connections.
  for (let attempt = 0; ; attempt++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) break;
    if (child.exitCode !== null || attempt > 100) throw new Error(`tinyproxy did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n') : []);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    ...(options.auth ? { authorization: `Basic ${Buffer.from(`${options.auth.user}:${options.auth.password}`).toString('base64')}` } : {}),
    requests: () => lines().flatMap((line) => /Request \(file descriptor \d+\): (\S+) (\S+)/.exec(line)?.slice(1, 3).join(' ') ?? []),
    refused: () => lines().filter((line) => /407|[Aa]uthentication|[Aa]uthoriz/.test(line) && /fail|requir|denied/i.test(line)).length,
    logTail: (count) => lines().filter(Boolean).slice(-count),
    close: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
