// Base URL normalisation and output folder confinement.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLoopbackHost, normalizeBaseUrl } from '../../src/core/gateway/baseUrl';
import { ValidationError } from '../../src/core/gateway/errors';
import { confine, isInside } from '../../src/core/files/outputPath';

describe('baseUrl', () => {
  it('normalises trailing slashes, /v1, query and hash', () => {
    const cases: [string, string][] = [
      ['https://gw.example', 'https://gw.example'],
      ['https://gw.example/', 'https://gw.example'],
      ['https://gw.example/v1', 'https://gw.example'],
      ['https://gw.example/v1/', 'https://gw.example'],
      ['https://gw.example//v1//', 'https://gw.example'],
      ['https://gw.example/api/v1', 'https://gw.example/api'],
      ['https://gw.example/api//v1', 'https://gw.example/api'],
      ['https://gw.example/v1x', 'https://gw.example/v1x'],
      ['  https://GW.Example:8443/base/?q=1#frag ', 'https://gw.example:8443/base'],
      ['http://127.0.0.1:9000/v1', 'http://127.0.0.1:9000'],
      ['http://localhost/', 'http://localhost'],
      ['http://[::1]:81', 'http://[::1]:81'],
    ];
    for (const [input, expected] of cases) assert.equal(normalizeBaseUrl(input), expected, input);
  });
  it('refuses http off loopback, other schemes, credentials, junk and empty', () => {
    for (const input of [
      'http://gw.example',
      'http://192.168.1.2',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io',
      'ftp://gw.example',
      'ws://localhost',
      'https://user:pw@gw.example',
      'gw.example',
      '',
      '   ',
    ]) {
      assert.throws(
        () => normalizeBaseUrl(input),
        (e: unknown) => e instanceof ValidationError && e.field === 'baseUrl',
        input,
      );
    }
  });
  it('isLoopbackHost', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['10.0.0.1', 'example.com', '128.0.0.1', 'localhost.example', '::2']) assert.ok(!isLoopbackHost(h), h);
  });
});

// The output folder's decision (decideOutputFolder) is tested in outputFolder.test.ts.
describe('outputPath', () => {
  it('isInside', () => {
    assert.ok(isInside('/a/b', '/a/b'));
    assert.ok(isInside('/a/b', '/a/b/c/d'));
    assert.ok(!isInside('/a/b', '/a/bc'));
    assert.ok(!isInside('/a/b', '/a'));
    assert.ok(!isInside('/a/b', '/a/b/../c'));
    assert.ok(isInside('/a/b', '/a/b/..c'));
  });

  describe('with real symbolic links', () => {
    let dir: string;
    let workspace: string;
    let outside: string;
    before(async () => {
      dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gwi-links-')));
      workspace = path.join(dir, 'workspace');
      outside = path.join(dir, 'outside');
      await fs.mkdir(path.join(workspace, 'art', 'real'), { recursive: true });
      await fs.mkdir(outside);
      await fs.symlink(outside, path.join(workspace, 'generated-images'), 'dir');
      await fs.symlink(path.join(workspace, 'art', 'real'), path.join(workspace, 'art', 'inside'), 'dir');
    });
    after(() => fs.rm(dir, { recursive: true, force: true }));

    it('confine: the one check, with the real path and whether a link led out', async () => {
      assert.deepEqual(await confine(workspace, 'art/inside/x.png'), { inside: true, real: path.join(workspace, 'art', 'real', 'x.png') });
      assert.deepEqual(await confine(workspace, path.join(workspace, 'generated-images', 'x.png')), { inside: false, throughLink: true });
      assert.deepEqual(await confine(workspace, '../outside'), { inside: false, throughLink: false });
      assert.deepEqual(await confine(path.join(workspace, 'art', 'inside'), 'x.png'), { inside: true, real: path.join(workspace, 'art', 'real', 'x.png') });
    });
  });
});
