// Transparency through the job service against the emulator: an alpha format is chosen and sent,
// transparent + jpeg is refused before any request, an opaque result is reported and kept.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import { readImageHeaderFile } from '../../src/core/images/imageHeader';
import type { GenerationRequest } from '../../src/core/gateway/types';
import type { ImageApi } from '../../src/jobs/jobTypes';
import { caught, gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';

describe('transparency through the job service', () => {
  const gw = gatewaySuite({ models: true });
  const sent: GenerationRequest[] = [];
  /** The real gw.client, recording what is sent. */
  const api: ImageApi = {
    generate: (request, sink, options) => (sent.push(request), gw.client.generate(request, sink, options)),
    generateWithReferences: (request, files, sink, options) => gw.client.generateWithReferences(request, files, sink, options),
    edit: (request, files, sink, options) => gw.client.edit(request, files, sink, options),
  };

  beforeEach(() => {
    sent.length = 0;
  });

  const run = (request: Partial<GenerationRequest>, out: string) => {
    const rig = newService(gw.client, gw.models, path.join(gw.dir, 'recovery'), { api: async () => api });
    const job = {
      request: { model: 'prism-2', prompt: 'a logo', size: SMALL, ...request },
      output: { directory: path.join(gw.dir, out), pattern: 'img-{index}' },
    };
    return { rig, result: rig.service.run(job) };
  };

  it('sends png for a transparent background and saves an image with alpha', async () => {
    const { rig, result } = run({ background: 'transparent' }, 'alpha');
    const { files, opaque } = await result;
    assert.equal(sent[0]!.output_format, 'png');
    assert.equal(opaque, undefined);
    assert.equal((await readImageHeaderFile(files[0]!))?.alpha, true);
    assert.equal(rig.events.filter((e) => e.type === 'opaque-result').length, 0);
  });

  it('refuses transparent + jpeg before sending anything', async () => {
    const { result } = run({ background: 'transparent', output_format: 'jpeg' }, 'jpeg');
    const error = await caught<ValidationError>(() => result);
    assert.ok(error instanceof ValidationError);
    assert.equal(error.field, 'output_format');
    assert.equal(paidRequests(gw.emu).length, 0);
  });

  it('reports an opaque result of a transparent request and keeps the file', async () => {
    gw.emu.state.armFault({ fault: 'opaque-image' });
    const { rig, result } = run({ background: 'transparent' }, 'opaque');
    const { files, opaque } = await result;
    assert.deepEqual(opaque, files);
    assert.ok(existsSync(files[0]!));
    assert.equal((await readImageHeaderFile(files[0]!))?.alpha, false);
    assert.deepEqual(
      rig.events.find((e) => e.type === 'opaque-result'),
      { type: 'opaque-result', files },
    );
  });

  it('does not judge requests that did not ask for transparency', async () => {
    const { result } = run({ background: 'opaque' }, 'plain');
    assert.equal((await result).opaque, undefined);
    assert.equal(sent[0]!.output_format, undefined);
  });
});
