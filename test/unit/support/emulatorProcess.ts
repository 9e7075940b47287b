// The gateway emulator in a process of its own, driven over IPC. The chaos soak measures the RSS
// of the extension's side (job service, account, client) as an extension host would have it; with
// the emulator in the same process, its PNG painting and base64 encoding grew V8's young
// generation and the malloc heap and were counted as ours.
//   parent: const emu = await startEmulatorProcess({ balance });  await emu.call('armFault', spec)
//   child:  node out/test/unit/support/emulatorProcess.js (started by startEmulatorProcess)
import { fork, type ChildProcess } from 'node:child_process';
import { startEmulator, type EmulatorOptions, type EmulatorState, type RunningEmulator } from '../../../tools/emulator';

type StateMethod = 'armFault' | 'clearFaults' | 'addKey' | 'setKeyBudget' | 'keyBudgetRub' | 'topUp';
type StateField = 'imageGapMs' | 'headGapMs' | 'recordImages';
type StateReading = 'requests' | 'balanceRub' | StateField;

type Command =
  | { id: number; op: 'call'; name: StateMethod; args: unknown[] }
  | { id: number; op: 'get'; name: StateReading }
  | { id: number; op: 'set'; name: StateField; value: unknown };
/** A command before it has an id (Omit over each member of the union). */
type Unsent = Command extends infer C ? (C extends Command ? Omit<C, 'id'> : never) : never;
type Reply = { id: number; value?: unknown; error?: string } | { ready: { url: string; keys: RunningEmulator['keys'] } };

export interface EmulatorProcess {
  url: string;
  keys: RunningEmulator['keys'];
  pid: number;
  call<K extends StateMethod>(name: K, ...args: Parameters<EmulatorState[K]>): Promise<ReturnType<EmulatorState[K]>>;
  get<K extends StateReading>(name: K): Promise<EmulatorState[K]>;
  set<K extends StateField>(name: K, value: EmulatorState[K]): Promise<void>;
  close(): Promise<void>;
}

export async function startEmulatorProcess(options: EmulatorOptions = {}): Promise<EmulatorProcess> {
  const child: ChildProcess = fork(__filename, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 0;
  const ready = new Promise<{ url: string; keys: RunningEmulator['keys'] }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the emulator process exited (${code}) before it listened`)));
    child.on('message', (message: Reply) => {
      if ('ready' in message) return resolve(message.ready);
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error !== undefined) pending?.reject(new Error(message.error));
      else pending?.resolve(message.value);
    });
  });
  child.on('exit', () => {
    for (const pending of waiting.values()) pending.reject(new Error('the emulator process exited'));
    waiting.clear();
  });
  const send = (command: Unsent): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      child.send({ ...command, id });
    });
  const { url, keys } = await ready;
  return {
    url,
    keys,
    pid: child.pid!,
    call: (name, ...args) => send({ op: 'call', name, args }) as never,
    get: (name) => send({ op: 'get', name }) as never,
    set: async (name, value) => void (await send({ op: 'set', name, value })),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The child: the emulator, and the state operations the parent asks for. */
async function serve(): Promise<void> {
  const emulator = await startEmulator({ quiet: true, ...(JSON.parse(process.argv[2] ?? '{}') as EmulatorOptions) });
  const state = emulator.state as unknown as Record<string, unknown>;
  process.on('message', (command: Command) => {
    try {
      let value: unknown;
      if (command.op === 'call') value = (state[command.name] as (...args: unknown[]) => unknown).apply(emulator.state, command.args);
      else if (command.op === 'get') value = state[command.name];
      else state[command.name] = command.value;
      process.send!({ id: command.id, value });
    } catch (error) {
      process.send!({ id: command.id, error: String((error as Error)?.message ?? error) });
    }
  });
  process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));
  process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
  process.send!({ ready: { url: emulator.url, keys: emulator.keys } });
}

if (require.main === module) void serve();
