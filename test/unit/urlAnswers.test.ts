// Answers in the previous API version's form: each image as an address (data[i].url) instead of its
// bytes. The client downloads them through its own dispatcher (the paid request's proxy and
// certificates, its deadline), sends the key to the gateway's own origin only, and saves bytes only
// when they are an image of the kind the answer said. A download that fails keeps the address in
// the recovery manifest, and Recover Unsaved Images downloads it again. Real HTTP throughout.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, readdir, readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import * as path from 'node:path';
import type { FaultSpec } from '../../tools/emulator/faults';
import { createDispatcher } from '../../src/core/gateway/proxy';
import { downloadAgain, listRecoverable, moveRecoverable, readAnswersAgain } from '../../src/core/files/recoveryFolder';
import { settleInterrupted } from '../../src/jobs/interrupted';
import { startForwardProxy } from '../support/forwardProxy';
import {
  DEMO_KEYS,
  gatewaySuite,
  type LocalServer,
  listFiles,
  localServer,
  MemorySink,
  newService,
  paidRequests,
  SMALL,
  TINY_PNG,
  waitFor,
} from './support/gateway';

const MiB = 1024 * 1024;

describe('URL answers: images given as addresses (data[i].url, the previous API version)', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ client: { maxRetries: 0 }, dir: 'gwi-url-', models: true });
  let run = 0;
  /** A fresh output folder and recovery folder for each job. */
  const folders = () => {
    run++;
    return { out: path.join(gw.dir, `out-${run}`), recovery: path.join(gw.dir, `rec-${run}`) };
  };
  const job = (out: string, n = 2) => ({
    request: { model: 'sketch-mini', prompt: `addresses ${run}`, size: SMALL, n },
    output: { directory: out, pattern: 'img-{index}' },
  });
  /** The bytes the emulator serves for image `index` of the last paid request. */
  const served = (index: number): Buffer => {
    const paid = paidRequests(gw.emu).at(-1)!;
    const file = gw.emu.state.files.get(`/files/${paid.id}/${index}.png`);
    assert.ok(file, `image ${index} of ${paid.id} is served`);
    return file.bytes;
  };
  const downloads = () => gw.emu.state.downloads.map((d) => `${d.origin} ${d.path} key:${d.authorization} ${d.status}`);

  it("a generation answered with addresses on the gateway: the images land byte-equal, the usage counts, the key goes to the gateway's origin", async () => {
    gw.emu.state.setForms(['url-images']);
    const { out, recovery } = folders();
    const rig = newService(gw.client, gw.models, recovery);
    const result = await rig.service.run(job(out));
    assert.deepEqual(
      result.files.map((f) => path.basename(f)),
      ['img-1.png', 'img-2.png'],
    );
    for (const [i, file] of result.files.entries()) assert.ok((await readFile(file)).equals(served(i)), `image ${i + 1} is byte-equal`);
    const paid = paidRequests(gw.emu);
    assert.equal(paid.length, 1, 'one paid request');
    assert.deepEqual(rig.usages, [{ cost_rub: paid[0]!.chargedRub, balance: gw.emu.state.balanceRub }], 'the account gets the usage');
    assert.deepEqual(result.usage, rig.usages[0], 'and the history');
    assert.equal(result.recovered, undefined);
    assert.deepEqual(downloads(), [`gateway /files/${paid[0]!.id}/0.png key:true 200`, `gateway /files/${paid[0]!.id}/1.png key:true 200`]);
    assert.ok(rig.events.some((e) => e.type === 'image-saved' && e.index === 0));
    assert.deepEqual(await listFiles(recovery), [], 'nothing is left in the staging folder (the answer kept while they downloaded went too)');
  });

  it('addresses on another origin: downloaded without the key', async () => {
    gw.emu.state.setForms(['url-images', 'url-other-origin']);
    const { out, recovery } = folders();
    const rig = newService(gw.client, gw.models, recovery);
    const result = await rig.service.run(job(out));
    assert.equal(result.files.length, 2);
    for (const [i, file] of result.files.entries()) assert.ok((await readFile(file)).equals(served(i)));
    const id = paidRequests(gw.emu)[0]!.id;
    assert.deepEqual(downloads(), [`other /files/${id}/0.png key:false 200`, `other /files/${id}/1.png key:false 200`]);
  });

  describe('against a scripted gateway', () => {
    const servers: LocalServer[] = [];
    after(() => Promise.all(servers.map((s) => s.close())));
    /** A gateway that answers its paid request with `data` and serves `files` (path → handler). */
    const scripted = async (data: (base: string) => unknown[], files: Record<string, (res: ServerResponse) => void> = {}) => {
      let base = '';
      const server = await localServer((req, res) => {
        if (req.method === 'POST') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: data(base), usage: { cost_rub: 2.5, balance: 97.5 } }));
        } else if (files[req.url ?? '']) files[req.url ?? '']!(res);
        else res.writeHead(404).end();
      });
      base = server.url;
      servers.push(server);
      return server;
    };
    const keyOf = (server: LocalServer) =>
      server.requests.map((r) => `${r.method} ${r.url} key:${r.headers.authorization === `Bearer ${DEMO_KEYS.unlimited}`}`);

    it('redirects: the key goes while they stay on the gateway, never to another origin, nor again once one left; at most 5; a declared size above 50 MB is refused', async () => {
      const other = await localServer((req, res) => {
        if (req.url === '/bounce') res.writeHead(302, { location: `${gateway.url}/final.png` }).end();
        else res.writeHead(404).end();
      });
      servers.push(other);
      const gateway: LocalServer = await scripted(
        (base) => [{ url: `${base}/first` }, { url: `${base}/here` }, { url: `${base}/loop` }, { url: `${base}/big` }],
        {
          '/first': (res) => res.writeHead(302, { location: `${other.url}/bounce` }).end(),
          '/here': (res) => res.writeHead(307, { location: '/final.png' }).end(),
          '/final.png': (res) => res.writeHead(200, { 'content-type': 'image/png' }).end(TINY_PNG),
          '/loop': (res) => res.writeHead(302, { location: '/loop' }).end(),
          '/big': (res) => {
            res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(50 * MiB + 1) });
            res.write(TINY_PNG);
          },
        },
      );
      const sink = new MemorySink();
      const meta = await gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url }).generate({ model: 'sketch-mini', prompt: 'redirects' }, sink);
      assert.ok(sink.images.get(0)?.equals(TINY_PNG));
      assert.ok(sink.images.get(1)?.equals(TINY_PNG));
      assert.deepEqual(keyOf(gateway), [
        'POST /v1/images/generations key:true',
        'GET /first key:true',
        'GET /final.png key:false',
        'GET /here key:true',
        'GET /final.png key:true',
        ...Array.from({ length: 6 }, () => 'GET /loop key:true'),
        'GET /big key:true',
      ]);
      assert.deepEqual(keyOf(other), ['GET /bounce key:false']);
      assert.deepEqual(
        meta.images.map((i) => i.downloadFailure),
        [undefined, undefined, 'more than 5 redirects', 'the image there is larger than 50 MB'],
      );
      assert.deepEqual(meta.usage, { cost_rub: 2.5, balance: 97.5 });
    });

    it('an address that is not http(s) is never requested: it waits in the manifest, the message says which and why, the other image is saved', async () => {
      const addresses = ['file:///etc/passwd', 'ftp://example.com/a.png', 'javascript:alert(1)', '/relative/a.png'];
      const gateway = await scripted(() => [...addresses.map((url) => ({ url })), { b64_json: TINY_PNG.toString('base64') }]);
      const { out, recovery } = folders();
      const rig = newService(gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url }), gw.models, recovery);
      const result = await rig.service.run(job(out, 1));
      assert.deepEqual(
        result.files.map((f) => path.basename(f)),
        ['img-5.png'],
      );
      assert.deepEqual(keyOf(gateway), ['POST /v1/images/generations key:true'], 'nothing but the paid request was sent');
      assert.deepEqual(rig.usages, [{ cost_rub: 2.5, balance: 97.5 }]);
      const recovered = result.recovered!;
      assert.equal(recovered.files.length, 4);
      for (const [i, url] of addresses.entries())
        assert.ok(recovered.reason.includes(`image ${i + 1} at ${url}: "${url}" is not an http(s) address: nothing was requested`), recovered.reason);
      assert.match(recovered.reason, /the addresses are kept, and Recover Unsaved Images downloads them again/);
      const [waiting] = await listRecoverable(recovery);
      assert.equal(waiting?.manifestPath, recovered.manifestPath);
      assert.equal(waiting?.costRub, 2.5);
      assert.deepEqual(
        waiting?.files.map((f) => [f.kind, f.download?.url, f.suggestedName]),
        addresses.map((url, i) => ['url', url, `img-${i + 1}.png`]),
      );
      assert.deepEqual(await listFiles(recovery), [path.basename(recovered.manifestPath)]);
      // Recover tries again, with the same rule: still no request.
      const again = await downloadAgain(waiting, gw.newClient(DEMO_KEYS.unlimited, { baseUrl: gateway.url }));
      assert.equal(again.downloaded, 0);
      assert.equal(again.failures.length, 4);
      assert.equal(gateway.requests.length, 1);
    });
  });

  const failures: [FaultSpec, RegExp][] = [
    [{ fault: 'download-html' }, /the address answered with something that is not an image \(text\/html\)/],
    [{ fault: 'download-not-image' }, /not an image \(application\/octet-stream\)/],
    [{ fault: 'download-other-type' }, /the address answered with image\/gif, not the image\/png the gateway said/],
    [{ fault: 'download-large', imageBytes: 3 * MiB }, /the image there is larger than 1 MB/],
    [{ fault: 'download-404' }, /the address answered 404/],
    [{ fault: 'download-drop' }, /the download failed/],
  ];
  for (const [spec, reason] of failures) {
    it(`${spec.fault}: the address waits in the manifest, the other image is saved, nothing partial anywhere; Recover downloads it again whole`, async () => {
      gw.emu.state.setForms(['url-images']);
      gw.emu.state.armFault({ ...spec, times: 1 });
      const { out, recovery } = folders();
      const rig = newService(gw.newClient(DEMO_KEYS.unlimited, { maxDownloadBytes: MiB }), gw.models, recovery);
      const result = await rig.service.run(job(out));
      assert.deepEqual(
        result.files.map((f) => path.basename(f)),
        ['img-2.png'],
      );
      assert.ok((await readFile(result.files[0]!)).equals(served(1)));
      const paid = paidRequests(gw.emu)[0]!;
      assert.deepEqual(rig.usages, [{ cost_rub: paid.chargedRub, balance: gw.emu.state.balanceRub }], 'charged: the usage counts');
      const recovered = result.recovered!;
      assert.match(recovered.reason, reason);
      assert.ok(recovered.reason.includes(`image 1 at ${gw.emu.url}/files/${paid.id}/0.png`), recovered.reason);
      assert.deepEqual(await listFiles(out), ['img-2.png'], 'nothing partial under a final name');
      assert.deepEqual(await readdir(recovery), [`${result.jobId}.json`], 'no .part, no .img, no answer: only the manifest');
      const [waiting] = await listRecoverable(recovery);
      assert.equal(waiting?.requestId, paid.id);
      assert.equal(waiting?.costRub, paid.chargedRub);
      assert.equal(waiting?.files.length, 1);
      assert.equal(waiting?.files[0]?.kind, 'url');
      assert.match(waiting?.files[0]?.download?.failure ?? '', reason);

      // Recover: the fault is spent, the address answers now.
      const again = await downloadAgain(waiting, gw.newClient());
      assert.deepEqual([again.downloaded, again.failures], [1, []]);
      const moved = await moveRecoverable(again.job, path.join(out, 'recovered'));
      assert.deepEqual(
        moved.images.map((f) => path.basename(f)),
        ['img-1.png'],
      );
      assert.ok((await readFile(moved.images[0]!)).equals(served(0)), 'it lands whole');
      assert.deepEqual(await listFiles(recovery), [], 'the manifest went with its last image');
      assert.deepEqual(
        gw.emu.state.downloads.map((d) => d.authorization),
        [true, true, true],
        'the gateway origin gets the key, from Recover too',
      );
    });
  }

  it('a download above the named limit (50 MiB by default) is refused; nothing of it stays', async () => {
    gw.emu.state.setForms(['url-images']);
    gw.emu.state.armFault({ fault: 'download-large', times: 1 });
    const { out, recovery } = folders();
    const rig = newService(gw.client, gw.models, recovery);
    const result = await rig.service.run(job(out, 1));
    assert.deepEqual(result.files, []);
    assert.match(result.recovered!.reason, /the image there is larger than 50 MB/);
    assert.deepEqual(await readdir(recovery), [`${result.jobId}.json`]);
    assert.deepEqual(await listFiles(out), []);
  });

  it('Recover downloads an address on another origin again without the key', async () => {
    gw.emu.state.setForms(['url-images', 'url-other-origin']);
    gw.emu.state.armFault({ fault: 'download-404', times: 1 });
    const { out, recovery } = folders();
    const result = await newService(gw.client, gw.models, recovery).service.run(job(out, 1));
    assert.deepEqual(result.files, []);
    const [waiting] = await listRecoverable(recovery);
    const again = await downloadAgain(waiting!, gw.newClient());
    assert.equal(again.downloaded, 1);
    assert.deepEqual(
      gw.emu.state.downloads.map((d) => `${d.origin} key:${d.authorization} ${d.status}`),
      ['other key:false 404', 'other key:false 200'],
    );
  });

  it('through a proxy: the downloads go through the same proxy as the paid request, to either origin', async () => {
    const proxy = await startForwardProxy();
    try {
      const client = gw.newClient(DEMO_KEYS.unlimited, {
        dispatcher: createDispatcher({ timeoutMs: 15_000, env: {}, proxy: proxy.url }),
        closeDispatcher: true,
      });
      for (const forms of [['url-images'], ['url-images', 'url-other-origin']] as const) {
        gw.emu.state.reset();
        gw.emu.state.setForms(forms);
        proxy.reset();
        const sink = new MemorySink();
        const meta = await client.generate({ model: 'sketch-mini', prompt: 'proxied', size: SMALL, n: 2 }, sink);
        assert.deepEqual(
          meta.images.map((i) => i.downloadFailure),
          [undefined, undefined],
        );
        assert.ok(sink.images.get(0)?.equals(served(0)) && sink.images.get(1)?.equals(served(1)), forms.join('+'));
        assert.deepEqual(
          proxy.requests.map((r) => `${r.method} ${r.url}`),
          [`POST ${gw.emu.url}/v1/images/generations`, ...meta.images.map((i) => `GET ${i.url}`)],
          forms.join('+'),
        );
      }
    } finally {
      await proxy.close();
    }
  });

  it("the request's deadline applies to the downloads: a stalled one ends at the deadline, the next is not sent, the usage counts, both addresses wait", async () => {
    gw.emu.state.setForms(['url-images']);
    gw.emu.state.armFault({ fault: 'download-stall', times: 1 });
    const { out, recovery } = folders();
    const rig = newService(gw.newClient(DEMO_KEYS.unlimited, { paidTimeoutMs: 2_000 }), gw.models, recovery);
    // Ended by the deadline, not by the stall's 60 s (which outlasts the test's timeout): the reason
    // below names the 2 s time limit, and the second download was never sent.
    const result = await rig.service.run(job(out));
    assert.deepEqual(result.files, []);
    assert.equal(rig.usages.length, 1);
    assert.equal(result.recovered?.files.length, 2);
    assert.match(
      result.recovered.reason,
      /image 1 at .*: the request's time limit \(2 s\) passed during the download; image 2 at .*: the request's time limit/,
    );
    assert.equal(gw.emu.state.downloads.length, 1, 'the second download was not sent after the deadline');
    assert.deepEqual(await readdir(recovery), [`${result.jobId}.json`]);
  });

  it('while the images download, the answer with their addresses is on disk in the staging folder; it goes when the job ends', async () => {
    gw.emu.state.setForms(['url-images']);
    gw.emu.state.armFault({ fault: 'download-stall', times: 1 });
    const { out, recovery } = folders();
    const rig = newService(gw.newClient(DEMO_KEYS.unlimited, { paidTimeoutMs: 3_000 }), gw.models, recovery);
    const running = rig.service.run(job(out, 1));
    await waitFor(() => gw.emu.state.downloads.length === 1, 10_000);
    const names = await readdir(recovery);
    const answer = names.find((n) => n.endsWith('-answer.json'));
    assert.ok(answer, `the answer is kept while it downloads: ${names.join(', ')}`);
    assert.ok((await readFile(path.join(recovery, answer), 'utf8')).includes(`/files/${paidRequests(gw.emu)[0]!.id}/0.png`));
    const result = await running;
    assert.ok(!existsSync(path.join(recovery, answer)), 'removed once the manifest holds the address');
    assert.deepEqual(await readdir(recovery), [`${result.jobId}.json`]);
  });

  it('a crash while the images download: the answer it leaves gives Recover their addresses, which it downloads and moves whole', async () => {
    gw.emu.state.setForms(['url-images']);
    gw.emu.state.armFault({ fault: 'download-stall', times: 1 });
    const { out, recovery } = folders();
    const crashed = path.join(gw.dir, `crashed-${run}`);
    const rig = newService(gw.newClient(DEMO_KEYS.unlimited, { paidTimeoutMs: 3_000 }), gw.models, recovery);
    const running = rig.service.run(job(out));
    await waitFor(() => gw.emu.state.downloads.length === 1, 10_000);
    // What the process would leave in its staging folder, were it killed now.
    await cp(recovery, crashed, { recursive: true });
    await running;
    const answer = (await readdir(crashed)).find((n) => n.endsWith('-answer.json'));
    assert.ok(answer, 'the answer is in the staging folder');
    const now = new Date().toISOString();
    const { request } = job(out);
    const settled = await settleInterrupted(
      {
        id: answer.slice(0, -'-answer.json'.length),
        request,
        outputDirectory: out,
        namePattern: 'img-{index}',
        stagingDir: crashed,
        reservation: 1,
        startedAt: now,
        pid: 0,
        answeredAt: now,
      },
      path.join(gw.dir, `no-fallback-${run}`),
    );
    assert.equal(settled.charged, true);
    const [waiting] = await listRecoverable(crashed);
    const read = await readAnswersAgain(waiting!, crashed);
    assert.equal(read.found, 2);
    const id = paidRequests(gw.emu)[0]!.id;
    assert.deepEqual(
      read.job.files.filter((f) => f.kind === 'url').map((f) => f.download?.url),
      [0, 1].map((i) => `${gw.emu.url}/files/${id}/${i}.png`),
    );
    const again = await downloadAgain(read.job, gw.newClient());
    assert.equal(again.downloaded, 2);
    const moved = await moveRecoverable(again.job, path.join(out, 'recovered'));
    const bytes = await Promise.all(moved.images.map((f) => readFile(f)));
    for (const i of [0, 1])
      assert.ok(
        bytes.some((b) => b.equals(served(i))),
        `image ${i + 1} lands whole`,
      );
    assert.deepEqual(moved.answers, [], 'the answer was read whole: its addresses became images');
    assert.deepEqual(
      (await listFiles(crashed)).filter((f) => !f.endsWith('.part')),
      [],
    );
  });

  it('a cancel after the answer arrived does not stop the downloads: the paid images are saved', async () => {
    gw.emu.state.setForms(['url-images']);
    const { out, recovery } = folders();
    const rig = newService(gw.client, gw.models, recovery);
    const cancel = new AbortController();
    const result = await rig.service.run(job(out), { signal: cancel.signal, onEvent: (e) => void (e.type === 'answered' && cancel.abort()) });
    assert.equal(result.files.length, 2);
    assert.ok(rig.events.some((e) => e.type === 'cancel-after-charge'));
    assert.equal(gw.emu.state.downloads.length, 2);
  });
});
