// A real process paused as a machine pauses one (SIGSTOP, then SIGCONT), and waits on what can be
// seen of it: that it is stopped now (the kernel's own state of it), and that the leases it held went
// stale (their folders' times on disk). No wait here is on a clock alone. POSIX only.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

/** How often a wait on a fact reads it again. */
const POLL_MS = 10;

/** Resolves once `test` holds; rejects after `timeoutMs` naming `what` (a wait that never ends is a defect to show). */
export async function until(test: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await test());) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Whether the process is stopped now: its state in /proc (Linux), else as `ps` shows it. A process that is gone is not. */
export async function isStopped(pid: number): Promise<boolean> {
  if (process.platform !== 'linux') {
    const shown = await promisify(execFile)('ps', ['-o', 'stat=', '-p', String(pid)]).catch(() => ({ stdout: '' }));
    return shown.stdout.trim().startsWith('T');
  }
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // "pid (name) S ...": the state follows the name's closing parenthesis.
    return /^[Tt]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** SIGSTOP, then resolves once the kernel shows the process stopped (from then on it runs no instruction). */
export async function stopProcess(pid: number): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  await until(() => isStopped(pid), `process ${pid} to stop`, 10_000);
}

/** SIGCONT; returns the moment just before it, by this machine's clock (which the children and the emulator share). */
export function resumeProcess(pid: number): number {
  const at = Date.now();
  process.kill(pid, 'SIGCONT');
  return at;
}

/**
 * Resolves once every lease folder (`*.lock`) in `dir` was last refreshed more than `staleMs` ago, as
 * proper-lockfile judges it: from then on another process takes any of them over.
 */
export async function leasesStale(dir: string, staleMs: number): Promise<void> {
  const fresh = async () => {
    const names = (await fs.readdir(dir)).filter((name) => name.endsWith('.lock'));
    const times = await Promise.all(
      names.map((name) =>
        fs.stat(path.join(dir, name)).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      ),
    );
    return times.some((mtime) => mtime >= Date.now() - staleMs);
  };
  await until(async () => !(await fresh()), `the leases in ${dir} to go stale`, staleMs + 30_000);
}
