// A process that holds a lease (src/core/files/lease.ts) as a window holds a prompt file's claim or
// the journal's lock, and does with it what the parent asks over IPC: confirm it, release it. The
// parent pauses it (SIGSTOP) past the stale time to see what the lease does when its holder wakes.
//   parent: const holder = await startLeaseHolder(target, lockPath, 2000); await holder.ask('confirm')
import { type ChildProcess, fork } from 'node:child_process';
import { type Lease, LeaseLostError, takeLease } from '../../../src/core/files/lease';

export type HolderAnswer = { done: 'confirm' | 'release'; ok: boolean; error?: string; lostError?: boolean; lostTold: number };

export interface LeaseHolder {
  pid: number;
  ask(what: 'confirm' | 'release'): Promise<HolderAnswer>;
  /** Ends the process (SIGKILL) and waits for it. */
  kill(): Promise<void>;
}

/** Starts the holder; resolves once it holds the lease. */
export function startLeaseHolder(target: string, lockPath: string, staleMs: number): Promise<LeaseHolder> {
  const child: ChildProcess = fork(__filename, [target, lockPath, String(staleMs)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      child.once('message', resolve);
      void exited.then(() => reject(new Error('the lease holder exited')));
    });
  return next().then((first) => {
    if (first !== 'held') throw new Error(`the lease holder did not take the lease: ${JSON.stringify(first)}`);
    return {
      pid: child.pid!,
      ask: (what) => {
        const answer = next() as Promise<HolderAnswer>;
        child.send(what);
        return answer;
      },
      kill: async () => {
        child.kill('SIGKILL');
        await exited;
      },
    };
  });
}

if (require.main === module) {
  const [target, lockPath, staleMs] = process.argv.slice(2);
  let lostTold = 0;
  void takeLease(target!, { lockPath: lockPath!, wait: 'no', staleMs: Number(staleMs), onLost: () => lostTold++ }).then(
    (lease: Lease) => {
      process.send!('held');
      process.on('message', (what: 'confirm' | 'release') => {
        void (what === 'confirm' ? lease.confirm() : lease.release()).then(
          () => process.send!({ done: what, ok: true, lostTold } satisfies HolderAnswer),
          (error: unknown) =>
            process.send!({ done: what, ok: false, error: String(error), lostError: error instanceof LeaseLostError, lostTold } satisfies HolderAnswer),
        );
      });
    },
    (error: unknown) => {
      process.send!({ error: String(error) }, () => process.exit(1));
    },
  );
}
