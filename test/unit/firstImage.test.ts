// Each image is saved as soon as it lands, not when the whole answer is complete; and what the
// emulator records about the images it sent (for the chaos soak's money invariants).
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { JobEvent } from '../../src/jobs/jobTypes';
import { ConnectionError } from '../../src/core/gateway/errors';
import { caught, gatewaySuite, listFiles, newService, paidRequests, SMALL } from './support/gateway';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('images are saved as they land', () => {
  const gw = gatewaySuite({ models: true });
  beforeEach(() => {
    gw.emu.state.recordImages = true;
  });

  it('the first image is in the output folder while the answer is still streaming', async () => {
    gw.emu.state.imageGapMs = 400;
    const out = path.join(gw.dir, 'early');
    // When each image was saved: how many of the answer's images the emulator (in this process) had
    // sent by then. An order of events, not a clock: a busy machine must not fail it.
    const saved: { file: string; imagesSent: number; onDisk: boolean }[] = [];
    const imagesSent = () => paidRequests(gw.emu)[0]?.images?.filter((i) => i.delivered).length ?? 0;
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery-early'), {
      onEvent: (event: JobEvent) => {
        if (event.type === 'image-saved') saved.push({ file: event.file, imagesSent: imagesSent(), onDisk: existsSync(event.file) });
      },
    });
    const result = await rig.service.run({
      request: { model: 'aurora-1', prompt: 'early bird', n: 3, size: SMALL, seed: 5 },
      output: { directory: out, pattern: '{model}-{index}' },
    });
    assert.deepEqual(
      saved.map((s) => s.file),
      result.files,
      'one image-saved event per file, in order',
    );
    assert.ok(
      saved.every((s) => s.onDisk),
      'the file exists when image-saved is told',
    );
    // Two gaps of 400 ms follow the first image: it was saved before the last image had been sent.
    assert.ok(saved[0]!.imagesSent < 3, `the first image was saved after all 3 had been sent (${saved.map((s) => s.imagesSent).join(', ')})`);
    const [paid] = paidRequests(gw.emu);
    assert.deepEqual(
      await Promise.all(result.files.map(async (f) => sha256(await readFile(f)))),
      paid!.images!.map((i) => i.sha256),
      'the emulator recorded the bytes it sent',
    );
    assert.ok(paid!.images!.every((i) => i.delivered));
    assert.match(paid!.fingerprint ?? '', /^[0-9a-f]{32}$/);
  });

  // The staging file's fsync runs beside the stream (StagedImage.durable); the job must still end
  // only after it, and the descriptor is closed after the sync: none may be open when run() returns.
  it('a job ends only once its images are synced and closed, placed or kept for recovery', async function () {
    if (!existsSync('/proc/self/fd')) this.skip();
    const openFilesUnder = async (...dirs: string[]) => {
      const open: string[] = [];
      for (const fd of await readdir('/proc/self/fd')) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
        if (dirs.some((dir) => target.startsWith(dir))) open.push(target);
      }
      return open;
    };
    // Large enough that a sync takes a while (tiny ones are done before anyone could notice).
    gw.emu.state.armFault({ fault: 'large', times: -1, imageBytes: 8 * 1024 * 1024 });
    const recovery = path.join(gw.dir, 'recovery-durable');
    const out = path.join(gw.dir, 'durable');
    const rig = newService(gw.client, gw.models, recovery);
    const placed = await rig.service.run({
      request: { model: 'aurora-1', prompt: 'on disk', n: 3, size: SMALL, seed: 7 },
      output: { directory: out, pattern: '{index}' },
    });
    assert.equal(placed.files.length, 3);
    assert.deepEqual(await openFilesUnder(recovery, out), []);
    // The output folder is a file: nothing can be placed, all three are kept for recovery.
    const blocked = path.join(gw.dir, 'blocked');
    await writeFile(blocked, 'not a folder');
    const kept = await rig.service.run({
      request: { model: 'aurora-1', prompt: 'kept', n: 3, size: SMALL, seed: 8 },
      output: { directory: blocked, pattern: '{index}' },
    });
    assert.equal(kept.recovered?.files.length, 3);
    assert.deepEqual(await openFilesUnder(recovery), []);
  });

  it('the output folder is made once the answer arrives; a job that then places nothing leaves none of the folders it made', async () => {
    const parent = path.join(gw.dir, 'made-for-nothing');
    const out = path.join(parent, 'images');
    gw.emu.state.armFault({ fault: 'truncated-json' });
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery-truncated'));
    await caught(() =>
      rig.service.run({ request: { model: 'aurora-1', prompt: 'cut', n: 1, size: SMALL, seed: 3 }, output: { directory: out, pattern: '{index}' } }),
    );
    assert.ok(
      rig.events.some((e) => e.type === 'answered'),
      'the answer arrived (the folder was made then)',
    );
    assert.ok(!existsSync(parent), 'both new folders are gone again');
    // A folder that was there before is kept, empty or not.
    await rig.service
      .run({ request: { model: 'aurora-1', prompt: 'fine', n: 1, size: SMALL, seed: 4 }, output: { directory: out, pattern: '{index}' } })
      .then((r) => assert.equal(r.files.length, 1));
    gw.emu.state.armFault({ fault: 'truncated-json' });
    await caught(() =>
      rig.service.run({ request: { model: 'aurora-1', prompt: 'cut again', n: 1, size: SMALL, seed: 5 }, output: { directory: out, pattern: '{index}' } }),
    );
    assert.deepEqual(await listFiles(out), ['1.png']);
  });

  it('a connection cut after the first image: that image stays saved; what arrived after it is kept in the recovery folder, and the message says where', async () => {
    gw.emu.state.imageGapMs = 300;
    gw.emu.state.armFault({ fault: 'drop-mid-body' });
    const out = path.join(gw.dir, 'dropped');
    const recovery = path.join(gw.dir, 'recovery-dropped');
    const rig = newService(gw.client, gw.models, recovery);
    const error = await caught(() =>
      rig.service.run({ request: { model: 'aurora-1', prompt: 'cut short', n: 3, size: SMALL, seed: 6 }, output: { directory: out, pattern: '{index}' } }),
    );
    assert.ok(error instanceof ConnectionError, String(error));
    const saved = rig.events.flatMap((e) => (e.type === 'image-saved' ? [e.file] : []));
    const [paid] = paidRequests(gw.emu);
    const delivered = paid!.images!.filter((i) => i.delivered);
    assert.ok(delivered.length >= 1, 'the emulator sent at least one whole image');
    assert.deepEqual(
      await Promise.all(saved.map(async (f) => sha256(await readFile(f)))),
      delivered.map((i) => i.sha256),
    );
    // No image waits for recovery; what arrived of the answer after the whole images does.
    const recovered = rig.events.flatMap((e) => (e.type === 'recovered' ? e.files : []));
    assert.equal(recovered.length, 1, recovered.join(', '));
    assert.match(recovered[0]!, /-answer\.json$/);
    assert.ok(error.message.includes(recovered[0]!), error.message);
    assert.deepEqual(
      (await listFiles(recovery)).filter((f) => !f.endsWith('.json')),
      [],
    );
  });

  it('a cancel after the paid images started to arrive: they are received and saved whole', async () => {
    gw.emu.state.imageGapMs = 300;
    const out = path.join(gw.dir, 'late-cancel');
    const controller = new AbortController();
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery-late-cancel'), {
      onEvent: (event: JobEvent) => {
        rig.events.push(event);
        if (event.type === 'image-saved') controller.abort();
      },
    });
    const result = await rig.service.run(
      { request: { model: 'aurora-1', prompt: 'too late to cancel', n: 3, size: SMALL, seed: 7 }, output: { directory: out, pattern: '{index}' } },
      { signal: controller.signal },
    );
    assert.ok(controller.signal.aborted);
    assert.equal(result.files.length, 3);
    assert.equal(rig.events.filter((e) => e.type === 'cancel-after-charge').length, 1);
    const [paid] = paidRequests(gw.emu);
    assert.equal(paid!.clientAborted, undefined, 'the answer was read to its end');
    assert.deepEqual(
      await Promise.all(result.files.map(async (f) => sha256(await readFile(f)))),
      paid!.images!.map((i) => i.sha256),
    );
  });

  it('a cancel after the answer arrived but before its first image: the paid images are still received and saved', async () => {
    // The gateway answers once the provider did, so its success headers mean it has charged.
    gw.emu.state.headGapMs = 400;
    const out = path.join(gw.dir, 'head-gap-cancel');
    const controller = new AbortController();
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery-head-gap'), {
      onEvent: (event: JobEvent) => {
        rig.events.push(event);
        if (event.type === 'answered') controller.abort();
      },
    });
    const result = await rig.service.run(
      { request: { model: 'aurora-1', prompt: 'charged, not yet sent', n: 2, size: SMALL, seed: 8 }, output: { directory: out, pattern: '{index}' } },
      { signal: controller.signal },
    );
    assert.ok(controller.signal.aborted);
    const types = rig.events.map((e) => e.type);
    assert.ok(types.indexOf('answered') < types.indexOf('image-received'), `answered before the first image: ${types.join(', ')}`);
    assert.equal(types.filter((t) => t === 'cancel-after-charge').length, 1);
    assert.equal(result.files.length, 2);
    const [paid] = paidRequests(gw.emu);
    assert.equal(paid!.clientAborted, undefined, 'the answer was read to its end');
    assert.deepEqual(
      await Promise.all(result.files.map(async (f) => sha256(await readFile(f)))),
      paid!.images!.map((i) => i.sha256),
    );
  });

  it('a cancel before the answer arrives stops the request', async () => {
    gw.emu.state.armFault({ fault: 'slow-headers', latencyMs: 600 });
    const controller = new AbortController();
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery-early-cancel'));
    setTimeout(() => controller.abort(), 150);
    const error = await caught(() =>
      rig.service.run(
        {
          request: { model: 'aurora-1', prompt: 'stopped in time', size: SMALL },
          output: { directory: path.join(gw.dir, 'early-cancel'), pattern: '{index}' },
        },
        { signal: controller.signal },
      ),
    );
    assert.ok(error instanceof Error && /cancel/i.test(error.name + error.message), String(error));
    assert.equal(rig.events.filter((e) => e.type === 'answered' || e.type === 'cancel-after-charge').length, 0);
  });

  it('the same request twice has the same fingerprint, a different prompt another', async () => {
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery-fp'));
    const job = (prompt: string) => ({
      request: { model: 'aurora-1', prompt, size: SMALL, seed: 1 },
      output: { directory: path.join(gw.dir, 'fp'), pattern: '{index}' },
    });
    await rig.service.run(job('one'));
    await rig.service.run(job('one'));
    await rig.service.run(job('two'));
    const [a, b, c] = paidRequests(gw.emu).map((r) => r.fingerprint);
    assert.equal(a, b);
    assert.notEqual(a, c);
  });
});
