// The processes a run starts: free ports, waiting for code-server, killing a whole process group,
// and the process-wide safety net that cleans up what launch.ts started at exit or on a signal.
import type { ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import { setTimeout as sleep } from 'timers/promises';

/** What launch() started, for the clean-up at exit and on a signal. */
export interface Resource {
  /** Best-effort synchronous cleanup, for process exit. */
  killSync(): void;
  close(): Promise<void>;
}
/** Every workbench launched and not yet closed (also ones still starting). */
export const live = new Set<Resource>();
let handlersInstalled = false;

/** Once per process: at exit, and on Ctrl+C or another signal, every live resource is cleaned up. */
export function installSafetyNet(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const r of live) r.killSync();
  });
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    process.stderr.write(`\n[harness] ${signal}: cleaning up\n`);
    const all = [...live].map((r) => r.close().catch(() => undefined));
    const force = setTimeout(() => process.exit(code), 10_000);
    force.unref();
    void Promise.all(all).finally(() => process.exit(code));
  };
  process.once('SIGINT', () => onSignal('SIGINT', 130));
  process.once('SIGTERM', () => onSignal('SIGTERM', 143));
  process.once('SIGHUP', () => onSignal('SIGHUP', 129));
}

/** Closes every workbench this process launched (also ones still starting). */
export async function closeAllWorkbenches(): Promise<void> {
  await Promise.all([...live].map((r) => r.close().catch(() => undefined)));
}

/**
 * A free port that no other process will be handed by the system meanwhile: it is taken from below
 * the ephemeral range (ports given to `listen(0)` and outgoing connections), since the port is
 * passed to a server that binds it seconds later. A port from the ephemeral range was once taken
 * in between by one of VS Code's own servers, which then answered the e2e-control requests.
 */
export async function freePort(): Promise<number> {
  const ceiling = Math.min(EPHEMERAL_LOW, 32768) - 1;
  for (let attempt = 0; ceiling > 20_000 && attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * (ceiling - 20_000));
    const bound = await listenOnce(port).catch(() => undefined);
    if (bound !== undefined) return bound;
  }
  return listenOnce(0);
}

/** Where the system's ephemeral ports start (Linux); otherwise the IANA range most systems use. */
const EPHEMERAL_LOW: number = (() => {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // not Linux
  }
  return 49152;
})();

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/** Resolves once code-server answers /healthz with 200; rejects after `timeoutMs` or once `exited()` says it died. */
export async function waitForCodeServer(serverUrl: string, timeoutMs: number, exited: () => string | undefined, output: () => string): Promise<void> {
  const readyBy = Date.now() + timeoutMs;
  while ((await httpStatus(`${serverUrl}/healthz`)) !== 200) {
    const gone = exited();
    if (gone) throw new Error(`${gone} before it was ready:\n${output().slice(-4000)}`);
    if (Date.now() > readyBy) throw new Error(`code-server did not answer on ${serverUrl} within ${timeoutMs / 1000} s:\n${output().slice(-4000)}`);
    await sleep(100);
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

/** SIGTERM the whole group, SIGKILL what is left after a grace period, wait until it is empty. */
export async function killGroup(child: ChildProcess, graceMs = 3000): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(50);
  if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  const hard = Date.now() + 5000;
  while (groupAlive(pgid) && Date.now() < hard) await sleep(50);
}

/** Rejects after ms (for an overall deadline); the timer does not keep the process alive. */
export function deadline(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)), ms);
    t.unref();
  });
}
