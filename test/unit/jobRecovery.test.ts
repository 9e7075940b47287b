// The job service keeps a paid image for recovery when its bytes may not be on disk: a failed sync.
// The gateway side is scripted through the job's ImageApi port (the images are written into the
// job's own sink); the file system is real.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ReportingSink } from '../../src/jobs/jobFiles';
import type { ImageApi } from '../../src/jobs/jobTypes';
import { canFailSync, makeCloseFail, makeSyncFail } from './support/failingSync';
import { testModel } from './support/models';
import { newService, removeDir, tempDir, TINY_PNG } from './support/gateway';

/** An ImageApi whose answer is written by `answer` into the job's sink, after the paid answer "arrived". */
function scriptedApi(answer: ImageApi['generate']): ImageApi {
  const unused = () => Promise.reject(new Error('not used by this test'));
  return {
    generate: async (request, sink, options) => {
      options?.onPaidAnswer?.({});
      return answer(request, sink, options);
    },
    generateWithReferences: unused,
    edit: unused,
  };
}

describe('job recovery', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('gwi-jobrec-');
  });
  afterEach(() => removeDir(dir));

  it('a failed sync keeps the placed image for recovery too, and says so', async function () {
    if (!canFailSync) this.skip();
    const recovery = path.join(dir, 'recovery');
    const out = path.join(dir, 'out');
    const bytes = Buffer.concat([TINY_PNG, Buffer.alloc(1024 * 1024)]);
    const api = scriptedApi(async (_request, sink) => {
      const writer = await sink.open(0);
      await writer.write(bytes);
      const [part] = (await readdir(recovery)).filter((f) => f.endsWith('.part'));
      makeSyncFail(path.join(recovery, part!));
      await writer.close();
      return { images: [{ index: 0, mediaType: 'image/png' }], usage: { cost_rub: 3, balance: 97 } };
    });
    const rig = newService(undefined as never, [testModel({ id: 'aurora-1' })], recovery, { api: async () => api });
    const result = await rig.service.run({ request: { model: 'aurora-1', prompt: 'sync fails', n: 1 }, output: { directory: out, pattern: 'img' } });
    assert.deepEqual(
      result.files.map((f) => path.basename(f)),
      ['img.png'],
      'the workspace file stays (its bytes may yet be on disk)',
    );
    assert.ok(result.recovered, 'kept for recovery');
    assert.match(result.recovered.reason, /EINVAL/);
    assert.match(result.recovered.reason, /disk/);
    const [kept] = result.recovered.files;
    assert.ok(kept && existsSync(kept), 'the staged copy stays');
    assert.ok((await readFile(kept)).equals(bytes));
    assert.ok(rig.events.some((e) => e.type === 'recovered' && e.reason === result.recovered!.reason));
  });

  it('a failed close (after a good sync) keeps the placed image for recovery too, and says so', async () => {
    const recovery = path.join(dir, 'recovery');
    const out = path.join(dir, 'out');
    const bytes = Buffer.concat([TINY_PNG, Buffer.alloc(64 * 1024)]);
    const api = scriptedApi(async (_request, sink) => {
      makeCloseFail((sink as ReportingSink).staging);
      const writer = await sink.open(0);
      await writer.write(bytes);
      await writer.close();
      return { images: [{ index: 0, mediaType: 'image/png' }], usage: { cost_rub: 3, balance: 97 } };
    });
    const rig = newService(undefined as never, [testModel({ id: 'aurora-1' })], recovery, { api: async () => api });
    const result = await rig.service.run({ request: { model: 'aurora-1', prompt: 'close fails', n: 1 }, output: { directory: out, pattern: 'img' } });
    assert.deepEqual(
      result.files.map((f) => path.basename(f)),
      ['img.png'],
      'the workspace file stays',
    );
    assert.ok(result.recovered, 'kept for recovery');
    assert.match(result.recovered.reason, /EBADF.*close/);
    assert.match(result.recovered.reason, /may not be on disk/);
    const [kept] = result.recovered.files;
    assert.ok(kept && existsSync(kept), 'the staged copy stays');
    assert.ok((await readFile(kept)).equals(bytes));
    assert.ok(rig.events.some((e) => e.type === 'recovered' && e.reason === result.recovered!.reason));
  });
});
