// Base URL normalisation and output folder confinement.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { isLoopbackHost, normalizeBaseUrl } from '../../src/core/baseUrl';
import { ValidationError } from '../../src/core/errors';
import { isInside, resolveOutputDirectory } from '../../src/core/outputPath';

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

describe('outputPath', () => {
  const root = path.resolve('/work/ws');
  const resolve = (configured: string, trustedSource = false, workspaceFolder: string | null = root) =>
    resolveOutputDirectory({ configured, trustedSource, workspaceFolder: workspaceFolder ?? undefined });
  const refuses = (fn: () => unknown, what: RegExp) =>
    assert.throws(fn, (e: unknown) => e instanceof ValidationError && e.field === 'outputDirectory' && what.test(e.message));

  it('relative folders resolve inside the workspace', () => {
    assert.equal(resolve('generated-images'), path.join(root, 'generated-images'));
    assert.equal(resolve('a/b/../c'), path.join(root, 'a', 'c'));
    assert.equal(resolve('.'), root);
    assert.equal(resolve(''), path.join(root, 'generated-images'), 'empty means the default');
    assert.equal(resolve('..data'), path.join(root, '..data'), 'a name starting with dots is not an escape');
    assert.equal(resolve('x/..hidden'), path.join(root, 'x', '..hidden'));
  });
  it('".." escapes are refused, also from a trusted source', () => {
    for (const configured of ['..', '../x', 'a/../../x', './../../etc']) {
      refuses(() => resolve(configured), /outside the workspace/);
      refuses(() => resolve(configured, true), /outside the workspace/);
    }
  });
  it('absolute folders only from a trusted source', () => {
    refuses(() => resolve('/tmp/out'), /only your user settings/);
    refuses(() => resolve('~/Pictures'), /only your user settings/);
    assert.equal(resolve('/tmp/out', true), path.resolve('/tmp/out'));
    assert.equal(resolve('~/Pictures', true), path.resolve(process.env.HOME ?? '~', 'Pictures'));
  });
  it('a relative folder without a workspace is refused', () => refuses(() => resolve('x', false, null), /No workspace folder/));
  it('isInside', () => {
    assert.ok(isInside('/a/b', '/a/b'));
    assert.ok(isInside('/a/b', '/a/b/c/d'));
    assert.ok(!isInside('/a/b', '/a/bc'));
    assert.ok(!isInside('/a/b', '/a'));
    assert.ok(!isInside('/a/b', '/a/b/../c'));
    assert.ok(isInside('/a/b', '/a/b/..c'));
  });
});
