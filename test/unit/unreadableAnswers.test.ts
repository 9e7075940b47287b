// A paid answer is never lost to its form. Data URLs are decoded as they arrive; an answer that cannot
// be read (a stray character in an image, a body cut short, an envelope of another gateway) is kept in
// the recovery folder as it came, the message says where, and Recover reads it again. Checked against
// the emulator: what is on disk is byte-equal to what it sent.
import * as assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { type GatewayError, ResponseFormatError } from '../../src/core/gateway/errors';
import { UnreadableAnswerError } from '../../src/core/answers/paidAnswer';
import { listRecoverable, moveRecoverable, readAnswersAgain } from '../../src/core/files/recoveryFolder';
import type { RecoveryManifest } from '../../src/core/files/recoveryManifest';
import type { JobResult } from '../../src/jobs/jobTypes';
import type { FaultSpec } from '../../tools/emulator';
import type { FormName } from '../../tools/emulator/forms';
import { strayCharacterAt } from '../../tools/emulator/respond';
import { DEMO_KEYS, gatewaySuite, listFiles, newService, paidRequests, SMALL } from './support/gateway';

/** What the emulator answers to this request without a fault. */
async function cleanBody(url: string, request: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEMO_KEYS.unlimited}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(request),
  });
  assert.equal(response.status, 200);
  return response.text();
}

/** A body with the figures that differ from one request to the next (`created`, `id`, the balance) set to fixed values. */
const normalize = (text: string) =>
  text
    .replace(/"created":\d+/, '"created":0')
    .replace(/"id":"[^"]*"/, '"id":"x"')
    .replace(/"balance":[\d.]+/, '"balance":0');

/** The image strings of a body: where each content starts and ends. */
function imageStrings(body: string, key = '"b64_json":"'): { start: number; end: number }[] {
  const found: { start: number; end: number }[] = [];
  for (let at = body.indexOf(key); at !== -1; at = body.indexOf(key, at + 1)) {
    const start = at + key.length;
    found.push({ start, end: body.indexOf('"', start) });
  }
  return found;
}

/** The body with the content of the first `count` image strings left out (they were decoded into files). */
function withoutFirstImages(body: string, count: number, key?: string): string {
  const strings = imageStrings(body, key).slice(0, count);
  let out = '';
  let from = 0;
  for (const { start, end } of strings) {
    out += body.slice(from, start);
    from = end;
  }
  return out + body.slice(from);
}

/** The images of a clean JSON body, decoded (data URL headers stripped). */
function imagesOf(body: string, key?: string): Buffer[] {
  return imageStrings(body, key).map(({ start, end }) => Buffer.from(body.slice(start, end).replace(/^data:[^,]*,/, ''), 'base64'));
}

describe('paid answers that cannot be read are kept, and read again', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ models: true });
  let counter = 0;

  /**
   * One job with `fault` armed, after the same request was made once without it (for the expected
   * body); `imageBytes`: both with images padded to that size (the large fault).
   */
  async function runJob(n: number, forms: FormName[] = [], fault?: FaultSpec, imageBytes?: number) {
    const id = ++counter;
    const request = { model: 'aurora-1', prompt: `kept ${id}`, n, size: SMALL, seed: 40 + id };
    gw.emu.state.setForms(forms);
    const large: Record<string, string> = imageBytes ? { 'x-emulator-fault': 'large', 'x-emulator-image-bytes': String(imageBytes) } : {};
    const clean = await cleanBody(gw.emu.url, request, large);
    if (imageBytes) gw.emu.state.armFault({ fault: 'large', imageBytes });
    if (fault) gw.emu.state.armFault(fault);
    const out = path.join(gw.dir, `out-${id}`);
    const recovery = path.join(gw.dir, `recovery-${id}`);
    const rig = newService(gw.client, gw.models, recovery);
    const paidBefore = paidRequests(gw.emu).length;
    let result: JobResult | undefined;
    let error: unknown;
    try {
      result = await rig.service.run({ request, output: { directory: out, pattern: '{index}' } });
    } catch (e) {
      error = e;
    }
    assert.equal(paidRequests(gw.emu).length - paidBefore, 1, 'one paid request');
    return { clean, out, recovery, rig, result, error };
  }

  /** The job's kept answer: its path, from the recovered event, and its manifest. */
  async function keptAnswer(run: Awaited<ReturnType<typeof runJob>>): Promise<{ file: string; manifest: RecoveryManifest }> {
    const event = run.rig.events.find((e) => e.type === 'recovered');
    assert.ok(event && event.type === 'recovered', 'a recovered event');
    const manifest = JSON.parse(await readFile(event.manifestPath, 'utf8')) as RecoveryManifest;
    const answer = manifest.files.find((f) => f.kind === 'answer');
    assert.ok(answer, `the answer is in the manifest: ${JSON.stringify(manifest.files)}`);
    return { file: answer.path, manifest };
  }

  /** Recover: the job is listed, its answer read again; returns the images found, moved into a folder. */
  async function recover(recovery: string, into: string): Promise<{ images: Buffer[]; answers: string[]; readAgain?: string }> {
    const [job, ...others] = await listRecoverable(recovery);
    assert.ok(job && !others.length, 'one job waits');
    const again = await readAnswersAgain(job, recovery);
    const readAgain = again.job.files.find((f) => f.kind === 'answer')?.readAgain;
    const moved = await moveRecoverable(again.job, into);
    assert.deepEqual(await listRecoverable(recovery), [], 'nothing waits after the move');
    return { images: await Promise.all(moved.images.map((f) => readFile(f))), answers: moved.answers, readAgain };
  }

  it('invalid base64 in the middle of the 3rd of 4 images: 2 saved, the rest kept as sent, Recover reads images 3 and 4 byte-equal', async () => {
    const run = await runJob(4, [], { fault: 'stray-character', imageIndex: 2 });
    const images = imagesOf(run.clean);
    assert.ok(run.error instanceof UnreadableAnswerError, String(run.error));
    assert.equal(run.error.outcomeUnknown, true);
    assert.match(run.error.message, /data\[2\]\.b64_json.*not valid base64: invalid character '!'/);
    // Images 1 and 2 arrived whole: saved where they were meant to go.
    const saved = await listFiles(run.out);
    assert.deepEqual(saved, ['1.png', '2.png']);
    for (const [i, name] of saved.entries()) assert.ok((await readFile(path.join(run.out, name))).equals(images[i]!), `${name} byte-equal`);
    // The rest is kept as the emulator sent it (images 1 and 2 left out: they are in their files).
    const { file, manifest } = await keptAnswer(run);
    const [third] = imageStrings(run.clean).slice(2);
    const insertAt = third!.start + strayCharacterAt(third!.end - third!.start);
    const sent = `${run.clean.slice(0, insertAt)}!${run.clean.slice(insertAt)}`;
    assert.equal(normalize(await readFile(file, 'latin1')), normalize(withoutFirstImages(sent, 2)));
    // The message says where everything is; the manifest holds the request id, the model, the cost and why.
    assert.ok(run.error.message.includes(file), run.error.message);
    assert.ok(run.error.message.includes(run.out), run.error.message);
    assert.equal(manifest.requestId, paidRequests(gw.emu).at(-1)!.id);
    assert.equal(manifest.model, 'aurora-1');
    assert.equal(manifest.costRub, paidRequests(gw.emu).at(-1)!.chargedRub);
    assert.match(manifest.reason, /not valid base64/);
    assert.deepEqual((run.error as GatewayError).recovered?.files, [file]);
    // Recover: images 3 and 4 come out byte-equal (the stray character skipped); the raw answer goes along.
    const recovered = await recover(run.recovery, path.join(run.out, 'recovered'));
    assert.equal(recovered.images.length, 2);
    assert.ok(recovered.images[0]!.equals(images[2]!), 'image 3 byte-equal');
    assert.ok(recovered.images[1]!.equals(images[3]!), 'image 4 byte-equal');
    assert.equal(recovered.readAgain, 'partly', 'a character was skipped: the raw answer is offered too');
    assert.equal(recovered.answers.length, 1);
  });

  it('the same with 4 images of 3 MiB: chunk boundaries everywhere, kept byte-equal, images 3 and 4 read again byte-equal', async () => {
    const run = await runJob(4, [], { fault: 'stray-character', imageIndex: 2 }, 3 * 1024 * 1024);
    const images = imagesOf(run.clean);
    assert.equal(images[2]!.length, 3 * 1024 * 1024);
    assert.ok(run.error instanceof UnreadableAnswerError, String(run.error));
    assert.deepEqual(await listFiles(run.out), ['1.png', '2.png']);
    const { file } = await keptAnswer(run);
    const [third] = imageStrings(run.clean).slice(2);
    const insertAt = third!.start + strayCharacterAt(third!.end - third!.start);
    const sent = `${run.clean.slice(0, insertAt)}!${run.clean.slice(insertAt)}`;
    assert.ok(normalize(await readFile(file, 'latin1')) === normalize(withoutFirstImages(sent, 2)), 'kept byte-equal');
    const recovered = await recover(run.recovery, path.join(run.out, 'recovered'));
    assert.ok(recovered.images[0]!.equals(images[2]!) && recovered.images[1]!.equals(images[3]!), 'images 3 and 4 byte-equal');
  });

  it('truncated JSON after the first image: it is saved, what arrived of the second is kept as sent, Recover gives its first part', async () => {
    const run = await runJob(3, [], { fault: 'truncated-json' });
    const images = imagesOf(run.clean);
    assert.ok(run.error instanceof ResponseFormatError, String(run.error));
    assert.match(run.error.message, /truncated/);
    assert.deepEqual(await listFiles(run.out), ['1.png']);
    assert.ok((await readFile(path.join(run.out, '1.png'))).equals(images[0]!));
    const { file } = await keptAnswer(run);
    // The emulator cut its own body (whose balance is the one after this charge) in half.
    const whole = run.clean.replace(/"balance":[\d.]+/, `"balance":${JSON.stringify(gw.emu.state.balanceRub)}`);
    const sent = whole.slice(0, Math.floor(whole.length / 2));
    assert.equal(normalize(await readFile(file, 'latin1')), normalize(withoutFirstImages(sent, 1)));
    assert.ok(run.error.message.includes(file), run.error.message);
    const recovered = await recover(run.recovery, path.join(run.out, 'recovered'));
    assert.equal(recovered.images.length, 1, 'the second image, as far as it came');
    assert.ok(recovered.images[0]!.length > 0);
    assert.ok(images[1]!.subarray(0, recovered.images[0]!.length).equals(recovered.images[0]!), 'the first part of image 2, byte-equal');
    assert.equal(recovered.readAgain, 'partly');
  });

  it('an unknown envelope with the images under another name: kept whole as sent, Recover reads them byte-equal and drops the answer', async () => {
    const run = await runJob(2, ['unknown-envelope']);
    const images = imagesOf(run.clean, '"image_base64":"');
    assert.equal(images.length, 2);
    assert.ok(run.error instanceof ResponseFormatError, String(run.error));
    assert.match(run.error.message, /no `data` array/);
    assert.deepEqual(await listFiles(run.out), []);
    const { file, manifest } = await keptAnswer(run);
    assert.equal(normalize(await readFile(file, 'latin1')), normalize(run.clean));
    assert.ok(run.error.message.includes(file), run.error.message);
    assert.equal(manifest.costRub, paidRequests(gw.emu).at(-1)!.chargedRub);
    const recovered = await recover(run.recovery, path.join(run.out, 'recovered'));
    assert.equal(recovered.images.length, 2);
    recovered.images.forEach((bytes, i) => assert.ok(bytes.equals(images[i]!), `image ${i + 1} byte-equal`));
    assert.equal(recovered.readAgain, 'whole');
    assert.deepEqual(recovered.answers, [], 'every image came out clean: the answer is not needed');
  });

  for (const form of ['data-url-b64', 'data-url-url'] as const) {
    it(`${form}: decoded as it arrives, byte-equal, nothing kept`, async () => {
      const run = await runJob(2, [form]);
      const images = imagesOf(run.clean, form === 'data-url-url' ? '"url":"' : undefined);
      assert.match(run.clean, /"(b64_json|url)":"data:image\/png;base64,iVBOR/);
      assert.equal(run.error, undefined, String(run.error));
      assert.deepEqual(
        run.result!.files.map((f) => path.basename(f)),
        ['1.png', '2.png'],
      );
      for (const [i, f] of run.result!.files.entries()) assert.ok((await readFile(f)).equals(images[i]!));
      assert.equal(run.result!.usage?.cost_rub, paidRequests(gw.emu).at(-1)!.chargedRub);
      assert.deepEqual(await listFiles(run.recovery), [], 'nothing kept after a success');
    });
  }

  it('data-url-b64 with escaped slashes, and with a stray character: the header is read, and skipped again by Recover', async () => {
    const escaped = await runJob(1, ['data-url-b64'], { fault: 'escaped-slashes' });
    assert.equal(escaped.error, undefined, String(escaped.error));
    assert.ok((await readFile(escaped.result!.files[0]!)).equals(imagesOf(escaped.clean)[0]!));
    const stray = await runJob(1, ['data-url-b64'], { fault: 'stray-character' });
    assert.ok(stray.error instanceof ResponseFormatError, String(stray.error));
    const recovered = await recover(stray.recovery, path.join(stray.out, 'recovered'));
    assert.ok(recovered.images[0]!.equals(imagesOf(stray.clean)[0]!));
  });
});
