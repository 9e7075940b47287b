// Base URL normalisation and output folder confinement.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLoopbackHost, normalizeBaseUrl } from '../../src/core/baseUrl';
import { ValidationError } from '../../src/core/errors';
import { confine, isInside, resolveOutputDirectory } from '../../src/core/outputPath';

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
    assert.rejects(
      async () => fn(),
      (e: unknown) => e instanceof ValidationError && e.field === 'outputDirectory' && what.test(e.message),
    );

  it('relative folders resolve inside the workspace', async () => {
    assert.equal(await resolve('generated-images'), path.join(root, 'generated-images'));
    assert.equal(await resolve('a/b/../c'), path.join(root, 'a', 'c'));
    assert.equal(await resolve('.'), root);
    assert.equal(await resolve(''), path.join(root, 'generated-images'), 'empty means the default');
    assert.equal(await resolve('..data'), path.join(root, '..data'), 'a name starting with dots is not an escape');
    assert.equal(await resolve('x/..hidden'), path.join(root, 'x', '..hidden'));
  });
  it('".." escapes are refused, also from a trusted source', async () => {
    for (const configured of ['..', '../x', 'a/../../x', './../../etc']) {
      await refuses(() => resolve(configured), /outside the workspace/);
      await refuses(() => resolve(configured, true), /outside the workspace/);
    }
  });
  it('absolute folders only from a trusted source', async () => {
    await refuses(() => resolve('/tmp/out'), /only your user settings/);
    await refuses(() => resolve('~/Pictures'), /only your user settings/);
    assert.equal(await resolve('/tmp/out', true), path.resolve('/tmp/out'));
    assert.equal(await resolve('~/Pictures', true), path.join(os.homedir(), 'Pictures'));
  });
  it('~ is the home folder of os.homedir(), also where HOME is not set (Windows)', async () => {
    const home = process.env.HOME;
    delete process.env.HOME;
    try {
      const resolved = await resolve('~/Pictures', true);
      assert.equal(resolved, path.join(os.homedir(), 'Pictures'));
      assert.ok(!resolved.includes('~'), resolved);
    } finally {
      process.env.HOME = home;
    }
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
      // What a cloned repository can ship: links with the names of output folders.
      await fs.symlink(outside, path.join(workspace, 'generated-images'), 'dir');
      await fs.symlink(path.join(workspace, 'art', 'real'), path.join(workspace, 'art', 'inside'), 'dir');
      await fs.symlink(path.join(outside, 'not-yet'), path.join(workspace, 'dangling'), 'dir');
    });
    after(() => fs.rm(dir, { recursive: true, force: true }));
    const inWorkspace = (configured: string, trustedSource = false) => resolveOutputDirectory({ configured, trustedSource, workspaceFolder: workspace });

    it('a generated-images link shipped by the repository that leads outside is refused, from any source', async () => {
      for (const trusted of [false, true]) {
        await refuses(() => inWorkspace('generated-images', trusted), /symbolic link/);
        await refuses(() => inWorkspace('', trusted), /symbolic link/);
        await refuses(() => inWorkspace('generated-images/deeper/still', trusted), /symbolic link/);
      }
      await refuses(() => inWorkspace('dangling/new'), /symbolic link/);
    });

    it('a link that stays inside the workspace is followed; folders not made yet are fine', async () => {
      assert.equal(await inWorkspace('art/inside'), path.join(workspace, 'art', 'inside'));
      assert.equal(await inWorkspace('art/inside/new/folder'), path.join(workspace, 'art', 'inside', 'new', 'folder'));
      assert.equal(await inWorkspace('not/made/yet'), path.join(workspace, 'not', 'made', 'yet'));
    });

    it('confine: the one check, with the real path and whether a link led out', async () => {
      assert.deepEqual(await confine(workspace, 'art/inside/x.png'), { inside: true, real: path.join(workspace, 'art', 'real', 'x.png') });
      assert.deepEqual(await confine(workspace, path.join(workspace, 'generated-images', 'x.png')), { inside: false, throughLink: true });
      assert.deepEqual(await confine(workspace, '../outside'), { inside: false, throughLink: false });
      assert.deepEqual(await confine(path.join(workspace, 'art', 'inside'), 'x.png'), { inside: true, real: path.join(workspace, 'art', 'real', 'x.png') });
    });
  });
});
