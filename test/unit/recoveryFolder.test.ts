// The recovery folder as Recover Unsaved Images sees it: jobs with a manifest, and staged files that
// were left behind without one (a crash, a killed window), each with what is known about it.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { listRecoverable, removeRecoverable } from '../../src/core/files/recoveryFolder';
import { writeRecoveryManifest } from '../../src/core/files/recoveryManifest';
import { listFiles, removeDir, tempDir, TINY_PNG } from './support/gateway';

describe('recovery folder', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-recovery-');
  });
  afterEach(() => removeDir(dir));

  const HOUR_AGO = new Date(Date.now() - 60 * 60_000);
  async function leftBehind(name: string, bytes: Buffer | string, when = HOUR_AGO): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    await utimes(file, when, when);
    return file;
  }

  /** A staged image with its job's manifest: a job the recovery folder has a record of. */
  async function recordedJob(jobId: string): Promise<string> {
    const file = await leftBehind(`${jobId}-0.img`, TINY_PNG);
    await writeRecoveryManifest(dir, {
      jobId,
      createdAt: HOUR_AGO.toISOString(),
      prompt: 'p',
      model: 'm',
      intendedDirectory: '/x',
      reason: 'r',
      files: [{ path: file, suggestedName: `${jobId.slice(4)}.png` }],
    });
    return file;
  }

  it('lists manifests whose images are still there, oldest first', async () => {
    const img = path.join(dir, 'a.img');
    await writeFile(img, TINY_PNG);
    const base = { prompt: 'p', model: 'm', intendedDirectory: '/x', reason: 'r' };
    await writeRecoveryManifest(dir, { ...base, jobId: 'late', createdAt: '2030-01-02T00:00:00Z', files: [{ path: img, suggestedName: 'a.png' }] });
    await writeRecoveryManifest(dir, {
      ...base,
      jobId: 'early',
      createdAt: '2030-01-01T00:00:00Z',
      files: [
        { path: img, suggestedName: 'a.png' },
        { path: path.join(dir, 'gone.img'), suggestedName: 'b.png' },
      ],
    });
    await writeRecoveryManifest(dir, {
      ...base,
      jobId: 'empty',
      createdAt: '2030-01-03T00:00:00Z',
      files: [{ path: path.join(dir, 'gone2.img'), suggestedName: 'c.png' }],
    });
    await writeFile(path.join(dir, 'broken.json'), '{not json');
    const list = await listRecoverable(dir);
    assert.deepEqual(
      list.map((m) => m.jobId),
      ['early', 'late'],
    );
    assert.deepEqual(
      list[0]!.files.map((f) => f.suggestedName),
      ['a.png'],
      'missing files are left out',
    );
    assert.equal(list[0]!.files[0]!.bytes, TINY_PNG.length);
    assert.equal(list[0]!.files[0]!.mediaType, 'image/png');
    assert.deepEqual(await listRecoverable(path.join(dir, 'none')), []);
  });

  it('lists staged .img and .part files left without a manifest, with size, date, type and job id; not those of a job still writing', async () => {
    const img = await leftBehind('2030-01-01T10-00-00-000Z-abcd1234-0.img', TINY_PNG);
    const part = await leftBehind('2030-01-01T10-00-00-000Z-abcd1234-1.part', TINY_PNG.subarray(0, 30));
    const answer = await leftBehind('2030-01-01T10-00-00-000Z-abcd1234-answer.part', '{"data":[{"b64_json":"iVBO');
    await leftBehind('job-b-0.img', Buffer.from('not an image'));
    await leftBehind('job-c-0.part', 'still being written', new Date());
    await recordedJob('job-d');

    const list = await listRecoverable(dir);
    assert.deepEqual(
      list.map((job) => [job.jobId, !!job.unrecorded]),
      [
        ['2030-01-01T10-00-00-000Z-abcd1234', true],
        ['job-b', true],
        ['job-d', false],
      ],
    );
    const [a, b] = list;
    assert.deepEqual(
      a!.files.map((f) => [f.path, f.bytes, f.mediaType, !!f.incomplete, f.kind ?? 'image']),
      [
        [img, TINY_PNG.length, 'image/png', false, 'image'],
        [part, 30, 'image/png', true, 'image'],
        [answer, 26, undefined, true, 'answer'],
      ],
    );
    assert.deepEqual(
      a!.files.map((f) => f.suggestedName),
      ['2030-01-01T10-00-00-000Z-abcd1234-1.png', '2030-01-01T10-00-00-000Z-abcd1234-2-incomplete.png', '2030-01-01T10-00-00-000Z-abcd1234-answer.json'],
    );
    for (const f of a!.files) assert.ok(Math.abs(Date.parse(f.modifiedAt) - HOUR_AGO.getTime()) < 1000, f.modifiedAt);
    assert.equal(a!.createdAt, a!.files[0]!.modifiedAt);
    assert.match(a!.reason, /without a record/);
    assert.deepEqual(
      b!.files.map((f) => [path.basename(f.path), f.mediaType, f.suggestedName]),
      [['job-b-0.img', undefined, 'job-b-1.bin']],
    );
  });

  it('removeRecoverable removes the files and the manifest of one job, nothing else', async () => {
    const left = await leftBehind('job-e-0.img', TINY_PNG);
    const keep = await leftBehind('job-f-0.img', TINY_PNG);
    await recordedJob('job-g');
    const list = await listRecoverable(dir);
    await removeRecoverable(list.find((j) => j.jobId === 'job-e')!);
    await removeRecoverable(list.find((j) => j.jobId === 'job-g')!);
    assert.ok(!existsSync(left));
    assert.ok(existsSync(keep));
    assert.deepEqual(await listFiles(dir), ['job-f-0.img']);
  });
});
