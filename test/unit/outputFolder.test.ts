// The one decision of every output folder (core/files/outputFolder.ts), with real symbolic links in a
// temporary folder: for each origin (argument, user settings, workspace settings, style, agent) and
// base (the workspace folder, an edit's source folder, one outside).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import { decideOutputFolder, OutputFolderError, type OutputFolderOrigin, type OutputFolderRefusal } from '../../src/core/files/outputFolder';

const ORIGINS: OutputFolderOrigin[] = ['argument', 'user-settings', 'workspace-settings', 'style', 'agent'];
const TRUSTED: OutputFolderOrigin[] = ['argument', 'user-settings'];
const CONFINED: OutputFolderOrigin[] = ['workspace-settings', 'style', 'agent'];

describe('decideOutputFolder: every output folder, one rule (real symbolic links)', () => {
  let dir: string;
  let ws: string;
  let outside: string;
  let other: string;

  before(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gwi-output-folders-')));
    ws = path.join(dir, 'ws');
    outside = path.join(dir, 'outside');
    other = path.join(dir, 'other-folder');
    await fs.mkdir(path.join(ws, 'art', 'real'), { recursive: true });
    await fs.mkdir(path.join(ws, 'photos'), { recursive: true });
    await fs.mkdir(outside);
    await fs.mkdir(other);
    // What a cloned repository can ship: links with the names of output folders.
    await fs.symlink(outside, path.join(ws, 'generated-images'), 'dir');
    await fs.symlink(path.join(outside, 'not-yet'), path.join(ws, 'dangling'), 'dir');
    await fs.symlink(path.join(ws, 'chain-2'), path.join(ws, 'chain-1'), 'dir');
    await fs.symlink(outside, path.join(ws, 'chain-2'), 'dir');
    await fs.symlink('art/real', path.join(ws, 'inside-1'), 'dir');
    await fs.symlink('inside-1', path.join(ws, 'inside-2'), 'dir');
    await fs.symlink(outside, path.join(ws, 'photos', 'shared'), 'dir');
    await fs.symlink(other, path.join(ws, 'to-other'), 'dir');
    // The workspace opened through a link of the person's own (a home folder on another disk).
    await fs.symlink(ws, path.join(dir, 'ws-link'), 'dir');
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  const decide = (value: string, origin: OutputFolderOrigin, base: string | undefined = ws, workspaceFolders = [ws]) =>
    decideOutputFolder({ value, origin, base, workspaceFolders, field: `field-of-${origin}` });
  async function refused(value: string, origin: OutputFolderOrigin, reason: OutputFolderRefusal, base?: string, workspaceFolders?: string[]) {
    const error = await decide(value, origin, base ?? ws, workspaceFolders).then(
      (folder) => assert.fail(`${origin} ${value}: decided ${folder}`),
      (e: unknown) => e,
    );
    assert.ok(error instanceof OutputFolderError && error instanceof ValidationError, String(error));
    assert.equal(error.reason, reason, `${origin} ${value}: ${error.message}`);
    assert.equal(error.field, `field-of-${origin}`);
    assert.ok(error.message.startsWith(`"field-of-${origin}": `), error.message);
    return error;
  }

  it('a relative folder is taken from the workspace folder, for every origin', async () => {
    for (const origin of ORIGINS) {
      assert.equal(await decide('generated', origin), path.join(ws, 'generated'), origin);
      assert.equal(await decide('new/deeper', origin), path.join(ws, 'new', 'deeper'), origin);
      assert.equal(await decide('.', origin), ws, origin);
      assert.equal(await decide('..data', origin), path.join(ws, '..data'), `${origin}: a name starting with dots is not an escape`);
    }
  });

  it('`..` segments: those that stay inside are resolved, those that leave are refused from every origin', async () => {
    for (const origin of ORIGINS) {
      assert.equal(await decide('a/b/../c', origin), path.join(ws, 'a', 'c'), origin);
      // `..` after a link is taken by name: the folder written is ws/x, never the link's parent.
      assert.equal(await decide('generated-images/../x', origin), path.join(ws, 'x'), origin);
      for (const escape of ['..', '../x', 'a/../../x', './../../etc']) await refused(escape, origin, 'outside');
    }
    const relative = await refused('../x', 'user-settings', 'outside');
    assert.match(relative.message, /a relative folder must stay inside it/);
  });

  it('a link shipped in the repository that leads outside is refused from every origin, relative or absolute', async () => {
    for (const origin of ORIGINS) {
      for (const value of ['generated-images', 'generated-images/deeper/still', path.join(ws, 'generated-images')]) {
        const error = await refused(value, origin, 'through-link');
        assert.match(error.message, /through a symbolic link \(to .*outside/);
      }
    }
  });

  it('a link whose target does not exist yet is followed (making the folder would make it there)', async () => {
    for (const origin of ORIGINS) await refused('dangling/new', origin, 'through-link');
    await fs.access(path.join(outside, 'not-yet')).then(
      () => assert.fail('the target was made'),
      () => undefined,
    );
  });

  it('a chain of links: out is refused, in is followed to its real folder', async () => {
    for (const origin of ORIGINS) {
      await refused('chain-1/x', origin, 'through-link');
      assert.equal(await decide('inside-2/x', origin), path.join(ws, 'art', 'real', 'x'), origin);
    }
  });

  it('an absolute folder inside the workspace: any origin; outside: only the user settings and a command argument', async () => {
    for (const origin of ORIGINS) assert.equal(await decide(path.join(ws, 'art'), origin), path.join(ws, 'art'), origin);
    for (const origin of TRUSTED) assert.equal(await decide(path.join(outside, 'mine'), origin), path.join(outside, 'mine'), origin);
    const messages = new Set<string>();
    for (const origin of CONFINED) messages.add((await refused(path.join(outside, 'mine'), origin, 'outside')).message.replace(/^"[^"]+": /, ''));
    assert.equal(messages.size, CONFINED.length, 'each origin is told what it may do');
    assert.match((await refused(outside, 'workspace-settings', 'outside')).message, /only your user settings may name one elsewhere/);
    assert.match((await refused(outside, 'agent', 'outside')).message, new RegExp(`agents may only write inside ${ws.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}`));
  });

  it('an absolute folder outside is returned as its real path (links resolved)', async () => {
    const viaLink = path.join(ws, 'generated-images');
    // The person's own absolute folder whose parent is a link of theirs: allowed, written where it leads.
    await fs.symlink(outside, path.join(dir, 'mine-link'), 'dir');
    assert.equal(await decide(path.join(dir, 'mine-link', 'x'), 'argument'), path.join(outside, 'x'));
    // ...but the same place named through the workspace's link is refused.
    await refused(path.join(viaLink, 'x'), 'argument', 'through-link');
  });

  it('~ is the home folder: the person may name it; confined origins may not', async () => {
    for (const origin of TRUSTED) assert.equal(await decide('~/Pictures', origin), path.join(os.homedir(), 'Pictures'), origin);
    for (const origin of CONFINED) await refused('~/Pictures', origin, 'outside');
    // os.homedir(), also where HOME is not set (Windows).
    const home = process.env.HOME;
    delete process.env.HOME;
    try {
      const resolved = await decide('~/Pictures', 'user-settings');
      assert.equal(resolved, path.join(os.homedir(), 'Pictures'));
      assert.ok(!resolved.includes('~'), resolved);
    } finally {
      process.env.HOME = home;
    }
  });

  it('an empty value, and a relative value without a workspace folder, are refused with what to give', async () => {
    for (const origin of ORIGINS) await refused('  ', origin, 'empty');
    const error = await decideOutputFolder({ value: 'x', origin: 'argument', workspaceFolders: [], field: 'outputDirectory' }).catch((e: unknown) => e);
    assert.ok(error instanceof OutputFolderError && error.reason === 'no-workspace', String(error));
    assert.match(error.message, /^"outputDirectory": x is a relative folder, and no workspace folder is open/);
    // Without a workspace the person's absolute folder still works.
    assert.equal(await decideOutputFolder({ value: outside, origin: 'argument', workspaceFolders: [], field: 'outputDirectory' }), outside);
  });

  describe("an edit's base: the first source's folder", () => {
    const photos = () => path.join(ws, 'photos');

    it('a relative argument is taken from the source folder and confined', async () => {
      assert.equal(await decide('edits', 'argument', photos()), path.join(photos(), 'edits'));
      assert.equal(await decide('../art', 'argument', photos()), path.join(ws, 'art'));
      await refused('shared', 'argument', 'through-link', photos());
      await refused('shared/deeper', 'argument', 'through-link', photos());
      await refused('../../elsewhere', 'argument', 'outside', photos());
    });

    it('next to a source whose folder is a link out: refused (the folder as named, confined)', async () => {
      const source = path.join(photos(), 'shared', 'photo.png');
      await refused(path.dirname(source), 'argument', 'through-link', undefined);
    });

    it("a source outside the workspace (the caller's own choice): next to it, and relative to it", async () => {
      assert.equal(await decide(outside, 'argument', outside), outside);
      assert.equal(await decide('edits', 'argument', outside), path.join(outside, 'edits'));
      // An agent's base is never outside: refused all the same.
      await refused('edits', 'agent', 'outside', outside);
    });
  });

  it('several workspace folders: a link from one to another stays inside the workspace', async () => {
    await refused('to-other/x', 'workspace-settings', 'through-link');
    assert.equal(await decide('to-other/x', 'workspace-settings', ws, [ws, other]), path.join(other, 'x'));
    assert.equal(await decide(path.join(other, 'y'), 'style', ws, [ws, other]), path.join(other, 'y'));
  });

  it("a workspace folder opened through the person's own link: the real folder, written under the folder's own name", async () => {
    const opened = path.join(dir, 'ws-link');
    assert.equal(await decide('inside-1/x', 'workspace-settings', opened, [opened]), path.join(opened, 'art', 'real', 'x'));
    assert.equal(await decide(path.join(ws, 'art'), 'agent', opened, [opened]), path.join(opened, 'art'), 'named by its real path');
    await refused('generated-images', 'workspace-settings', 'through-link', opened, [opened]);
  });
});
