// The CPU a layer of `npm test` used, and the machine's. A layer's processes (code-server, its
// extension host, Chromium's renderers) outlive their parents when killed, so the CPU its shell
// waited for misses half of it; a control group counts every process started inside it. Root on
// Linux with cgroup v1's cpuacct or cgroup v2 (CI and these machines); elsewhere a layer has no CPU
// figure, and the machine's busy time is still read from /proc/stat.
import * as fs from 'fs';
import * as path from 'path';

interface Hierarchy {
  root: string;
  /** The CPU seconds a group has used, from its files. */
  read(dir: string): number;
}

const HIERARCHIES: readonly Hierarchy[] = [
  { root: '/sys/fs/cgroup/cpuacct', read: (dir) => Number(fs.readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1e9 },
  { root: '/sys/fs/cgroup/unified', read: readCgroup2 },
  { root: '/sys/fs/cgroup', read: readCgroup2 },
];

function readCgroup2(dir: string): number {
  const stat = fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8');
  const usec = /^usage_usec (\d+)$/m.exec(stat);
  if (!usec) throw new Error(`no usage_usec in ${dir}/cpu.stat`);
  return Number(usec[1]) / 1e6;
}

export interface LayerCpu {
  /** The command that runs `command` inside the group: a shell that moves itself in, then execs it. */
  wrap(command: string, args: readonly string[]): { command: string; args: string[] };
  /** CPU seconds of every process that ran in the group; undefined without a group. Removes the group. */
  read(): number | undefined;
}

/** A control group for one layer (`name` distinguishes it), or a meter that measures nothing where none can be made. */
export function layerCpu(name: string): LayerCpu {
  const made = makeGroup(name);
  if (!made) return { wrap: (command, args) => ({ command, args: [...args] }), read: () => undefined };
  const { dir, hierarchy } = made;
  return {
    wrap: (command, args) => ({
      command: 'sh',
      // Moving in before exec: everything the layer starts is born inside. Where that is refused, the layer still runs.
      args: ['-c', `echo $$ > "${path.join(dir, 'cgroup.procs')}" 2>/dev/null; exec "$@"`, 'layer', command, ...args],
    }),
    read: () => {
      let seconds: number | undefined;
      try {
        seconds = hierarchy.read(dir);
      } catch {
        seconds = undefined;
      }
      // A process the layer left behind keeps the group (rmdir fails with EBUSY): it is left, named by the layer.
      try {
        fs.rmdirSync(dir);
      } catch {
        // left behind, see above
      }
      return seconds;
    },
  };
}

function makeGroup(name: string): { dir: string; hierarchy: Hierarchy } | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined;
  const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  for (const hierarchy of HIERARCHIES) {
    if (!fs.existsSync(path.join(hierarchy.root, 'cgroup.procs'))) continue;
    const dir = path.join(hierarchy.root, `gateway-images-${process.pid}-${slug}`);
    try {
      fs.mkdirSync(dir);
      hierarchy.read(dir); // its accounting file is there
      return { dir, hierarchy };
    } catch {
      try {
        fs.rmdirSync(dir);
      } catch {
        // not made
      }
    }
  }
  return undefined;
}

/**
 * A reader of the CPU seconds of the control group this process is in (a layer's, see layerCpu): every
 * process of the layer, its VS Code and Chromium too. Undefined outside such a group (the root group
 * counts the whole machine) or where none can be read.
 */
export function ownGroupCpu(procCgroup = '/proc/self/cgroup'): (() => number) | undefined {
  let lines: string[];
  try {
    lines = fs.readFileSync(procCgroup, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (const hierarchy of HIERARCHIES) {
    // cgroup v1: `3:cpu,cpuacct:/path` or `2:cpuacct:/path`; v2: `0::/path`.
    const v1 = hierarchy.root.endsWith('cpuacct');
    const line = lines.find((l) => (v1 ? /^\d+:[^:]*\bcpuacct\b[^:]*:/.test(l) : l.startsWith('0::')));
    const group = line?.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
    if (!group || group === '/' || !group.includes('gateway-images-')) continue;
    const dir = path.join(hierarchy.root, group);
    try {
      hierarchy.read(dir);
      return () => hierarchy.read(dir);
    } catch {
      // not this hierarchy
    }
  }
  return undefined;
}

export interface MachineCpu {
  busy: number;
  idle: number;
}

/** The machine's busy and idle CPU seconds so far (all cores), from /proc/stat; undefined where there is none. */
export function machineCpu(): MachineCpu | undefined {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
    const hz = 100; // USER_HZ: 100 on every Linux that Node runs on
    return { busy: (user + nice + system + irq + softirq + steal) / hz, idle: (idle + iowait) / hz };
  } catch {
    return undefined;
  }
}
