// Processes by /proc (Linux): which a process started (its descendants and process groups), and
// whether they are still there. A pid is identified with its start time, so a reused pid does not
// count as a survivor.
import * as fs from 'fs';
import * as net from 'net';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  start: number;
  command: string;
}

function readStat(pid: number): ProcessInfo | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: fields follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined; // a zombie has exited; only its parent has not reaped it
    let command = '';
    try {
      command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      /* gone meanwhile */
    }
    return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), start: Number(fields[19]), command };
  } catch {
    return undefined;
  }
}

export function allProcesses(): ProcessInfo[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((p): p is ProcessInfo => p !== undefined);
}

/** `root` and everything below it, plus every member of those processes' groups (detached children). */
export function processTree(root: number): ProcessInfo[] {
  const all = allProcesses();
  const found = new Map<number, ProcessInfo>();
  const add = (p: ProcessInfo) => found.set(p.pid, p);
  const self = all.find((p) => p.pid === root);
  if (self) add(self);
  const ownGroup = readStat(process.pid)?.pgid;
  for (let grew = true; grew;) {
    grew = false;
    const groups = new Set([...found.values()].map((f) => f.pgid).filter((g) => g !== ownGroup));
    for (const p of all) {
      if (found.has(p.pid)) continue;
      if (found.has(p.ppid) || groups.has(p.pgid)) {
        add(p);
        grew = true;
      }
    }
  }
  return [...found.values()];
}

/** The processes that `pid` started and that still run (each thread's list in /proc/<pid>/task/<tid>/children). */
export function childrenOf(pid: number): ProcessInfo[] {
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children = new Set<number>();
  for (const task of tasks) {
    try {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ')) if (child.trim()) children.add(Number(child));
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return [...children].map(readStat).filter((p): p is ProcessInfo => p !== undefined);
}

/** The processes of `known` that still run (same pid and start time). */
export function survivors(known: readonly ProcessInfo[]): ProcessInfo[] {
  return known.filter((k) => {
    const now = readStat(k.pid);
    return now !== undefined && now.start === k.start;
  });
}

/** True when nothing accepts connections on 127.0.0.1:port. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}
