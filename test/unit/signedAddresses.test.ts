// A signed image address (its query grants the image to whoever holds it: S3, GCS, CDNs) is shown
// without its query wherever people and agents read it: the job's message and events (which the MCP
// answer and the log repeat), the client's request log, and what Recover says. The request carries
// it whole, and the recovery manifest keeps it whole, since Recover needs it. Real HTTP throughout.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { downloadAgain, listRecoverable } from '../../src/core/files/recoveryFolder';
import { DEMO_KEYS, gatewaySuite, localServer, newService } from './support/gateway';

describe('Signed image addresses: no query in messages or logs', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ client: { maxRetries: 0 }, dir: 'gwi-signed-', models: true });
  let run = 0;
  const folders = () => {
    run++;
    return { out: path.join(gw.dir, `out-${run}`), recovery: path.join(gw.dir, `rec-${run}`) };
  };
  const job = (out: string, n = 1) => ({
    request: { model: 'sketch-mini', prompt: `signed ${run}`, size: '64x64', n },
    output: { directory: out, pattern: 'img-{index}' },
  });

  it('a signed address: its query goes in the request and the manifest, never in the message, the log, or what Recover says', async () => {
    const secret = 'X-Amz-Signature=SECRET123';
    const gateway = await localServer((req, res) => {
      if (req.method === 'POST')
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            data: [{ url: `${gateway.url}/signed.png?${secret}&X-Amz-Expires=60` }, { url: `ftp://files.example/a.png?${secret}` }],
            usage: { cost_rub: 2.5, balance: 97.5 },
          }),
        );
      else res.writeHead(404).end();
    });
    try {
      const { out, recovery } = folders();
      const client = gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url });
      const rig = newService(client, gw.models, recovery);
      const result = await rig.service.run(job(out, 1));
      const reason = result.recovered!.reason;
      assert.ok(!reason.includes('SECRET123'), reason);
      assert.ok(reason.includes(`image 1 at ${gateway.url}/signed.png?…: the address answered 404`), reason);
      assert.ok(reason.includes('image 2 at ftp://files.example/a.png?…: "ftp://files.example/a.png?…" is not an http(s) address'), reason);
      assert.ok(!JSON.stringify(rig.events).includes('SECRET123'), "no event carries it (the job's messages, the MCP answer)");
      assert.deepEqual(
        client.calls.filter((c) => c.method === 'GET').map((c) => c.path),
        [`${gateway.url}/signed.png?…`],
        'the log',
      );
      // The request itself carries the signature, and the manifest keeps it for Recover.
      assert.deepEqual(
        gateway.requests.map((r) => r.url),
        ['/v1/images/generations', `/signed.png?${secret}&X-Amz-Expires=60`],
      );
      const [waiting] = await listRecoverable(recovery);
      assert.equal(waiting?.files[0]?.download?.url, `${gateway.url}/signed.png?${secret}&X-Amz-Expires=60`);
      assert.ok(!waiting.reason.includes('SECRET123'));
      const again = await downloadAgain(waiting, gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url }));
      assert.equal(again.failures.length, 2);
      assert.ok(!again.failures.join(' ').includes('SECRET123'), again.failures.join('; '));
      assert.equal(gateway.requests.at(-1)?.url, `/signed.png?${secret}&X-Amz-Expires=60`, 'Recover asks with the whole address');
    } finally {
      await gateway.close();
    }
  });
});
