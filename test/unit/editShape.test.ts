import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { aspectDefaultFor, leavesAspectOpen, withAspectDefault } from '../../src/jobs/editShape';
import type { GenerationRequest } from '../../src/core/gateway/types';
import { paintPng } from '../../tools/emulator/png';
import { removeDir, tempDir, writePng } from './support/gateway';
import { testModel } from './support/models';

describe('edits keep their shape', () => {
  let dir: string;
  let photo: string;
  const model = testModel({ id: 'edit', supported_aspect_ratios: ['1:1', '16:9', '9:16', '4:3', '3:4'] });

  before(async () => {
    dir = await tempDir();
    photo = await writePng(dir, 'photo.png', paintPng({ width: 400, height: 300, transparent: false, identity: 'photo' }));
  });
  after(() => removeDir(dir));

  it('finds the nearest supported ratio from the header and says why', async () => {
    assert.deepEqual(await aspectDefaultFor(model, photo), { ratio: '4:3', source: 'photo.png', width: 400, height: 300, why: 'matches photo.png, 4:3' });
  });

  it('gives nothing for a model without ratios or an unreadable file', async () => {
    assert.equal(await aspectDefaultFor(testModel({ id: 'none', supported_aspect_ratios: [] }), photo), undefined);
    assert.equal(await aspectDefaultFor(model, path.join(dir, 'missing.png')), undefined);
  });

  it('fills the ratio only where the request leaves it open', async () => {
    const base: GenerationRequest = { model: 'edit', prompt: 'p' };
    assert.equal((await withAspectDefault(base, model, photo)).aspect_ratio, '4:3');
    assert.equal((await withAspectDefault({ ...base, aspect_ratio: '1:1' }, model, photo)).aspect_ratio, '1:1');
    assert.equal((await withAspectDefault({ ...base, size: '640x480' }, model, photo)).aspect_ratio, undefined);
    assert.equal((await withAspectDefault({ ...base, size: '2K' }, model, photo)).aspect_ratio, '4:3');
    assert.equal((await withAspectDefault(base, testModel({ id: 'none', supported_aspect_ratios: [] }), photo)).aspect_ratio, undefined);
    assert.equal(leavesAspectOpen({ size: '1024x1024' }), false);
  });
});
