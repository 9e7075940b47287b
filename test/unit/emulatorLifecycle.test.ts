// Tests of the gateway emulator itself, over real HTTP on loopback: start-up faults, reset during a
// generation, and the process's start and stop.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { DEMO_KEYS, startEmulator } from '../../tools/emulator/server';
import { EmulatorState } from '../../tools/emulator/state';
import { waitFor } from './support/gateway';
import { useEmulator } from './support/emulatorUnderTest';

describe('gateway emulator', function () {
  const emu = useEmulator();
  const { generate } = emu;

  describe('lifecycle', () => {
    it('re-arms start-up faults on reset', async () => {
      const other = await startEmulator({ quiet: true, faults: [{ fault: 'usage-first', times: -1 }] });
      try {
        other.state.reset();
        assert.deepEqual(
          other.state.faults.list().map((f) => f.fault),
          ['usage-first'],
        );
      } finally {
        await other.close();
      }
    });

    it('a reset during a generation does not leak its reservation into the new balance', async () => {
      const pending = generate({ model: 'sketch-mini', prompt: 'x' }, undefined, { 'x-emulator-fault': 'latency', 'x-emulator-latency-ms': '200' });
      await waitFor(() => emu.state.balanceRub < 5000); // reserved while generating
      emu.state.reset();
      assert.equal((await pending).res.status, 200);
      assert.equal(emu.state.balanceRub, 5000);
    });

    it('applies header body faults to account endpoints too', async () => {
      const res = await fetch(`${emu.url}/v1/gateway/balance`, {
        headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, 'x-emulator-fault': 'truncated-json' },
      });
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.ok('{"balance":5000}'.startsWith(text) && text.length < 16, text);
    });

    it('close() ends open connections, including slow ones', async () => {
      const other = await startEmulator({ quiet: true });
      const pending = fetch(`${other.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, ...{ 'x-emulator-fault': 'slow-headers' } },
        body: '{}',
      }).catch((e: unknown) => e);
      await waitFor(() => other.state.requests.length === 1);
      // Ended, not waited for (slow-headers holds its answer 60 s, past the test's timeout): the request
      // fails with a broken connection, where a close() that let it finish would give it the 504 that
      // the fault sends when its wait ends. Not a clock bound: a busy machine must not fail it.
      await other.close();
      assert.ok((await pending) instanceof Error);
    });

    it('the CLI prints its URL and keys, serves, and stops on SIGTERM', async function () {
      this.timeout(15_000);
      const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'tools', 'emulator', 'main.js'), '--port', '0', '--balance', '123', '--quiet'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /Gateway emulator listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      const balance = await fetch(`${url}/v1/gateway/balance`, { headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}` } });
      assert.deepEqual(await balance.json(), { balance: 123 });
      for (const key of Object.values(DEMO_KEYS)) assert.ok(out.includes(key), key);
      const code = await new Promise<number | null>((resolve) => {
        child.on('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      assert.equal(code, 0);
    });
  });

  it('its request log forgets old free requests first, never a paid one of a long run', () => {
    const state = new EmulatorState(1000);
    const paid = state.record('POST', '/v1/images/generations', true);
    for (let i = 0; i < 12_000; i += 1) state.record('GET', '/v1/gateway/balance', false);
    const last = state.record('POST', '/v1/images/generations', true);
    assert.ok(state.requests.length <= 11_001, `the log holds ${state.requests.length} entries`);
    assert.deepEqual(
      state.requests.filter((r) => r.paid).map((r) => r.id),
      [paid.id, last.id],
    );
  });
});
