// Files replaced whole (a temporary file beside them, renamed over them) on a disk that is really
// full (tmpfs): the write fails with its error, the file keeps what it held, and no temporary file
// is left behind. With a little room left, the write is cut short by the kernel without an error:
// that too must fail, never put a cut file in place of the whole one.
import * as assert from 'node:assert/strict';
import { copyFile, readdir, readFile, statfs, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import { pngThumbnail } from '../../src/core/files/pngThumbnail';
import { type RecoveryManifest, writeRecoveryManifest } from '../../src/core/files/recoveryManifest';
import { ThumbnailCache } from '../../src/core/files/thumbnailCache';
import { InFlightJournal, type InFlightStart } from '../../src/jobs/inFlight';
import { SharedJournal } from '../../src/jobs/results/journalFile';
import { fillUp, orSkip, TmpfsMounts } from './support/tmpfs';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'images');

const temporaryFiles = async (dir: string) => (await readdir(dir)).filter((name) => name.endsWith('.tmp'));

/** Leaves `bytes` free on the file system at `dir` (in whole blocks). */
async function leaveFree(dir: string, bytes: number): Promise<void> {
  const { bavail, bsize } = await statfs(dir);
  await writeFile(path.join(dir, 'filler'), Buffer.alloc((bavail - Math.ceil(bytes / bsize)) * bsize));
}

describe('a failed write leaves the file as it was and no temporary file (full tmpfs)', function () {
  this.timeout(20_000);
  const mounts = new TmpfsMounts();
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(os.tmpdir(), 'gi-failed-writes-'))));
  afterEach(() => {
    mounts.unmountAll();
    rmSync(root, { recursive: true, force: true });
  });

  const start = (id: string): InFlightStart => ({
    id,
    request: { model: 'aurora-1', prompt: 'a record on a full disk '.repeat(40) },
    outputDirectory: root,
    namePattern: '{slug}-{index}',
    stagingDir: root,
    reservation: 12.5,
  });

  it(
    'the in-flight record of a paid request: begin fails (so nothing is sent), a note fails quietly and the record stays whole',
    orSkip(async () => {
      const dir = await mounts.mount(path.join(root, 'in-flight'), 1);
      const journal = new InFlightJournal(dir);
      const running = await journal.begin(start('job-1'));
      const before = await readFile(path.join(dir, 'job-1.json'), 'utf8');
      await fillUp(dir);
      await assert.rejects(journal.begin(start('job-2')), /ENOSPC/);
      await running.note({ requestId: 'req-1' });
      assert.equal(await readFile(path.join(dir, 'job-1.json'), 'utf8'), before, 'the record as it was');
      assert.deepEqual(await temporaryFiles(dir), []);
      assert.deepEqual(
        (await journal.list()).map((r) => r.id),
        ['job-1'],
      );
    }),
  );

  it(
    'the results journal rewritten (compacted): the write fails even when the kernel cut it short without an error, the journal stays whole',
    orSkip(async () => {
      const dir = await mounts.mount(path.join(root, 'journal'), 1);
      const journal = new SharedJournal(path.join(dir, 'results.jsonl'));
      const lines = Array.from({ length: 400 }, (_, i) => JSON.stringify({ put: { id: `result-${i}`, prompt: 'a lighthouse at dusk, watercolour' } }));
      await journal.exclusive(async (lease) => journal.rewrite(lines.slice(0, 20), { lease, read: (await journal.read(true)).position }));
      const before = await readFile(journal.file, 'utf8');
      // Room for part of the new journal (16 KB of 29 KB): the one write of it comes back short.
      await leaveFree(dir, 16 * 1024);
      await assert.rejects(
        journal.exclusive(async (lease) => journal.rewrite(lines, { lease, read: (await journal.read(true)).position })),
        /ENOSPC/,
      );
      assert.equal(await readFile(journal.file, 'utf8'), before, 'the journal as it was');
      assert.deepEqual(await temporaryFiles(dir), []);
    }),
  );

  it(
    'a result appended to the journal with less room than its line: the append fails (the caller knows), and the cut line is removed',
    orSkip(async () => {
      const dir = await mounts.mount(path.join(root, 'append'), 1);
      const journal = new SharedJournal(path.join(dir, 'results.jsonl'));
      const first = JSON.stringify({ put: { id: 'result-1' } });
      await journal.exclusive(() => journal.append(first));
      await leaveFree(dir, 4096);
      const long = JSON.stringify({ put: { id: 'result-2', prompt: 'a lighthouse at dusk '.repeat(1000) } });
      await assert.rejects(
        journal.exclusive(() => journal.append(long)),
        /ENOSPC/,
      );
      const read = await journal.exclusive(() => journal.read(true));
      assert.deepEqual(read.heads, [{ put: { id: 'result-1' } }]);
      assert.equal(read.text, `${first}\n`, 'the cut line was removed');
    }),
  );

  it(
    "a thumbnail: the gallery's request fails with the disk's error and leaves nothing in the thumbnails folder",
    orSkip(async () => {
      const dir = await mounts.mount(path.join(root, 'thumbs'), 1);
      const image = path.join(root, 'result.png');
      await copyFile(path.join(FIXTURES, 'python.png'), image);
      await fillUp(dir);
      const cache = new ThumbnailCache(dir, (png, side) => Promise.resolve(pngThumbnail(png, side)), { side: 64 });
      await assert.rejects(cache.get(image), /ENOSPC/);
      assert.deepEqual(await readdir(dir), ['filler']);
    }),
  );

  it(
    'a recovery manifest (where paid images wait): written again on a full disk, the one before stays whole',
    orSkip(async () => {
      const dir = await mounts.mount(path.join(root, 'recovery'), 1);
      const manifest: RecoveryManifest = {
        jobId: 'job-1',
        createdAt: new Date().toISOString(),
        prompt: 'paid and kept',
        model: 'aurora-1',
        intendedDirectory: root,
        reason: 'the output folder cannot be written',
        files: [{ path: path.join(dir, 'job-1-0.img'), suggestedName: 'paid-and-kept-1.png' }],
      };
      const file = await writeRecoveryManifest(dir, manifest);
      const before = await readFile(file, 'utf8');
      await fillUp(dir);
      await assert.rejects(writeRecoveryManifest(dir, { ...manifest, reason: 'a second try '.repeat(500) }), /ENOSPC/);
      assert.equal(await readFile(file, 'utf8'), before, 'the manifest as it was');
      assert.deepEqual(await temporaryFiles(dir), []);
    }),
  );
});
