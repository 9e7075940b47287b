// CLI: node out/tools/emulator/main.js --port 8787 [--host h] [--latency ms] [--balance rub]
//      [--fault name]... [--image-bytes N] [--forms a,b] [--quiet]
import { FAULT_NAMES, isFaultName } from './faults';
import { FORM_NAMES, parseForms } from './forms';
import { DEMO_KEY_DESCRIPTIONS, DEMO_KEYS } from './keys';
import { startEmulator, type EmulatorOptions } from './server';

const USAGE = `Usage: main.js [--port 8787] [--host 127.0.0.1] [--latency ms] [--balance rub] [--fault name]... [--image-bytes N] [--forms a,b] [--quiet]
Faults: ${FAULT_NAMES.join(', ')}
Forms: ${FORM_NAMES.join(', ')}`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv: string[]): { options: EmulatorOptions; faults: string[] } {
  const options: EmulatorOptions = { port: 8787, quiet: false };
  const faults: string[] = [];
  const number = (flag: string, value: string | undefined) => {
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < 0) fail(`${flag} needs a non-negative number.`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    switch (flag) {
      case '--port':
        options.port = number(flag, value);
        i++;
        break;
      case '--host':
        if (!value) fail('--host needs a value.');
        options.host = value;
        i++;
        break;
      case '--latency':
        options.latencyMs = number(flag, value);
        i++;
        break;
      case '--balance':
        options.balance = number(flag, value);
        i++;
        break;
      case '--image-bytes':
        options.imageBytes = number(flag, value);
        i++;
        break;
      case '--fault':
        if (!isFaultName(value)) fail(`Unknown fault ${JSON.stringify(value)}.`);
        faults.push(value);
        i++;
        break;
      case '--forms': {
        const forms = parseForms(value ?? '');
        if (typeof forms === 'string') fail(forms);
        options.forms = forms;
        i++;
        break;
      }
      case '--quiet':
        options.quiet = true;
        break;
      case '--help':
      case '-h':
        console.log(USAGE);
        process.exit(0);
      // falls through (process.exit never returns)
      default:
        fail(`Unknown argument ${JSON.stringify(flag)}.`);
    }
  }
  return { options, faults };
}

async function main(): Promise<void> {
  const { options, faults } = parseArgs(process.argv.slice(2));
  // CLI faults stay armed until cleared through the admin endpoint (and come back on reset).
  options.faults = faults.filter(isFaultName).map((fault) => ({ fault, times: -1, imageBytes: options.imageBytes }));
  const emulator = await startEmulator(options);

  console.log(`Gateway emulator listening on ${emulator.url}`);
  console.log(
    `Balance ${emulator.state.balanceRub} RUB${options.latencyMs ? `, generation latency ${options.latencyMs} ms` : ''}${faults.length ? `, faults: ${faults.join(', ')}` : ''}${options.forms?.length ? `, forms: ${options.forms.join(', ')}` : ''}`,
  );
  console.log('Demo API keys:');
  for (const name of Object.keys(DEMO_KEYS) as (keyof typeof DEMO_KEYS)[]) {
    console.log(`  ${DEMO_KEYS[name].padEnd(20)} ${DEMO_KEY_DESCRIPTIONS[name]}`);
  }
  console.log(
    `Admin: GET ${emulator.url}/__emulator/requests, POST /__emulator/reset, POST|DELETE /__emulator/faults, POST|DELETE /__emulator/forms, POST /__emulator/state, POST /__emulator/keys`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing the gateway emulator.`);
    void emulator.close().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`Gateway emulator failed to start: ${(error as Error)?.message ?? String(error)}`);
  process.exit(1);
});
