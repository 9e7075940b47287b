// A cancel before the request body started to go out is "not sent": no "may have been charged",
// no reconcile, no retry offer. After the body started, the outcome is unknown as before.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { Agent, buildConnector } from 'undici';
import { GatewayClient } from '../../src/core/client';
import { CancelledError } from '../../src/core/errors';
import { caught, DEMO_KEYS, gatewaySuite, listFiles, MemorySink, newService, paidRequests, SMALL, waitFor } from './support/gateway';

describe('cancel before sending', () => {
  const gw = gatewaySuite({ dir: 'gwi-cancel-', models: true });
  const request = { model: 'aurora-1', prompt: 'cancel early', size: SMALL };

  /** A client whose connections open only after `connectDelayMs`, and whose key is read after `keyDelayMs`. */
  function slowClient(connectDelayMs: number, keyDelayMs = 0): GatewayClient {
    const connect = buildConnector({});
    const dispatcher = new Agent({
      connect: (options, callback) => {
        setTimeout(() => connect(options, callback), connectDelayMs);
      },
    });
    return new GatewayClient({
      baseUrl: gw.emu.url,
      getApiKey: () => new Promise((resolve) => setTimeout(() => resolve(DEMO_KEYS.unlimited), keyDelayMs)),
      dispatcher,
      closeDispatcher: true,
    });
  }

  async function cancelledAfter(client: GatewayClient, ms: number): Promise<CancelledError> {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), ms);
    try {
      return await caught<CancelledError>(() => client.generate(request, new MemorySink(), { signal: controller.signal }));
    } finally {
      await client.close();
    }
  }

  it('cancelled while the key is being read: not sent, not "may have been charged"', async () => {
    const error = await cancelledAfter(slowClient(0, 300), 50);
    assert.ok(error instanceof CancelledError, String(error));
    assert.equal(error.outcomeUnknown, false);
    assert.match(error.message, /before the request was sent: nothing was charged/);
    assert.equal(gw.emu.state.requests.length, 0);
  });

  it('cancelled while connecting: not sent', async () => {
    const error = await cancelledAfter(slowClient(400), 80);
    assert.ok(error instanceof CancelledError, String(error));
    assert.equal(error.outcomeUnknown, false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(gw.emu.state.requests.length, 0, 'nothing reached the gateway');
  });

  it('a signal aborted before the call: not sent', async () => {
    const controller = new AbortController();
    controller.abort();
    const client = slowClient(0);
    const error = await caught<CancelledError>(() => client.generate(request, new MemorySink(), { signal: controller.signal }));
    await client.close();
    assert.equal(error.outcomeUnknown, false);
    assert.equal(gw.emu.state.requests.length, 0);
  });

  it('through the job service: no outcome-unknown event, no reconcile, nothing in the recovery folder', async () => {
    const client = slowClient(400);
    const recovery = path.join(gw.dir, 'recovery');
    const rig = newService(client, gw.models, recovery);
    const controller = new AbortController();
    const running = rig.service.run({ request, output: { directory: path.join(gw.dir, 'out'), pattern: 'x' } }, { signal: controller.signal });
    await waitFor(() => rig.events.some((e) => e.type === 'sending'));
    controller.abort();
    const error = await caught<CancelledError>(() => running);
    await client.close();
    assert.ok(error instanceof CancelledError);
    assert.equal(error.outcomeUnknown, false);
    assert.equal(rig.reconciles, 0);
    assert.ok(!rig.events.some((e) => e.type === 'outcome-unknown'));
    assert.deepEqual(await listFiles(recovery), []);
    assert.equal(paidRequests(gw.emu).length, 0);
  });

  it('cancelled after the body went out (the gateway is generating): outcome unknown, as before', async () => {
    gw.emu.state.armFault({ fault: 'latency', latencyMs: 3000 });
    const client = slowClient(0);
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
