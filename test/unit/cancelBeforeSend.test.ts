// A cancel before the request body started to go out is "not sent": no "may have been charged",
// no reconcile, no retry offer. After the body started, the outcome is unknown as before.
import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import * as path from 'node:path';
import { Agent, buildConnector } from 'undici';
import { GatewayClient } from '../../src/core/client/client';
import { CancelledError } from '../../src/core/gateway/errors';
import { caught, DEMO_KEYS, gatewaySuite, listFiles, MemorySink, newService, paidRequests, SMALL, waitFor } from './support/gateway';

describe('cancel before sending', () => {
  const gw = gatewaySuite({ dir: 'gwi-cancel-', models: true });
  const request = { model: 'aurora-1', prompt: 'cancel early', size: SMALL };

  /** A client whose key is read, and whose connections open, only once the test opens the gates. */
  function gatedClient(gates: { key?: Promise<void>; connect?: Promise<void> } = {}) {
    const seen = { keyReads: 0, connects: 0, sockets: [] as Socket[] };
    const connect = buildConnector({});
    const dispatcher = new Agent({
      connect: (options, callback) => {
        seen.connects++;
        void (gates.connect ?? Promise.resolve()).then(() =>
          connect(options, (...result) => {
            if (result[1]) seen.sockets.push(result[1]);
            callback(...result);
          }),
        );
      },
    });
    const client = new GatewayClient({
      baseUrl: gw.emu.url,
      getApiKey: async () => {
        seen.keyReads++;
        await gates.key;
        return DEMO_KEYS.unlimited;
      },
      dispatcher,
      closeDispatcher: true,
    });
    return { client, seen };
  }

  /** A gate and the function that opens it. */
  function gate(): { opened: Promise<void>; open: () => void } {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { opened, open };
  }

  /** A cancel before anything went out: a CancelledError, not "outcome unknown", saying nothing was charged. */
  function assertToldNothingCharged(error: unknown): void {
    assert.ok(error instanceof CancelledError, String(error));
    assert.equal(error.outcomeUnknown, false);
    assert.match(error.message, /before the request was sent: nothing was charged/);
  }

  it('cancelled while the key is being read: not sent, not "may have been charged"', async () => {
    const key = gate();
    const { client, seen } = gatedClient({ key: key.opened });
    const controller = new AbortController();
    const running = caught<CancelledError>(() => client.generate(request, new MemorySink(), { signal: controller.signal }));
    await waitFor(() => seen.keyReads === 1);
    controller.abort();
    key.open();
    const error = await running;
    await client.close();
    assertToldNothingCharged(error);
    assert.equal(seen.connects, 0, 'a connection was opened');
    assert.equal(gw.emu.state.requests.length, 0);
  });

  it('cancelled while connecting: not sent, and nothing goes through the connection once it opens', async () => {
    const connecting = gate();
    const { client, seen } = gatedClient({ connect: connecting.opened });
    const controller = new AbortController();
    const running = caught<CancelledError>(() => client.generate(request, new MemorySink(), { signal: controller.signal }));
    await waitFor(() => seen.connects === 1);
    controller.abort();
    // The connection opens after the cancel (undici settles the request then).
    connecting.open();
    const error = await running;
    assert.ok(error instanceof CancelledError, String(error));
    assert.equal(error.outcomeUnknown, false);
    // Once the gateway has seen the connection end, whatever the client wrote before the end has
    // reached it (in order, on one connection).
    await waitFor(() => seen.sockets.length === 1);
    const socket = seen.sockets[0]!;
    if (!socket.destroyed) {
      const closed = once(socket, 'close');
      socket.end();
      await closed;
    }
    await client.close();
    assert.equal(gw.emu.state.requests.length, 0, 'something reached the gateway');
  });

  it('a signal aborted before the call: not sent', async () => {
    const controller = new AbortController();
    controller.abort();
    const { client } = gatedClient();
    const error = await caught<CancelledError>(() => client.generate(request, new MemorySink(), { signal: controller.signal }));
    await client.close();
    assert.equal(error.outcomeUnknown, false);
    assert.equal(gw.emu.state.requests.length, 0);
  });

  it('through the job service: no outcome-unknown event, no reconcile, nothing in the recovery folder', async () => {
    const connecting = gate();
    const { client } = gatedClient({ connect: connecting.opened });
    const recovery = path.join(gw.dir, 'recovery');
    const rig = newService(client, gw.models, recovery);
    const controller = new AbortController();
    const running = rig.service.run({ request, output: { directory: path.join(gw.dir, 'out'), pattern: 'x' } }, { signal: controller.signal });
    await waitFor(() => rig.events.some((e) => e.type === 'sending'));
    controller.abort();
    connecting.open();
    const error = await caught<CancelledError>(() => running);
    await client.close();
    assert.ok(error instanceof CancelledError);
    assert.equal(error.outcomeUnknown, false);
    assert.equal(rig.reconciles, 0);
    assert.ok(!rig.events.some((e) => e.type === 'outcome-unknown'));
    assert.deepEqual(await listFiles(recovery), []);
    assert.equal(paidRequests(gw.emu).length, 0);
  });

  it('cancelled while the job service checks the request (the catalog read): told that nothing was charged', async () => {
    const reading = gate();
    const { client } = gatedClient();
    const rig = newService(client, gw.models, path.join(gw.dir, 'recovery'), {
      models: async () => {
        await reading.opened;
        return gw.models;
      },
    });
    const controller = new AbortController();
    const running = caught<CancelledError>(() =>
      rig.service.run({ request, output: { directory: path.join(gw.dir, 'out'), pattern: 'x' } }, { signal: controller.signal }),
    );
    controller.abort();
    reading.open();
    const error = await running;
    await client.close();
    assertToldNothingCharged(error);
    assert.ok(!rig.events.some((e) => e.type === 'sending'));
    assert.equal(gw.emu.state.requests.length, 0);
  });

  it('cancelled after the body went out (the gateway is generating): outcome unknown, as before', async () => {
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 3000 });
    const { client } = gatedClient();
    const controller = new AbortController();
    const running = caught<CancelledError>(() => client.generate(request, new MemorySink(), { signal: controller.signal }));
    await waitFor(() => paidRequests(gw.emu).length === 1);
    controller.abort();
    const error = await running;
    await client.close();
    assert.ok(error instanceof CancelledError);
    assert.equal(error.outcomeUnknown, true);
  });
});
