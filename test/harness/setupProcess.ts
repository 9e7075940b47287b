// How the setup runs its steps: one command at a time with its output shown, an interrupt that
// waits for the running command to stop, and one installer at a time per install folder.
import { type ChildProcess, spawn, type SpawnOptions } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export class SetupError extends Error {}

export function log(message: string): void {
  process.stdout.write(`[setup] ${message}\n`);
}

let currentChild: ChildProcess | undefined;
let interruptedBy: NodeJS.Signals | undefined;

/** The signal that interrupted the setup, if one did. */
export function interruption(): NodeJS.Signals | undefined {
  return interruptedBy;
}

/**
 * Runs a command to completion. On SIGINT/SIGTERM the setup waits for the running command to
 * finish (npm rolls back a half-done install) instead of leaving it running behind a new setup.
 */
export function run(command: string, args: string[], options: SpawnOptions = {}): Promise<void> {
  if (interruptedBy) return Promise.reject(new SetupError(`interrupted (${interruptedBy})`));
  const cwd = options.cwd ? String(options.cwd) : undefined;
  if (cwd && !fs.existsSync(cwd)) {
    return Promise.reject(new SetupError(`${cwd} has disappeared: is another setup running on the same .cache/?`));
  }
  log(`$ ${command} ${args.join(' ')}${cwd ? ` (in ${path.relative(process.cwd(), cwd) || '.'})` : ''}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    currentChild = child;
    child.on('error', (err) => reject(new SetupError(`${command} could not start: ${err.message}`)));
    child.on('exit', (code, signal) => {
      currentChild = undefined;
      if (interruptedBy) reject(new SetupError(`interrupted (${interruptedBy})`));
      else if (code === 0) resolve();
      else reject(new SetupError(`${command} ${args.join(' ')} failed with ${signal ?? `exit code ${code}`}`));
    });
  });
}

/** SIGINT/SIGTERM during the setup: the running command finishes, the next step is refused. */
export function onInterrupt(signal: NodeJS.Signals): void {
  if (interruptedBy) return;
  interruptedBy = signal;
  process.stderr.write(`\n[setup] ${signal}: waiting for the running step to stop; the install will be redone next time\n`);
  // Ctrl+C reaches the whole foreground group already; a SIGTERM is usually aimed at us alone.
  if (signal === 'SIGTERM') currentChild?.kill('SIGTERM');
}

export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One installer at a time per install folder (parallel CI jobs, several terminals). */
export async function withInstallLock<T>(LOCK: string, what: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  let waited = false;
  for (;;) {
    try {
      const fd = fs.openSync(LOCK, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(fs.readFileSync(LOCK, 'utf8').trim());
      if (!owner || !pidAlive(owner)) {
        fs.rmSync(LOCK, { force: true }); // stale: its owner died
        continue;
      }
      if (!waited) log(`Another setup (pid ${owner}) is installing ${what}; waiting for it`);
      waited = true;
      await new Promise((r) => setTimeout(r, 1000));
      if (interruptedBy) throw new SetupError(`interrupted (${interruptedBy})`);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(LOCK, { force: true });
  }
}
